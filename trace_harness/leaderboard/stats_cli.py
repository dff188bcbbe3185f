"""`trace-bench stats compare|power`: the statistics of `trace_metrics.lib.significance` on scored runs.

    trace-bench stats compare --leaderboard DIR/leaderboard.json [--pair A B] [--metrics IDS] [--out DIR]
    trace-bench stats power --leaderboard DIR/leaderboard.json --pair A B [--delta D]
    trace-bench stats power --results A.json B.json [--delta D]       (two `trace-bench evaluate` outputs)
    trace-bench stats power --sd SD --n N [--delta D]                 (a stated per-dialogue sd)

`compare`: every pair of rows (of one pool and split) per metric with the paired cluster bootstrap interval,
the three tests' p-values, d_z, the corrected p-value and mark, and the fewest dialogues whose removal
reverses the pair. `power`: the minimum detectable difference at n with 80% power and the dialogues a given
difference needs (paired t-test). It lives in the harness because it reads the leaderboard's files.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from trace_bench.errors import UsageError
from trace_bench.options import number_in
from trace_dataset.constants import SEED


def register(subparsers: Any) -> None:
    from trace_metrics.cli import add_significance_arguments
    from trace_metrics.lib import significance as sig

    p = subparsers.add_parser(
        "stats",
        help="pairwise tests with corrections, and power planning, on scored runs",
        description="Statistics on scored runs (docs/leaderboard.md, 'Significance'): `compare` tests every "
        "pair of rows of a leaderboard, `power` plans how many dialogues a difference needs.",
    )
    sub = p.add_subparsers(dest="stats_command", metavar="SUBCOMMAND", required=True)
    c = sub.add_parser(
        "compare",
        help="every pair of rows per metric: bootstrap CI, randomization and t-test p, d_z, corrected",
        description="Every pair of rows of one pool and split of a leaderboard (or the --pair ones), per "
        "metric: the difference with its paired cluster-bootstrap 95%% interval, the bootstrap's, the "
        "randomization test's and the t-test's p-values, Cohen's d_z, the p-value after the correction "
        "over the family, and the fewest dialogues whose removal reverses the pair.",
    )
    _add_rows_arguments(c)
    c.add_argument("--metrics", help="comma-separated metric ids (default: every metric all rows have)")
    c.add_argument(
        "--n-boot", type=number_in(int, 1), default=sig.N_BOOT, help="bootstrap resamples (default 10000)"
    )
    c.add_argument(
        "--seed",
        type=number_in(int, 0),
        default=SEED,
        help=f"bootstrap and permutation seed (default {SEED})",
    )
    add_significance_arguments(c, "the marks")
    c.add_argument("--out", type=Path, help="folder for pairwise.json and pairwise.csv")
    c.set_defaults(func=_compare)

    w = sub.add_parser(
        "power",
        help="minimum detectable difference and dialogues needed (paired t-test, 80%% power)",
        description="From a pilot pair of runs (two rows of a leaderboard, or two `trace-bench evaluate` "
        "results) or a stated standard deviation of the per-dialogue differences: the minimum detectable "
        "difference at n dialogues with the given power, and the dialogues needed to detect --delta.",
    )
    _add_rows_arguments(w)
    w.add_argument(
        "--results", nargs=2, type=Path, metavar=("A", "B"), help="two `trace-bench evaluate` results files"
    )
    w.add_argument(
        "--sd", type=number_in(float, 0.0, low_open=True), help="stated sd of the per-dialogue differences"
    )
    w.add_argument("--n", type=number_in(int, 2), help="dialogues (default: the pilot's)")
    w.add_argument("--metrics", help="comma-separated metric ids (default: every metric of the pilot)")
    w.add_argument("--delta", type=number_in(float, 0.0, low_open=True), help="a difference to detect")
    w.add_argument(
        "--alpha",
        type=number_in(float, 0.0, 1.0, low_open=True),
        default=sig.ALPHA,
        help="level (default 0.05)",
    )
    w.add_argument(
        "--power",
        type=number_in(float, 0.0, 1.0, low_open=True),
        default=sig.POWER,
        help="power (default 0.8)",
    )
    w.add_argument("--json", action="store_true", help="print the plan as JSON")
    w.set_defaults(func=_power)


def _add_rows_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--leaderboard", type=Path, help="a leaderboard.json (its per-dialogue side file beside it)"
    )
    p.add_argument("--pool", default="closed", help="the rows' pool (default closed)")
    p.add_argument("--split", help="the rows' split (default: the only one the pool has)")
    p.add_argument(
        "--pair",
        nargs=2,
        action="append",
        metavar=("A", "B"),
        help="two systems (row names) to compare; repeat for more (default: every pair)",
    )


# ---------------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------------
def board_tables(path: Path, pool: str, split: str | None) -> tuple[list[str], list[Any]]:
    """(system names, decoded tables) of the rows of one pool and split of a leaderboard with per-dialogue
    data; UsageError naming what is missing."""
    from trace_harness.leaderboard.build import read_leaderboard
    from trace_metrics.lib import intervals as iv

    rows = [
        r for r in read_leaderboard(path) if r.get("pool") == pool and "data" in (r.get("per_dialogue") or {})
    ]
    splits = sorted({r["split"] for r in rows})
    if split is None and len(splits) > 1:
        raise UsageError(f"{path}: the {pool} pool has rows of the splits {splits}; choose one with --split")
    rows = [r for r in rows if split is None or r["split"] == split]
    if not rows:
        raise UsageError(
            f"{path}: no {pool}-pool rows with per-dialogue data" + (f" on {split}" if split else "")
        )
    return [r["system"] for r in rows], [iv.decode(r["per_dialogue"]) for r in rows]


def result_table(path: Path) -> Any:
    """The per-dialogue table of a `trace-bench evaluate` results file (its per-item file beside it)."""
    import gzip

    from trace_dataset.io import read_json
    from trace_metrics.lib import intervals as iv
    from trace_metrics.report import per_item_path

    items = per_item_path(path)
    if not items.exists():
        raise UsageError(f"{items} not found: the per-item file `trace-bench evaluate` writes beside {path}")
    gate = (read_json(path).get("config") or {}).get("grounding", {}).get("cd_gate", iv.DEFAULT_CD_GATE)
    with gzip.open(items, "rt", encoding="utf-8") as f:
        return iv.dialogue_table(json.load(f), cd_gate=gate)


def _index(names: list[str], pairs: list[list[str]] | None) -> list[tuple[int, int]]:
    if not pairs:
        return [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    out = []
    for a, b in pairs:
        for name in (a, b):
            if name not in names:
                raise UsageError(f"--pair: no row named {name!r}; the rows are {names}")
        out.append((names.index(a), names.index(b)))
    return out


def _metrics(text: str | None, tables: list[Any]) -> list[str]:
    from trace_metrics.specs import METRICS

    common = set.intersection(*(set(t.metrics()) for t in tables))
    if text is None:
        return [m for m in METRICS if m in common]
    wanted = [m.strip() for m in text.split(",") if m.strip()]
    missing = [m for m in wanted if m not in common]
    if missing:
        raise UsageError(f"--metrics: {missing} are not in every row; they have {sorted(common)}")
    return wanted


# ---------------------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------------------
def _compare(args: argparse.Namespace) -> int:
    from trace_harness.leaderboard.stats_tables import format_pairwise, pairwise_report, write_pairwise

    if args.leaderboard is None:
        raise UsageError("stats compare needs --leaderboard")
    names, tables = board_tables(args.leaderboard, args.pool, args.split)
    report = pairwise_report(names, tables, _index(names, args.pair), _metrics(args.metrics, tables), args)
    print(format_pairwise(report))
    if args.out is not None:
        written = write_pairwise(report, args.out)
        print(f"\nwrote {', '.join(str(p) for p in written)}")
    return 0


# ---------------------------------------------------------------------------------------------------
# power
# ---------------------------------------------------------------------------------------------------
def _power(args: argparse.Namespace) -> int:
    from trace_harness.leaderboard.stats_tables import format_power
    from trace_metrics.lib import significance as sig

    sources = sum(x is not None for x in (args.leaderboard, args.results, args.sd))
    if sources != 1:
        raise UsageError("stats power needs one of --leaderboard (with --pair A B), --results A B or --sd")
    if args.sd is not None:
        if args.n is None:
            raise UsageError("--sd needs --n, the number of dialogues")
        plans = {"(stated sd)": sig.plan(args.sd, args.n, args.delta, args.alpha, args.power)}
        what = f"a stated sd of {args.sd} per dialogue"
    else:
        if args.leaderboard is not None:
            names, tables = board_tables(args.leaderboard, args.pool, args.split)
            if not args.pair or len(args.pair) != 1:
                raise UsageError("--leaderboard needs one --pair A B: the pilot pair")
            [(i, j)] = _index(names, args.pair)
            pair, what = (tables[i], tables[j]), f"{names[i]} - {names[j]} ({args.leaderboard})"
        else:
            pair = (result_table(args.results[0]), result_table(args.results[1]))
            what = f"{args.results[0].name} - {args.results[1].name}"
            if pair[0].dialogues != pair[1].dialogues:
                raise UsageError("--results: the two runs were scored on different dialogues")
        plans = sig.pilot(*pair, _metrics(args.metrics, list(pair)), args.delta, args.alpha, args.power)
        if args.n is not None:
            plans = {m: _at(p, args.n, args) for m, p in plans.items()}
    print(json.dumps(plans, indent=2) if args.json else format_power(plans, what, args.alpha, args.power))
    return 0


def _at(found: dict[str, Any], n: int, args: argparse.Namespace) -> dict[str, Any]:
    """A pilot's plan at another number of dialogues (the pilot's sd and observed difference kept)."""
    from trace_metrics.lib import significance as sig

    if "sd" not in found:
        return found
    keep = {k: found[k] for k in ("observed", "d_z")}
    return {**keep, **sig.plan(found["sd"], n, args.delta, args.alpha, args.power)}
