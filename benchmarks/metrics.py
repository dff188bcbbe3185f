"""Throughput of the whole Trace metric suite (everything but the NLI model and the LLM judge).

Builds a deterministic synthetic corpus in memory (seed 42): a 2,400-POI knowledge base (8 cities x 3 types x
100 POIs, ~14 reviews of 200-500 characters each), dialogues of 6-12 turns in the generator's action grammar,
and a system's predictions whose responses quote the cited reviews (mostly verbatim, some paraphrased, some
invented), carry [Rn] labels and aspect terms; half the non-recommending responses copy the reference turn.
Then times predictions validation + `suite.evaluate_predictions` (join, accuracy, grounding, text, practical,
recovery, per-item standard deviations) on one process and prints system turns per second of CPU time
(`time.process_time`: what one dedicated core would take, even when other processes share the machine), the
best and the median of `--repeat` runs. Usage:

    python benchmarks/metrics.py [--dialogues 12500] [--repeat 3] [--sweeps]
    python benchmarks/metrics.py --data DIR [--predictions FILE] [--split test]   # a real data directory
    python benchmarks/metrics.py --leaderboard RUNS --data DIR [--split test]     # `trace-bench leaderboard`

With `--leaderboard`, times what `trace-bench leaderboard` does on a runs folder (e.g. the demo's
runs/demo/runs): scoring every run without intervals (what the command did before the intervals existed),
then with the 95% cluster-bootstrap intervals and significance marks of every row and column (n_boot 10,000),
and prints both, their ratio and the bootstrap's own time.

With `--significance`, times the corrected tests (trace_metrics.lib.significance) on a synthetic board of
`--systems` runs x 25 metrics (21 ratios, GS / CD / PC and the CGS formula of them) x `--board-dialogues`
dialogues (default 15 x 25 x 10,000): the bootstrap every interval and mark reads (10,000 resamples), the
board's marks with each test (Holm over every pair of rows in every column: 2,625 tests), and the full
pairwise table with all three tests (`trace-bench stats compare`).

    python benchmarks/metrics.py --significance [--systems 15] [--board-dialogues 10000]
"""

from __future__ import annotations

import argparse
import functools
import gc
import itertools
import os
import platform
import random
import statistics
import time

from trace_dataset.constants import ASPECT_TERMS, CITIES, POI_TYPES, PRICE_KEYWORDS
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.prediction import Prediction
from trace_dataset.records import Poi, Review
from trace_metrics.lib import suite
from trace_metrics.lib.predictions import validate_predictions

FUNCTION_WORDS = "the a and was were is it we our they to of in for with but at on this that very so".split()
_SYLLABLES = "ba ce di fo gu ka le mi no pu ra se ti vo zu ster ling ment ous ful".split()
# a Zipf-like content vocabulary of 3,000 pseudo-words: review prose repeats few words often, most rarely
CONTENT_WORDS = [
    a + b + c for a in _SYLLABLES for b in _SYLLABLES for c in ("", "s", "ed", "ing", "er", "y", "al", "ly")
][:3000]
CONTENT_CUM_WEIGHTS = list(itertools.accumulate(1.0 / (rank + 10) for rank in range(len(CONTENT_WORDS))))
WORDS = FUNCTION_WORDS + CONTENT_WORDS[:200]
ASPECTS = list(ASPECT_TERMS)
BUDGET = list(PRICE_KEYWORDS)


def _sentence(rng: random.Random, n: int) -> str:
    k = n // 2
    words = rng.choices(CONTENT_WORDS, cum_weights=CONTENT_CUM_WEIGHTS, k=n - k) + rng.choices(
        FUNCTION_WORDS, k=k
    )
    rng.shuffle(words)
    if rng.random() < 0.5:
        words.insert(rng.randrange(len(words)), rng.choice(ASPECTS))
    return " ".join(words).capitalize() + "."


