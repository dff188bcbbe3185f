"""`trace-bench core ...`: CoRE on a predictions file, its meta-evaluation, the human-ratings converter.

    trace-bench core score --data DIR --predictions FILE --out DIR [--llm SPEC] [--limit N] [--no-debate]
    trace-bench core meta --scores DIR/scores.jsonl --human HUMAN.jsonl [--json] [--out FILE] [--plots DIR]
    trace-bench core human --annotations ANNOTATIONS.jsonl --out HUMAN.jsonl [--likert-naturalness]
    trace-bench core log --data DIR --predictions FILE --dialogue ID [--evidence]
    trace-bench core reliability --kind core --run DIR [--run DIR ...] [--human FILE] --llm SPEC --k 3 --out DIR
    trace-bench core reliability --kind judge --data DIR --predictions FILE [...] --llm SPEC --k 3 --out DIR

Heavy imports stay inside the commands so that `trace-bench --help` is fast.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from trace_bench.errors import UsageError
from trace_bench.options import number_in
from trace_dataset.constants import SPLITS
from trace_dataset.shards import add_shard_argument
from trace_metrics.core.scoring import CORE_LLM_OPTIONS, DEFAULT_DEBATE_TOKENS, DEFAULT_FACTOR_TOKENS


def register(subparsers: Any) -> None:
    from trace_llm import add_llm_argument

    parser = subparsers.add_parser(
        "core",
        help="CoRE: 12-factor LLM evaluation with a multi-agent debate, and its meta-evaluation",
        description="CoRE (Chen et al., 2026) on Trace: score conversation logs on twelve user-centric factors "
        "(0-4) and a debated overall score (0-100); measure agreement with human ratings.",
    )
    sub = parser.add_subparsers(dest="core_command", metavar="ACTION", required=True)

    score = sub.add_parser("score", help="rate the dialogues of a predictions file (resumable)")
    _log_inputs(score)
    score.add_argument("--out", required=True, type=Path, help="output folder (resumed when it exists)")
    score.add_argument("--limit", type=_count(1), default=None, help="only the first N dialogues")
    score.add_argument("--ids", default=None, help="only these dialogue ids (comma-separated)")
    add_shard_argument(score)
    score.add_argument(
        "--max-retries",
        type=_count(0),
        default=2,
        help="retries of a reply without a valid rating (default 2)",
    )
    score.add_argument(
        "--max-repairs", type=_count(0), default=2, help="JSON repairs of a debater's reply (default 2)"
    )
    score.add_argument("--rounds", type=_count(1), default=4, help="maximum debate rounds (default 4)")
    score.add_argument("--no-debate", action="store_true", help="factors only, no overall score")
    score.add_argument(
        "--factors", default=None, help="rate only these factors (comma-separated ids; default all twelve)"
    )
    score.add_argument(
        "--debate-max-new-tokens",
        type=_count(1),
        default=DEFAULT_DEBATE_TOKENS,
        help=f"tokens per debate reply (default {DEFAULT_DEBATE_TOKENS})",
    )
    score.add_argument("--chunk", type=_count(1), default=16, help="dialogues scored per batch (default 16)")
    score.add_argument(
        "--prompts", type=Path, default=None, help="a prompts folder replacing the packaged one"
    )
    score.add_argument("--overwrite", action="store_true", help="discard what --out holds and start over")
    add_llm_argument(score, max_new_tokens=DEFAULT_FACTOR_TOKENS, options=CORE_LLM_OPTIONS)
    score.set_defaults(func=_score)

    meta = sub.add_parser("meta", help="agreement of CoRE scores with human ratings (QWK, Spearman, Kendall)")
    meta.add_argument(
        "--scores", required=True, type=Path, help="CoRE's scores.jsonl ({id, factor, score} rows)"
    )
    meta.add_argument(
        "--human", required=True, type=Path, help="human ratings, same row shape (see `core human`)"
    )
    meta.add_argument("--json", action="store_true", help="print the full result as JSON")
    meta.add_argument("--out", type=Path, default=None, help="also write the result JSON here")
    meta.add_argument("--plots", type=Path, default=None, help="write the coupling and agreement PNGs here")
    meta.set_defaults(func=_meta)

    human = sub.add_parser(
        "human", help="convert annotation rows (their 'core' ratings) to {id, factor, score} rows"
    )
    human.add_argument(
        "--annotations", required=True, type=Path, help="annotation JSON lines (trace_metrics.lib.human)"
    )
    human.add_argument("--out", required=True, type=Path, help="JSON lines to write")
    human.add_argument(
        "--likert-naturalness",
        action="store_true",
        help="use the naturalness Likert (1-5, minus 1) where a row has no core naturalness",
    )
    human.set_defaults(func=_human)

    _register_reliability(sub)

    show = sub.add_parser("log", help="print one dialogue's conversation log as CoRE's prompts show it")
    _log_inputs(show)
    show.add_argument("--dialogue", required=True, help="the dialogue id")
    show.add_argument("--evidence", action="store_true", help="with the cited reviews (the Groundness view)")
    show.set_defaults(func=_show)


def _register_reliability(sub: Any) -> None:
    from trace_llm import add_llm_argument
    from trace_metrics.core.reliability import DEFAULT_K, MIN_K

    rel = sub.add_parser(
        "reliability",
        help="how far a judge's ratings can be trusted: repeats, order, length, self-preference, humans",
        description="Re-rate the items of CoRE runs (--kind core) or the LLM judge's items of predictions files "
        "(--kind judge): repeat consistency (ICC(1,1)), order flips, length bias with a length-controlled "
        "score, self-preference, agreement with human ratings; a verdict per factor (docs/metrics_models.md).",
    )
    rel.add_argument("--kind", choices=("core", "judge"), default="core", help="whose ratings (default core)")
    rel.add_argument(
        "--run", type=Path, action="append", default=[], help="a CoRE output folder (repeatable)"
    )
    rel.add_argument("--data", type=Path, default=None, help="Trace data directory (--kind judge)")
    rel.add_argument(
        "--predictions",
        type=Path,
        action="append",
        default=[],
        help="a predictions file (repeatable): the judge's items; for both kinds, its run metadata names the "
        "rated system's model (self-preference)",
    )
    rel.add_argument("--split", default="test", choices=SPLITS)
    rel.add_argument("--limit", type=_count(1), default=None, help="--kind judge: only the first N dialogues")
    rel.add_argument(
        "--k",
        type=_count(MIN_K),
        default=DEFAULT_K,
        help=f"ratings per item, the run's own included (default {DEFAULT_K})",
    )
    rel.add_argument("--human", type=Path, default=None, help="--kind core: human ratings (see `core human`)")
    rel.add_argument("--prompts", type=Path, default=None, help="--kind core: the runs' prompts folder")
    rel.add_argument(
        "--out", type=Path, default=None, help="output folder (default: the first run's reliability/)"
    )
    add_llm_argument(rel, max_new_tokens=DEFAULT_FACTOR_TOKENS, options=CORE_LLM_OPTIONS)
    rel.set_defaults(func=_reliability)


def _reliability(args: argparse.Namespace) -> int:
    from trace_dataset.io import check_output_dir
    from trace_llm import llm_from_args
    from trace_metrics.core.reliability import RELIABILITY_DIR, run_report
    from trace_metrics.core.report import format_reliability
    from trace_metrics.core.rerate import core_subject, judge_subject

    if args.kind == "core" and not args.run:
        raise UsageError("--kind core needs --run DIR (a `core score` output folder)")
    if args.kind == "judge" and (args.data is None or not args.predictions):
        raise UsageError("--kind judge needs --data DIR and --predictions FILE")
    if args.kind == "judge" and args.human is not None:
        raise UsageError("--human compares CoRE runs with human ratings (--kind core)")
    if args.out is None and args.kind == "judge":
        raise UsageError("--kind judge needs --out DIR")
    out = args.out if args.out is not None else args.run[0] / RELIABILITY_DIR
    check_output_dir(out, what="reliability report")
    with llm_from_args(args) as llm:
        if args.kind == "core":
            subject = core_subject(llm, args.run, args.prompts)
        else:
            subject = judge_subject(llm, args.data, args.predictions, args.split, args.limit)
        report = run_report(llm, subject, out, args.k, predictions=args.predictions, human=args.human)
    print(format_reliability(report))
    print(f"wrote {out}/ (reliability.json, reliability.md, reliability.png)")
    return 0


def _count(minimum: int):
    return number_in(int, minimum)


def _log_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data",
        required=True,
        type=Path,
        help="Trace data directory (hydrated): dialogues and knowledge base",
    )
    p.add_argument("--predictions", required=True, type=Path, help="the system's predictions JSONL")
    p.add_argument("--split", default="test", choices=SPLITS)
    p.add_argument(
        "--dialogues",
        type=Path,
        default=None,
        help="dialogue records to use instead of the split (e.g. interactive logs); --data gives the KB",
    )
    p.add_argument(
        "--system", default=None, help="system name in the log ids (default: run metadata or file name)"
    )
    p.add_argument(
        "--top-k", type=_count(1), default=3, help="places per recommendation turn in the list (default 3)"
    )


def _llm_settings(args: argparse.Namespace):
    """The factor and debate decoding; a budget in which a constrained debate statement may not close is
    refused before any request (trace_llm.budget; the factor rating's grammar fits any budget)."""
    from trace_llm.cli import llm_options, settings_from_args
    from trace_llm.structured import constrains
    from trace_metrics.core.debate import require_debate_budget

    factor = settings_from_args(args)
    if constrains(llm_options(args).get("structured")) and not getattr(args, "no_debate", False):
        require_debate_budget(args.debate_max_new_tokens, "--debate-max-new-tokens")
    return factor, factor.replace(max_new_tokens=args.debate_max_new_tokens)


def _score(args: argparse.Namespace) -> int:
    from trace_dataset.io import check_output_dir
    from trace_llm import llm_from_args
    from trace_metrics.core.prompts import FACTOR_IDS, load_prompts
    from trace_metrics.core.reliability import read_verdicts
    from trace_metrics.core.report import format_summary
    from trace_metrics.core.runner import RUN_FILE, collect_logs, run_corpus
    from trace_metrics.core.scoring import check_factors

    check_output_dir(args.out, (RUN_FILE,), what="CoRE output")  # before any work
    ids = [i.strip() for i in args.ids.split(",") if i.strip()] if args.ids else None
    try:
        factors = list(
            check_factors([f.strip() for f in args.factors.split(",") if f.strip()])
            if args.factors
            else FACTOR_IDS
        )
    except ValueError as e:
        raise UsageError(f"--factors: {e}") from None
    logs, source = collect_logs(
        args.predictions,
        args.data,
        split=args.split,
        dialogues_path=args.dialogues,
        system=args.system,
        top_k=args.top_k,
        limit=args.limit,
        dialogue_ids=ids,
        shard=args.shard,
    )
    prompts = load_prompts(args.prompts)
    factor_settings, debate_settings = _llm_settings(args)
    with llm_from_args(args) as llm:
        result = run_corpus(
            llm,
            logs,
            args.out,
            prompts,
            source=source,
            chunk_size=args.chunk,
            overwrite=args.overwrite,
            factors=factors,
            debate=not args.no_debate,
            max_rounds=args.rounds,
            max_retries=args.max_retries,
            max_repairs=args.max_repairs,
            factor_settings=factor_settings,
            debate_settings=debate_settings,
        )
        described = llm.describe()
    print(
        f"CoRE with {described['backend']} {described['model']} (prompts {prompts.version}, "
        f"sha256 {prompts.sha256[:12]}) on {len(logs)} dialogues of {source['system']}"
    )
    print(format_summary(result["summary"], read_verdicts(args.out)))
    u = result["usage"]
    print(
        f"this run: {u['scored_now']} dialogues scored, {u['skipped']} already done; "
        f"{u['total'].get('requests', 0)} requests, {u['total'].get('cache_hits', 0)} answered from the cache"
    )
    print(f"wrote {args.out}/ (dialogues/, scores.jsonl, summary.json, usage.json)")
    return 0


def _meta(args: argparse.Namespace) -> int:
    from trace_dataset.io import check_output_dir, check_output_file, write_json
    from trace_metrics.core.meta import meta_evaluate_files
    from trace_metrics.core.report import format_meta

    if args.out is not None:
        check_output_file(args.out)
    if args.plots is not None:
        check_output_dir(args.plots, what="plots")
    result = meta_evaluate_files(args.scores, args.human)
    if args.plots is not None:
        from trace_metrics.core.plots import write_plots

        result["plots"] = write_plots(result, args.plots)
    if args.out is not None:
        write_json(args.out, result)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    else:
        print(format_meta(result))
        for path in [*(result.get("plots") or {}).values(), *([os.fspath(args.out)] if args.out else [])]:
            print(f"wrote {path}")
    return 0


def _human(args: argparse.Namespace) -> int:
    from trace_dataset.io import check_output_file
    from trace_metrics.core.annotations import convert_annotations

    check_output_file(args.out)
    counts = convert_annotations(args.annotations, args.out, likert_naturalness=args.likert_naturalness)
    print(
        f"wrote {args.out}: {counts['rows']} rows for {counts['logs']} logs; factors {', '.join(counts['factors'])}"
    )
    return 0


def _show(args: argparse.Namespace) -> int:
    from trace_metrics.core.runner import collect_logs

    logs, _ = collect_logs(
        args.predictions,
        args.data,
        split=args.split,
        dialogues_path=args.dialogues,
        system=args.system,
        top_k=args.top_k,
        dialogue_ids=[args.dialogue],
    )
    print(logs[0].render(evidence=args.evidence))
    return 0
