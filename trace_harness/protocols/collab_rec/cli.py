"""`trace-bench collab-rec run|tables`: Collab-REC on its own benchmark (200 European cities, a query CSV).

trace-bench collab-rec run --strategy mami --kb eu-cities-database.csv --queries queries.csv --out runs/mami
trace-bench collab-rec run --strategy toppop --kb ... --queries ... --out runs/toppop
trace-bench collab-rec tables runs/sasi runs/mami runs/toppop runs/randrec --reference
"""

from __future__ import annotations

import argparse
from typing import Any

from trace_bench.errors import UsageError
from trace_bench.options import number_in
from trace_llm.cli import add_llm_argument

STRATEGIES = (
    "randrec",
    "toppop",
    "sasi",
    "masi",
    "mami",
)  # == negotiation.STRATEGIES (imported lazily there)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "collab-rec", help="Collab-REC (multi-agent city recommender) on its own data"
    )
    sub = parser.add_subparsers(dest="collab_rec_command", metavar="ACTION", required=True)
    _register_run(sub)
    tables = sub.add_parser("tables", help="lay out finished runs as the paper's Tables 1 and 3 (Markdown)")
    tables.add_argument("runs", nargs="+", metavar="DIR", help="folders written by `collab-rec run`")
    tables.add_argument("--reference", action="store_true", help="also print the paper's own tables")
    tables.set_defaults(func=_tables)


def _register_run(sub: Any) -> None:
    from baselines.collab_rec.agents import load_settings

    run = sub.add_parser(
        "run",
        help="run one strategy over a query file; writes every round's offers and metrics.json",
        description="Run RandRec, TopPop, SASI, MASI or MAMI over Collab-REC's city knowledge base and a query "
        "CSV (the authors' columns: config_id, config, city, query_v). Resumable: rerun the same command. "
        "The paper's 900 SynthTRIPs queries are not public; the 45 released queries or your own file work.",
    )
    run.add_argument("--strategy", required=True, choices=STRATEGIES)
    run.add_argument(
        "--kb", required=True, metavar="FILE", help="eu-cities-database.csv (the authors' format)"
    )
    run.add_argument("--queries", required=True, metavar="FILE", help="queries.csv (the authors' format)")
    run.add_argument(
        "--out", required=True, metavar="DIR", help="output folder (run.json, queries/, metrics.json)"
    )
    _add_moderator_options(run)
    run.add_argument("--limit", type=number_in(int, 1), default=None, help="only the first N queries")
    run.add_argument(
        "--batch-queries",
        type=number_in(int, 1),
        default=None,
        help="queries negotiated together (default: 16, or 1 for a model that answers one request at a time: "
        "llama.cpp in process)",
    )
    run.add_argument(
        "--max-repairs",
        type=number_in(int, 0),
        default=None,
        help="JSON repair retries per agent call (default: 2)",
    )
    run.add_argument(
        "--open-candidates",
        action="store_true",
        help="the paper's open list: agents may name anything (no catalogue enum in the schema); see "
        "docs/collab_rec.md",
    )
    run.add_argument("--overwrite", action="store_true", help="start over instead of resuming")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    decoding = load_settings().decoding
    add_llm_argument(
        run,
        temperature=decoding["temperature"],
        top_p=decoding["top_p"],
        max_new_tokens=decoding["max_new_tokens"],
    )
    run.set_defaults(func=_run)