def build_kb(rng: random.Random) -> KnowledgeBase:
    pois, reviews = [], []
    for city in CITIES.values():
        for poi_type in POI_TYPES:
            for i in range(100):
                pid = f"{city.name[:3].lower()}_{poi_type[:1]}{i:03d}"
                rids = []
                for j in range(rng.randint(8, 20)):
                    rid = f"{pid}_r{j:02d}"
                    text = " ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(rng.randint(3, 6)))[
                        :500
                    ]
                    reviews.append(Review(rid, pid, float(rng.randint(1, 5)), "2020-01-01", text))
                    rids.append(rid)
                price = None if rng.random() < 0.1 else rng.randint(1, 4)
                pois.append(
                    Poi(
                        pid,
                        pid,
                        "",
                        city.name,
                        city.state,
                        city.latitude + rng.uniform(-0.05, 0.05),
                        city.longitude + rng.uniform(-0.05, 0.05),
                        (poi_type,),
                        4.0,
                        len(rids),
                        price,
                        {},
                        poi_type,
                        tuple(rids),
                    )
                )
    return KnowledgeBase(pois, reviews, {"kb_version": "bench"})


def _quote(rng: random.Random, kb: KnowledgeBase, rid: str) -> str:
    text = kb.reviews[rid].text
    words = text.split()
    start = rng.randrange(max(1, len(words) - 8))
    span = " ".join(words[start : start + rng.randint(4, 10)])
    r = rng.random()
    if r < 0.10:  # paraphrased: one word swapped
        parts = span.split()
        parts[rng.randrange(len(parts))] = rng.choice(WORDS)
        span = " ".join(parts)
    elif r < 0.15:  # invented
        span = " ".join(rng.choice(WORDS) for _ in range(6))
    return span


def _response(rng: random.Random, kb: KnowledgeBase, pids: list[str]) -> tuple[str, dict[str, str]]:
    citations: dict[str, str] = {}
    parts = ["Here is what I would suggest."]
    for pid in pids:
        rid = rng.choice(kb.pois[pid].review_ids)
        label = f"R{len(citations) + 1}"
        citations[label] = rid
        parts.append(
            f'{pid} is {rng.choice(ASPECTS)} and {rng.choice(WORDS)}: one reviewer wrote "{_quote(rng, kb, rid)}" '
            f"[{label}]. {_sentence(rng, rng.randint(6, 12))}"
        )
    parts.append(_sentence(rng, rng.randint(5, 10)))
    return " ".join(parts), citations


def _add_turn(turns: list[dict], role, action, text, gold=(), alt=(), refs=(), cites=()) -> None:
    turns.append(
        {
            "turn_id": len(turns),
            "role": role,
            "action": action,
            "text": text,
            "referenced_poi_ids": list(refs),
            "referenced_review_ids": [],
            "gold_poi_ids": list(gold),
            "acceptable_alternative_poi_ids": list(alt),
            "citations": list(cites),
        }
    )


