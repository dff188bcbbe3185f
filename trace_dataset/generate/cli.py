"""`trace-bench corpus generate|stats` (and `release|hydrate`, whose parsers trace_dataset.release.cli adds).

    trace-bench corpus generate --kb KB_DIR --out CORPUS_DIR [--n 10000] [--backend template|llm] [--seed 42]
    trace-bench corpus stats CORPUS_DIR [--json]

Heavy imports stay inside the callables so `trace-bench --help` is fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trace_bench.options import number_in
from trace_dataset.constants import GENERATOR_BACKENDS, LLM_FALLBACKS, LLM_MAX_NEW_TOKENS, SEED, SPLITS
from trace_dataset.release.cli import add_parsers as add_release_parsers
from trace_llm.cli import add_llm_argument, llm_from_args

if TYPE_CHECKING:
    from trace_llm import LLM


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "corpus",
        help="generate Trace dialogues from a knowledge base; statistics; release and hydration",
        description="The Trace dialogue corpus: the five-stage generator (scenario, candidates, generation, "
        "validation, difficulty), its statistics, and the [Q:N] release / hydration.",
    )
    sub = p.add_subparsers(dest="corpus_command", metavar="COMMAND", required=True)
    _add_generate(sub)
    _add_stats(sub)
    add_release_parsers(sub)


def _add_generate(sub: Any) -> None:
    g = sub.add_parser(
        "generate",
        help="generate dialogues into a Trace data directory",
        description="Generate N dialogues from a knowledge base (`trace-bench kb build`) into a Trace data "
        "directory: data/{train,validation,test}.jsonl.gz, knowledge_base/ and corpus.json. Same inputs give "
        "byte-identical files whatever --workers is.",
    )
    g.add_argument("--kb", required=True, type=Path, metavar="DIR", help="knowledge base folder")
    g.add_argument("--out", required=True, type=Path, metavar="DIR", help="output data directory")
    g.add_argument("--n", type=number_in(int, 1), default=10000, help="number of dialogues (default: 10000)")
    g.add_argument(
        "--backend",
        choices=GENERATOR_BACKENDS,
        default="template",
        help="template (offline, deterministic; default) or llm (--llm SPEC writes the turn texts)",
    )
    g.add_argument("--seed", type=number_in(int, 0), default=SEED, help=f"corpus seed (default: {SEED})")
    g.add_argument(
        "--workers",
        type=number_in(int, 1),
        default=None,
        help="processes for the template backend (default: CPU count, at most 4)",
    )
    g.add_argument(
        "--max-attempts",
        type=number_in(int, 1),
        default=50,
        help="regeneration attempts per dialogue before giving up (default: 50)",
    )
    g.add_argument(
        "--llm-attempts",
        type=number_in(int, 1),
        default=3,
        help="llm backend: tries per dialogue, each told what failed (default: 3)",
    )
    g.add_argument(
        "--llm-json-repairs",
        type=number_in(int, 0),
        default=1,
        help="llm backend: JSON-syntax repairs per try inside the LLM layer (default: 1)",
    )
    g.add_argument(
        "--llm-fallback",
        choices=LLM_FALLBACKS,
        default="template",
        help="llm backend: after --llm-attempts failures use the template text of the same plan "
        "(default; counted in corpus.json and marked in metadata.backend) or stop with an error",
    )
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_llm_argument(g, max_new_tokens=LLM_MAX_NEW_TOKENS)
    g.set_defaults(func=run_generate)


def _add_stats(sub: Any) -> None:
    s = sub.add_parser(
        "stats",
        help="print the dialogue statistics (paper Table 3) of a data directory",
        description="Turns per dialogue, POIs recommended, rejection rate, tiers, personas and the share of "
        "recommendation turns with acceptable alternatives, beside the paper's values.",
    )
    s.add_argument("dir", type=Path, metavar="DIR", help="a Trace data directory")
    s.add_argument(
        "--split", choices=SPLITS, action="append", help="only these splits (repeatable; default: all)"
    )
    s.add_argument("--json", action="store_true", help="print JSON instead of the table")
    s.set_defaults(func=run_stats)


def run_generate(args: argparse.Namespace) -> int:
    from trace_dataset.generate.pipeline import generate_corpus

    llm: LLM | None = llm_from_args(args) if args.backend == "llm" else None
    report = generate_corpus(
        args.kb,
        args.out,
        n=args.n,
        backend=args.backend,
        seed=args.seed,
        llm=llm,
        workers=args.workers,
        max_attempts=args.max_attempts,
        llm_attempts=args.llm_attempts,
        llm_fallback=args.llm_fallback,
        llm_json_repairs=args.llm_json_repairs,
        progress=False if args.no_progress else None,
    )
    c = report["counts"]
    print(
        f"wrote {c['dialogues']} dialogues to {args.out}: "
        + ", ".join(f"{k} {v}" for k, v in c["splits"].items())
    )
    print("tiers: " + ", ".join(f"{k} {v}" for k, v in c["tiers"].items()))
    regen = report["regeneration"]
    print(
        f"regenerated {regen['dialogues_regenerated']} dialogues ({regen['extra_attempts']} extra attempts)"
        + (": " + ", ".join(f"{k} {v}" for k, v in regen["reasons"].items()) if regen["reasons"] else "")
    )
    if "llm" in report:
        llm_r = report["llm"]
        print(
            f"llm: {llm_r['dialogues_written_by_llm']} dialogues written by the LLM, "
            f"{llm_r['template_fallbacks']} fell back to the template text; failure reasons "
            f"{llm_r['llm_failure_reasons']}"
        )
    print(
        f"corpus_version {report['versions']['corpus_version']}  kb_version {report['versions']['kb_version']}"
    )
    return 0


def run_stats(args: argparse.Namespace) -> int:
    from trace_dataset.generate.stats import corpus_stats, format_stats

    stats = corpus_stats(args.dir, args.split)
    if args.json:
        json.dump(stats, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_stats(stats))
    return 0