def _add_moderator_options(run: argparse.ArgumentParser) -> None:
    """The moderator's settings (ModeratorConfig), each defaulting to the paper's."""
    from baselines.collab_rec.moderator import CODE_BEHAVIOURS, REJECTION_TAU, STOPPING, ModeratorConfig

    defaults = ModeratorConfig()
    run.add_argument(
        "--rejection",
        default=defaults.rejection,
        choices=tuple(REJECTION_TAU),
        help=f"omit-vote policy: aggressive (tau 1) or majority (tau 2) (default: {defaults.rejection})",
    )
    run.add_argument(
        "--stopping",
        default=defaults.stopping,
        choices=STOPPING,
        help="eq13: the paper's online rule; m_early: fixed --t-max rounds and the authors' post-hoc "
        "M_early pick; fixed: --t-max rounds (default: eq13)",
    )
    run.add_argument(
        "--t-max",
        type=number_in(int, 1),
        default=defaults.t_max,
        help=f"round budget (default: {defaults.t_max})",
    )
    run.add_argument(
        "--k", type=number_in(int, 1), default=defaults.k, help=f"list length (default: {defaults.k})"
    )
    run.add_argument(
        "--t-min",
        type=number_in(int, 1),
        default=defaults.t_min,
        help=f"Eq. 13 T_min (default: {defaults.t_min})",
    )
    run.add_argument(
        "--patience",
        type=number_in(int, 1),
        default=defaults.patience,
        help=f"Eq. 13 patience p (default: {defaults.patience})",
    )
    run.add_argument(
        "--eps",
        type=number_in(float, 0),
        default=defaults.eps,
        help=f"Eq. 13 epsilon (default: {defaults.eps})",
    )
    for name in ("r", "d", "h"):
        run.add_argument(
            f"--lambda-{name}",
            type=number_in(float, 0),
            default=1.0,
            help=f"Eq. 4 weight of {name} (default: 1; 0 ablates it)",
        )
    run.add_argument(
        "--code-behaviour",
        action="append",
        default=[],
        choices=sorted(CODE_BEHAVIOURS),
        metavar="NAME",
        help="use the authors' code's behaviour where it differs from the paper; "
        f"repeatable: {', '.join(sorted(CODE_BEHAVIOURS))} (see docs/collab_rec.md)",
    )


def _run(args: argparse.Namespace) -> int:
    from baselines.collab_rec.moderator import ModeratorConfig
    from baselines.collab_rec.negotiation import LLM_STRATEGIES
    from trace_harness.protocols.collab_rec.run import run_benchmark
    from trace_llm import llm_from_args

    if args.stopping == "eq13" and args.t_min > args.t_max:
        raise UsageError(
            f"--t-min {args.t_min} exceeds --t-max {args.t_max}: Eq. 13 could never stop a "
            "negotiation early; expected --t-min <= --t-max"
        )
    try:
        config = ModeratorConfig(
            k=args.k,
            rejection=args.rejection,
            stopping=args.stopping,
            t_max=args.t_max,
            t_min=args.t_min,
            patience=args.patience,
            eps=args.eps,
            lambda_r=args.lambda_r,
            lambda_d=args.lambda_d,
            lambda_h=args.lambda_h,
            code_behaviours=frozenset(args.code_behaviour),
        )
    except ValueError as e:
        raise UsageError(str(e)) from None
    llm = llm_from_args(args) if args.strategy in LLM_STRATEGIES else None
    try:
        metrics = run_benchmark(
            args.strategy,
            args.kb,
            args.queries,
            args.out,
            llm=llm,
            config=config,
            limit=args.limit,
            batch_queries=args.batch_queries,
            overwrite=args.overwrite,
            seed=args.llm_seed,
            max_repairs=args.max_repairs,
            progress=not args.no_progress,
            catalogue_enum=not args.open_candidates,
        )
    finally:
        if llm is not None:
            llm.close()
    print(f"collab-rec {args.strategy}: {metrics['counts']['queries']} queries in {args.out}")
    for name, m in metrics["systems"].items():
        print(
            f"  {name:8s} success {m['moderator_success']:.3f}  gini {m['gini']:.2f}  entropy {m['entropy']:.2f}"
            f"  coverage {100 * m['coverage']:.1f}%"
        )
    if "agents" in metrics:
        a, c = metrics["agents"], metrics["counts"]
        rel = "-" if a["reliability"] is None else f"{a['reliability']:.3f}"
        hal = "-" if a["hallucination_rate"] is None else f"{a['hallucination_rate']:.3f}"
        print(
            f"  agents   reliability {rel}  hallucination rate {hal}  calls/query "
            f"{c['agent_calls_per_query']:.1f}  failed calls {c['agent_failures']}"
        )
    return 0


def _tables(args: argparse.Namespace) -> int:
    from trace_harness.protocols.collab_rec.tables import load_runs, reference_tables, table1, table3

    runs = load_runs(args.runs)
    print("Table 1 (moderator success; early stopping)\n")
    print(table1(runs))
    print("\nTable 3 (Gini (entropy); coverage % (avg recs per covered city))\n")
    print(table3(runs))
    if args.reference:
        print("\nThe paper's numbers (900 SynthTRIPs queries; the authors' code, Eq. 10 with μ2 = μ1)\n")
        print(reference_tables())
    return 0