def build_corpus(kb: KnowledgeBase, n_dialogues: int, rng: random.Random) -> tuple[list[dict], list[dict]]:
    cells: dict[tuple[str, str], list[str]] = {}
    for p in kb.pois.values():
        cells.setdefault((p.city, p.poi_type), []).append(p.business_id)
    keys = sorted(cells)
    dialogues, preds = [], []
    for k in range(n_dialogues):
        city, poi_type = keys[k % len(keys)]
        candidates = rng.sample(cells[(city, poi_type)], 8)
        turns: list[dict] = []

        add = functools.partial(_add_turn, turns)
        budget = f" Something {rng.choice(BUDGET)}." if rng.random() < 0.6 else ""
        add("user", "greet_and_seek", _sentence(rng, 10) + budget)
        add("system", "ask_preference", "What matters most to you? " + _sentence(rng, 8))
        add("user", "provide_preference", _sentence(rng, 10))
        for r in range(rng.randint(1, 3)):
            action = "compare" if rng.random() < 0.2 else "recommend"
            gold = [candidates[rng.randrange(8)]]
            alt = [p for p in candidates if p not in gold and rng.random() < 0.15]
            shown = gold + ([alt[0]] if action == "compare" and alt else [])
            text, cites = _response(rng, kb, shown)
            add(
                "system",
                action,
                text,
                gold,
                alt,
                shown,
                [
                    {"label": lab, "review_id": rid, "business_id": kb.reviews[rid].business_id}
                    for lab, rid in cites.items()
                ],
            )
            if r < 2 and rng.random() < 0.6:
                add("user", "reject_and_refine", "Not that one. " + _sentence(rng, 8), refs=gold)
        add("user", "accept", "Sounds good, thanks.")
        add("system", "farewell", "Enjoy your trip! " + _sentence(rng, 6))
        dialogues.append(
            {
                "dialogue_id": f"bench_{k:06d}",
                "split": "test",
                "candidate_poi_ids": candidates,
                "pool_16_poi_ids": candidates,
                "pool_32_poi_ids": candidates,
                "open_set_poi_ids": candidates,
                "turns": turns,
            }
        )
        for t in turns:
            if t["role"] != "system":
                continue
            ranked = rng.sample(candidates, 8)
            if t["action"] in ("recommend", "compare"):
                text, cites = _response(rng, kb, ranked[: 2 if t["action"] == "compare" else 1])
            else:
                text, cites = t["text"] if rng.random() < 0.5 else _sentence(rng, 10), {}
            preds.append(
                Prediction(dialogues[-1]["dialogue_id"], t["turn_id"], tuple(ranked), text, cites).to_dict()
            )
    return dialogues, preds


def load_data_dir(
    data_dir: str, predictions: str | None, split: str
) -> tuple[KnowledgeBase, list[dict], list[dict]]:
    """A real data directory (e.g. a generated corpus) and a predictions file, or the reference-copy system."""
    from trace_dataset.datadir import iter_dialogues
    from trace_metrics.lib.predictions import load_predictions
    from trace_metrics.lib.toy import reference_predictions

    kb = suite.load_kb(data_dir)
    dialogues = list(iter_dialogues(data_dir, split))
    preds = load_predictions(predictions) if predictions else reference_predictions(dialogues)
    return kb, dialogues, preds


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--dialogues", type=int, default=12_600, help="synthetic dialogues (~4 system turns each)"
    )
    parser.add_argument("--data", help="benchmark a Trace data directory instead of the synthetic corpus")
    parser.add_argument("--predictions", help="with --data: a predictions file (default: the reference copy)")
    parser.add_argument("--split", default="test", help="with --data: the split (default test)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sweeps", action="store_true", help="also compute the App. L sweeps")
    parser.add_argument("--profile", action="store_true", help="print a cProfile summary of one run")
    parser.add_argument(
        "--leaderboard", metavar="RUNS", help="with --data: time `trace-bench leaderboard` on RUNS"
    )
    parser.add_argument("--significance", action="store_true", help="time the corrected tests of a board")
    parser.add_argument("--systems", type=int, default=15, help="with --significance: rows of the board")
    parser.add_argument("--board-dialogues", type=int, default=10_000, help="with --significance: dialogues")
    return parser


def main() -> None:
    parser = _parser()
    args = parser.parse_args()
    if args.significance:
        significance_figure(args.systems, args.board_dialogues)
        return
    if args.leaderboard:
        if not args.data:
            parser.error("--leaderboard needs --data")
        leaderboard_figure(args.data, args.leaderboard, args.split, args.repeat)
        return
    suite_figure(args)


