"""`trace-bench sniprec build`: SnipRec's unit store and vectors for a whole knowledge base, ahead of a run.

    trace-bench sniprec build --kb DIR                                # rules snippets + MiniLM vectors
    trace-bench sniprec build --data DIR --kind llm --llm SPEC        # App. C.1 with an LLM (resumable)
    trace-bench sniprec build --kb DIR --kind sentence --no-encode    # units only

`trace-bench run sniprec` builds what a run needs on the fly (the POIs of its pools); building first is
worth it before `--num-proc N` (workers then only read) and for a catalogue-scale LLM extraction, which this
command runs resumably with progress and ends with its LLM calls, requests, failures and time. The LLM
decoding defaults are `trace-bench run`'s, so a store built here is the one a run with the same options reads.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from baselines.llm import (
    APP_F_MAX_NEW_TOKENS,
    APP_F_TEMPERATURE,
    REASONING_MAX_NEW_TOKENS,
    REASONING_TEMPERATURE,
    app_f_decoding,
)
from trace_bench.errors import UsageError
from trace_bench.options import number_in
from trace_llm import add_llm_argument


def register(subparsers: Any) -> None:
    from baselines.sniprec.llm_snippets import POST_CHECK_MODES  # light: no model or numpy-heavy imports
    from baselines.sniprec.units import UNIT_KINDS
    from trace_llm.base import DEFAULT_MAX_REPAIRS

    parser = subparsers.add_parser(
        "sniprec", help="SnipRec: build a knowledge base's unit store ahead of runs"
    )
    sub = parser.add_subparsers(dest="sniprec_command", metavar="ACTION", required=True)
    p = sub.add_parser(
        "build",
        help="extract (and encode) the units of every POI of a knowledge base",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--kb", type=Path, metavar="DIR", help="a knowledge base folder")
    src.add_argument("--data", type=Path, metavar="DIR", help="a Trace data directory (its knowledge_base/)")
    p.add_argument("--kind", choices=UNIT_KINDS, default="rules", help="units to build (default: rules)")
    p.add_argument(
        "--encoder",
        default=None,
        help="sentence-transformers id or folder (default: all-MiniLM-L6-v2, the packaged copy)",
    )
    p.add_argument("--no-encode", action="store_true", help="units only, no vectors")
    p.add_argument(
        "--encoder-threads",
        type=number_in(int, 1),
        default=None,
        help="torch threads while encoding (default: torch's; 1 is faster on a busy machine)",
    )
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="default: the trace-bench cache folder ($TRACE_BENCH_CACHE, else ~/.cache/trace-bench)",
    )
    p.add_argument(
        "--post-check", choices=POST_CHECK_MODES, default="flagged", help="LLM name post-check scope"
    )
    p.add_argument(
        "--json-repairs",
        type=number_in(int, 0),
        default=DEFAULT_MAX_REPAIRS,
        help=f"retries of an invalid C.1 reply (default: {DEFAULT_MAX_REPAIRS}; a run's json_repairs)",
    )
    group = add_llm_argument(p, default=None)
    for action in group._group_actions:  # None: App. F's for the --llm model (baselines.llm.app_f_decoding)
        if action.dest == "temperature":
            action.help = (
                f"0 = greedy, at most 5 (default: App. F's, {APP_F_TEMPERATURE}; "
                f"{REASONING_TEMPERATURE} for a reasoning model)"
            )
        elif action.dest == "max_new_tokens":
            action.help = (
                f"caps each prompt's own budget (default: App. F's, {APP_F_MAX_NEW_TOKENS}; "
                f"{REASONING_MAX_NEW_TOKENS} for a reasoning model)"
            )
    p.set_defaults(func=build, temperature=None, max_new_tokens=None)


def build(args: argparse.Namespace) -> int:
    """Build the store; TraceDataError / LLMError reach `trace-bench`'s one-line error (exit code 2)."""
    from baselines.sniprec.index import DEFAULT_ENCODER, UnitIndex
    from baselines.sniprec.llm_snippets import LLMExtractor
    from baselines.sniprec.prompts import PromptRunner
    from baselines.sniprec.store import RulesExtractor, UnitStore
    from trace_dataset.datadir import kb_dir
    from trace_dataset.kb.store import KnowledgeBase
    from trace_llm import llm_from_args

    if args.kind == "llm" and not args.llm:
        raise UsageError("--kind llm needs --llm SPEC")
    if args.kind != "llm" and args.llm:
        raise UsageError(f"--llm is for --kind llm (the {args.kind} units use no LLM)")
    kb = KnowledgeBase.load(args.kb if args.kb else kb_dir(args.data))
    args.temperature, args.max_new_tokens = app_f_decoding(args.llm, args.temperature, args.max_new_tokens)
    llm = llm_from_args(args) if args.kind == "llm" else None
    try:
        extractor = (
            LLMExtractor(PromptRunner(llm, args.json_repairs), args.post_check)
            if llm is not None
            else RulesExtractor(args.kind)
        )
        store = UnitStore(kb, extractor, args.cache_dir)
        ids = sorted(kb.pois)
        todo = len(store.missing(ids))
        t = time.perf_counter()
        if args.no_encode:
            store.ensure(ids, progress=True)
        else:
            UnitIndex(
                store, args.encoder or DEFAULT_ENCODER, cache_dir=args.cache_dir, threads=args.encoder_threads
            ).ensure(ids, progress=True)
        seconds = time.perf_counter() - t
        summary = store.summary()
        print(
            f"{args.kind} units of {len(ids)} POIs ({todo} extracted now, {seconds:.1f} s): "
            f"{summary['n_units']} units ({summary['n_review_units']} from reviews) in {store.folder}"
        )
        if llm is not None:
            print(f"LLM {llm.describe()['model']}: this run {json.dumps(llm.usage, sort_keys=True)}")
            totals = summary["totals"]
            print(
                f"store totals: {totals.get('llm_calls', 0)} LLM calls for {totals.get('reviews', 0)} reviews, "
                f"failed reviews {totals.get('failed_reviews', 0)}, post-checked {totals.get('name_checked', 0)}, "
                f"dropped for names {totals.get('name_dropped', 0)}, {totals.get('seconds', 0):.0f} s of extraction"
            )
    finally:
        if llm is not None:
            llm.close()
    return 0
