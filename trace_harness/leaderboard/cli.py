"""`trace-bench leaderboard`: evaluate every run and print the paper-style tables with intervals;
`trace-bench leaderboard verify ROW`: re-run a stored row's manifest and mark the row (reproduction.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from trace_bench.options import number_in
from trace_bench.shell import trace_bench_command
from trace_dataset.constants import ALL_SPLITS, SEED, SPLITS


def register(sub) -> None:
    from trace_metrics.cli import add_convention_arguments, add_significance_arguments
    from trace_metrics.lib.conventions import DEFAULT_GROUNDING_TURNS, GROUNDING_TURNS

    p = sub.add_parser(
        "leaderboard",
        help="score every baseline run and print Tables 5, 6 and 9",
        description="Evaluate every complete predictions file under --runs (written by `trace-bench run`) "
        "with the metrics suite; print the paper's Table 5, 6 and 9 columns, each cell with its 95% "
        "cluster-bootstrap interval and a * where the row is best or not significantly different "
        "from the best after Holm's correction (--test, --correction, --family), and the dialogues each "
        "column's lead rests on; write leaderboard.json (each row with its rank per metric and the rank's "
        "bootstrap interval; + leaderboard.per_dialogue.jsonl) plus one CSV per table and pool to --out. Conventions: "
        "docs/leaderboard.md.",
    )
    p.add_argument("--data", type=Path, help="hydrated Trace data directory (required)")
    p.add_argument("--runs", type=Path, help="folder of prediction files, searched recursively (required)")
    p.add_argument(
        "--split", choices=(*SPLITS, ALL_SPLITS), help="only runs of this split ('all': full-corpus runs)"
    )
    p.add_argument(
        "--out", type=Path, help="folder for leaderboard.json and the CSV tables (default: --runs)"
    )
    p.add_argument(
        "--grounding-turns",
        choices=GROUNDING_TURNS,
        default=DEFAULT_GROUNDING_TURNS,
        help="turns the grounding metrics average over: recommend/compare turns (default, App. J) or "
        "every system turn (Table 20's n)",
    )
    add_convention_arguments(p)
    p.add_argument(
        "--n-boot",
        type=number_in(int, 0),
        default=10_000,
        help="bootstrap resamples for the intervals and marks (default 10000; 0: none)",
    )
    p.add_argument(
        "--seed",
        type=number_in(int, 0),
        default=SEED,
        help=f"bootstrap and permutation seed (default {SEED})",
    )
    add_significance_arguments(p, "the * marks")
    p.add_argument(
        "--interactive",
        type=Path,
        metavar="DIR",
        help="also the interactive view: every `trace-bench interact` --out folder under DIR, beside the "
        "teacher-forced rows (docs/interactive.md)",
    )
    _add_hub_arguments(p)
    p.set_defaults(func=_leaderboard)
    sub_commands = p.add_subparsers(dest="leaderboard_command", metavar="verify")
    v = sub_commands.add_parser(
        "verify",
        help="re-run the manifest a stored row carries and mark the row reproduced or not reproduced",
        description="Run the `trace-bench reproduce` manifest a stored leaderboard row carries again (its system "
        "and the part of the row's pool, on --data, with a fresh response cache), compare the re-run's record "
        "with the manifest and its scores with the row's 95% intervals, and write the verdict into the row "
        "file: reproduced, or not reproduced with the first reason (docs/space.md, 'Accountability').",
    )
    v.add_argument(
        "row", metavar="ROW", type=Path, help="a stored row file (the results store's results/*.json)"
    )
    v.add_argument(
        "--data",
        type=Path,
        required=True,
        dest="verify_data",
        metavar="DIR",
        help="the data the row was scored on: the Space's data directory, or a blind period's gold folder",
    )
    v.add_argument("--work", type=Path, help="folder for the re-run (default: a temporary folder)")
    v.set_defaults(func=_verify)


def _verify(args: argparse.Namespace) -> int:
    from trace_harness.leaderboard.reproduction import verify_file

    verdict = verify_file(args.row, args.verify_data, args.work)
    print(f"{args.row}: {verdict['status']} ({verdict['reason']})")
    return 0 if verdict["status"] == "reproduced" else 1


def _export_format(text: str) -> str:
    from trace_harness.leaderboard.export import EXPORT_FORMATS

    if text not in EXPORT_FORMATS:
        raise argparse.ArgumentTypeError(f"expected one of {', '.join(EXPORT_FORMATS)}, got {text!r}")
    return text


def _add_hub_arguments(p: argparse.ArgumentParser) -> None:
    """Rows from elsewhere, and the rows in the formats other harnesses read (docs/inspect.md)."""
    from trace_dataset.constants import OFFICIAL_HUB_DATASET

    g = p.add_argument_group("rows from elsewhere, and for the Hub and other harnesses (docs/inspect.md)")
    g.add_argument(
        "--rows",
        type=Path,
        action="append",
        default=[],
        metavar="PATH",
        help="more rows, shown and written beside the runs': a leaderboard.json, a stored row, a folder of them "
        "(the Space's results/ folder) or Every Eval Ever records (imported as comparison rows); repeatable",
    )
    g.add_argument(
        "--export",
        nargs=2,
        metavar=("FORMAT", "DIR"),
        help="also write every row (runs and --rows; not imported ones) in FORMAT under DIR: every-eval-ever "
        "(DIR/data/trace/<developer>/<model>/<uuid>.json, the shared schema)",
    )
    g.add_argument(
        "--paper-rows", action="store_true", help="--export the paper's reported rows (source paper) too"
    )
    g.add_argument(
        "--eval-results",
        type=Path,
        metavar="REPO_DIR",
        help="write REPO_DIR/.eval_results/trace.yaml, the Hub's Eval Results entries of --system's rows",
    )
    g.add_argument("--system", metavar="LABEL", help="the row label --eval-results is written for")
    g.add_argument(
        "--hub-dataset",
        default=OFFICIAL_HUB_DATASET,
        metavar="ID",
        help=f"the benchmark's Hub dataset the entries point at (default {OFFICIAL_HUB_DATASET})",
    )


def _leaderboard(args: argparse.Namespace) -> int:
    from trace_harness.leaderboard.build import build_leaderboard, write_leaderboard
    from trace_harness.leaderboard.render import format_tables
    from trace_metrics.lib.significance import Settings

    _check_hub_arguments(args)
    rows = build_leaderboard(
        args.data,
        args.runs,
        split=args.split,
        n_boot=args.n_boot,
        seed=args.seed,
        settings=Settings(args.test, args.correction, args.family, n_perm=args.permutations, seed=args.seed),
        grounding_turns=args.grounding_turns,
        compare_hit=args.compare_hit,
        t2r=args.t2r,
    )
    if args.rows:
        from trace_harness.leaderboard.export import read_rows

        rows = [*rows, *read_rows(args.rows)]
    live = _interactive(args, rows)
    if not rows and not live:
        print(f"no complete runs under {args.runs}")
        return 1
    print(format_tables(rows))
    paths = write_leaderboard(rows, args.out or args.runs)
    print(
        f"wrote {paths['json']}, {paths['per_dialogue'].name} and {len(paths) - 2} CSV tables (serve them: "
        f"{trace_bench_command('serve', '--baselines', paths['json'])})"
    )
    if args.interactive is not None:
        from trace_harness.leaderboard.interactive import format_interactive, write_interactive

        print("\n" + format_interactive(live))
        written = write_interactive(live, args.out or args.runs, args.interactive)
        print(f"wrote {', '.join(str(p) for p in written.values())} ({len(live)} interactive runs)")
    _hub_outputs(args, rows)
    return 0


def _check_hub_arguments(args: argparse.Namespace) -> None:
    from trace_bench.errors import UsageError

    missing = [f"--{k}" for k in ("data", "runs") if getattr(args, k) is None]
    if missing:
        raise UsageError(
            f"trace-bench leaderboard needs {' and '.join(missing)} (or: leaderboard verify ROW)"
        )
    if args.export is not None:
        try:
            _export_format(args.export[0])
        except argparse.ArgumentTypeError as e:
            raise UsageError(f"--export FORMAT: {e}") from None
    if (args.eval_results is None) != (args.system is None):
        raise UsageError("--eval-results REPO_DIR and --system LABEL go together")
    if args.paper_rows and args.export is None:
        raise UsageError("--paper-rows says which rows --export writes; give --export FORMAT DIR")


def _hub_outputs(args: argparse.Namespace, rows: list) -> None:
    """--export and --eval-results (trace_harness/leaderboard/export.py, hub_results.py)."""
    if args.export is not None:
        from trace_harness.leaderboard.export import export_every_eval_ever, run_metas

        out = Path(args.export[1])
        files = export_every_eval_ever(rows, out, metas=run_metas(args.runs), paper_rows=args.paper_rows)
        print(f"wrote {len(files)} {args.export[0]} records under {out / 'data'}")
    if args.eval_results is not None:
        from trace_harness.leaderboard.hub_results import write_eval_results

        path = write_eval_results(rows, args.system, args.eval_results, args.hub_dataset)
        print(f"wrote {path} (the Hub's Eval Results of {args.system!r}, dataset {args.hub_dataset})")


def _interactive(args: argparse.Namespace, rows: list) -> list:
    """The interactive view's rows (trace_harness/leaderboard/interactive.py) when --interactive is given."""
    if args.interactive is None:
        return []
    from trace_harness.leaderboard.interactive import interactive_rows

    return interactive_rows(args.interactive, rows)