def suite_figure(args: argparse.Namespace) -> None:
    """The suite on a data directory or the synthetic corpus (module docstring), best of --repeat."""
    t0 = time.perf_counter()
    if args.data:
        kb, dialogues, preds = load_data_dir(args.data, args.predictions, args.split)
        source, split = args.data, args.split
    else:
        rng = random.Random(42)
        kb = build_kb(rng)
        dialogues, preds = build_corpus(kb, args.dialogues, rng)
        source, split = "synthetic corpus", "test"
    gc.freeze()  # as `trace-bench evaluate` does after loading: long-lived inputs are not rescanned by the GC
    n_turns = len(preds)
    n_rec = sum(1 for d in dialogues for t in d["turns"] if t["action"] in ("recommend", "compare"))
    print(
        f"{source}: {len(dialogues):,} dialogues, {n_turns:,} system turns ({n_rec:,} recommend/compare), "
        f"{len(kb.pois):,} POIs, {len(kb.reviews):,} reviews; loaded in {time.perf_counter() - t0:.1f} s"
    )

    def once() -> dict:
        index = validate_predictions(preds, dialogues, pool="closed", split=split, known_poi_ids=kb.pois)
        return suite.evaluate_predictions(dialogues, index, kb, sweeps=args.sweeps)

    if args.profile:
        import cProfile
        import pstats

        with cProfile.Profile() as prof:
            once()
        pstats.Stats(prof).sort_stats("tottime").print_stats(20)
    wall, cpu = [], []
    for _ in range(args.repeat):
        t, c = time.perf_counter(), time.process_time()
        result = once()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    what = "validation + all metrics but NLI/judge, with per-item std" + (" + sweeps" if args.sweeps else "")
    print(
        f"suite ({what}), best of {args.repeat}: CPU {min(cpu):.2f} s -> {n_turns / min(cpu):,.0f} system turns/s "
        f"on one core (median {n_turns / statistics.median(cpu):,.0f}); wall {min(wall):.2f} s -> "
        f"{n_turns / min(wall):,.0f} system turns/s (wall exceeds CPU when other processes share the core)"
    )
    print(
        f"machine: {_cpu_model()}, {os.cpu_count()} logical CPUs, load average {os.getloadavg()[0]:.1f}, "
        f"Python {platform.python_version()}, one process"
    )
    v = result["values"]
    print(
        "values: "
        + ", ".join(
            f"{k}={v[k]:.3f}"
            for k in (
                "recall@1",
                "grounding_score",
                "citation_density",
                "provenance_coverage",
                "cgs",
                "bleu4",
                "rouge_l",
                "tsr",
            )
        )
    )


def leaderboard_figure(data_dir: str, runs_dir: str, split: str, repeat: int) -> None:
    """`build_leaderboard` without and with intervals + marks, best of `repeat` (CPU and wall seconds)."""
    import sys
    from pathlib import Path

    here = (
        Path(__file__).resolve().parent
    )  # run as a script, benchmarks/baselines.py would shadow `baselines`
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    from trace_harness.leaderboard.build import add_intervals, build_leaderboard

    def timed(fn):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        return out, time.perf_counter() - t, time.process_time() - c

    plain, with_ci, boot = [], [], []
    for _ in range(max(1, repeat)):
        rows, wall, cpu = timed(lambda: build_leaderboard(data_dir, runs_dir, split=split, n_boot=0))
        plain.append((cpu, wall))
        _, bwall, bcpu = timed(lambda rows=rows: add_intervals(rows))
        boot.append((bcpu, bwall))
        _, wall, cpu = timed(lambda: build_leaderboard(data_dir, runs_dir, split=split))
        with_ci.append((cpu, wall))
    (pc, pw), (cc, cw), (bc, bw) = min(plain), min(with_ci), min(boot)
    n_dialogues = rows[0]["per_dialogue"]["n_dialogues"] if rows else 0
    print(
        f"trace-bench leaderboard on {runs_dir}: {len(rows)} rows ({split} split, {n_dialogues:,} dialogues), "
        f"best of {max(1, repeat)}"
    )
    print(f"  scoring only (no intervals)                   CPU {pc:6.1f} s, wall {pw:6.1f} s")
    print(
        f"  scoring + intervals + marks (n_boot 10,000)   CPU {cc:6.1f} s, wall {cw:6.1f} s "
        f"({cc / pc:.2f}x CPU, {cw / pw:.2f}x wall)"
    )
    print(f"  the bootstrap alone (every row and column)    CPU {bc:6.1f} s, wall {bw:6.1f} s")
    print(
        f"machine: {_cpu_model()}, {os.cpu_count()} logical CPUs, load average {os.getloadavg()[0]:.1f}, "
        f"Python {platform.python_version()}"
    )


def synthetic_board(systems: int, dialogues: int, seed: int = 42) -> tuple[list, dict[str, bool]]:
    """Per-dialogue tables of `systems` runs on 25 metrics: 15 turn metrics (1-8 turns per dialogue, the same
    for every run), 5 dialogue metrics, one counted over each run's own successes (as t2r), and GS / CD / PC
    with the CGS formula; run s is slightly better than run s - 1. (metric -> higher is better.)"""
    import numpy as np

    from trace_metrics.lib import intervals as iv

    rng = np.random.default_rng(seed)
    turns = rng.integers(1, 9, dialogues)
    ratios = [f"turn_{k:02d}" for k in range(15)] + [f"dialogue_{k}" for k in range(5)] + ["own_count"]
    parts = ["grounding_score", "citation_density", "provenance_coverage"]
    tables = []
    for s in range(systems):
        p = 0.35 + 0.004 * s
        sums, counts = {}, {}
        for m in ratios + parts:
            c = np.ones(dialogues, np.int64) if m.startswith("dialogue") else turns.astype(np.int64)
            if m == "own_count":
                c = (rng.random(dialogues) < p + 0.3).astype(np.int64)
            scale = 0.1 if m == "citation_density" else 1.0
            sums[m] = rng.binomial(c, p) * scale
            counts[m] = c
        tables.append(iv.DialogueTable("board", dialogues, sums, counts))
    directions = {m: m != "own_count" for m in ratios + parts}
    directions["cgs"] = True
    return tables, directions


def significance_figure(systems: int, dialogues: int) -> None:
    """The corrected tests of a synthetic board (module docstring), CPU and wall seconds."""
    from trace_metrics.lib import intervals as iv
    from trace_metrics.lib import significance as sig

    def timed(fn):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        return out, time.perf_counter() - t, time.process_time() - c

    import scipy.stats  # noqa: F401  (imported before the clocks start: the t-test's distribution)

    tables, directions = synthetic_board(systems, dialogues)
    metrics = list(directions)
    points = [{m: iv.point_value(t, m) for m in metrics} for t in tables]
    pairs = systems * (systems - 1) // 2
    print(
        f"synthetic board: {systems} systems x {len(metrics)} metrics x {dialogues:,} dialogues; "
        f"{pairs * len(metrics):,} pairwise tests per correction"
    )
    reps, wall, cpu = timed(lambda: iv.bootstrap(tables, [metrics] * systems))
    print(
        f"  {'the bootstrap (10,000 resamples, every row and metric)':<66}CPU {cpu:6.1f} s, wall {wall:6.1f} s"
    )
    for test in sig.TESTS:
        found, wall, cpu = timed(
            lambda t=test: sig.mark_group(tables, points, reps, directions, sig.Settings(t))
        )
        untied = sum(not v for marks in found.tied for v in marks.values())
        print(
            f"  {'marks, ranks, robustness: ' + test + ' + Holm over the board':<66}"
            f"CPU {cpu:6.1f} s, wall {wall:6.1f} s "
            f"({untied} marks significant)"
        )
    comparisons = [
        sig.Comparison(i, j, m) for i in range(systems) for j in range(i + 1, systems) for m in metrics
    ]

    def table() -> list:
        found = sig.pairwise(tables, comparisons, replicates=reps)
        sig.correct(found)
        return found

    _, wall, cpu = timed(table)
    print(
        f"  {'pairwise table, all three tests + Holm (given the bootstrap)':<66}CPU {cpu:6.1f} s, wall {wall:6.1f} s"
    )
    print(
        f"machine: {_cpu_model()}, {os.cpu_count()} logical CPUs, load average {os.getloadavg()[0]:.1f}, "
        f"Python {platform.python_version()}, one process"
    )


if __name__ == "__main__":
    main()
