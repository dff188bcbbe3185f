"""The board's corrected marks, ranks and robustness (trace_harness/leaderboard/marks.py): without correction
the marks are the interval rule they always were; Holm only turns marks into ties; what the rows, tables and
CSV say about it; and `trace-bench stats`."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from tests.support.leaderboard import fake_result
from trace_bench.cli import main
from trace_harness.leaderboard.build import mark_best, result_row, write_leaderboard
from trace_harness.leaderboard.render import format_tables
from trace_metrics.lib import intervals as iv
from trace_metrics.lib.significance import Settings
from trace_metrics.specs import spec

N = 120  # dialogues, two recommendation turns each
METRICS = ("recall@1", "mrr", "tsr", "t2r")


def _row(name, rng, hit):
    ids = [f"d{i:03d}" for i in range(N)]
    won = rng.random(N) < hit + 0.2
    per_item = {
        "dialogues": {
            "dialogue_id": ids,
            "tsr": [float(w) for w in won],
            "t2r": [float(rng.integers(1, 4)) if w else None for w in won],
        },
        "recommendation_turns": {
            "dialogue_id": [d for d in ids for _ in range(2)],
            "recall@1": [float(x) for x in rng.random(2 * N) < hit],
            "mrr": [
                float(x)
                for x in rng.choice([0.25, 0.5, 1.0], 2 * N, p=[0.3, 0.3, 0.4])
                * (rng.random(2 * N) < hit + 0.3)
            ],
        },
    }
    return result_row(fake_result(per_item), system=name, family="non-LLM", source="baseline", n_boot=1000)


@pytest.fixture(scope="module")
def board():
    rng = np.random.default_rng(5)
    return [
        _row(name, rng, hit) for name, hit in zip("ABCDEF", (0.30, 0.33, 0.36, 0.40, 0.42, 0.6), strict=True)
    ]


def _old_rule(rows, n_boot=1000):
    """The marks before the correction: the best point value, and every row whose paired percentile interval
    of (best - row) contains 0."""
    tables = [iv.decode(r["per_dialogue"]) for r in rows]
    reps = iv.bootstrap(tables, [list(METRICS)] * len(rows), n_boot=n_boot)
    out = [{} for _ in rows]
    for m in METRICS:
        values = [r["metrics"][m] for r in rows]
        best = (max if spec(m).higher_is_better else min)(range(len(rows)), key=lambda i: values[i])
        for i in range(len(rows)):
            ci = iv.percentile_interval(reps[best][m] - reps[i][m])
            out[i][m] = i == best or values[i] == values[best] or ci[0] <= 0 <= ci[1]
    return out


def test_without_correction_the_marks_are_the_interval_rule(board):
    raw = mark_best(board, n_boot=1000, settings=Settings(correction="none"))
    assert [{m: r["tied_best"][m] for m in METRICS} for r in raw] == _old_rule(board)


def test_holm_only_turns_marks_into_ties(board):
    raw = mark_best(board, n_boot=1000, settings=Settings(correction="none"))
    held = mark_best(board, n_boot=1000)
    changed = 0
    for r, h in zip(raw, held, strict=True):
        for m in METRICS:
            assert h["tied_best"][m] or not r["tied_best"][m]  # a tie stays a tie
            changed += h["tied_best"][m] != r["tied_best"][m]
    assert changed  # this board has differences that do not survive the correction
    k = len(board)
    assert held[0]["marks_method"] == {
        "test": "bootstrap",
        "correction": "holm",
        "family": "board",
        "alpha": 0.05,
        "family_size": {m: k * (k - 1) // 2 * len(held[0]["tied_best"]) for m in held[0]["tied_best"]},
    }


def test_rows_carry_ranks_and_the_leads_robustness(board):
    rows = mark_best(board, n_boot=1000)
    top = max(range(len(rows)), key=lambda i: rows[i]["metrics"]["recall@1"])
    assert rows[top]["rank"]["recall@1"] == 1 and rows[top]["rank_ci"]["recall@1"][0] == 1
    assert all(
        1 <= r["rank_ci"]["recall@1"][0] <= r["rank"]["recall@1"] <= r["rank_ci"]["recall@1"][1] for r in rows
    )
    lead = rows[top]["robustness"]["recall@1"]
    assert lead["of"] == N and lead["exact"] and lead["challenger"] in "ABCDE" and lead["removed"] > 0
    assert all("recall@1" not in (r.get("robustness") or {}) for i, r in enumerate(rows) if i != top)
    assert lead_in(format_tables(rows), "R@1 F")


def lead_in(text, start):
    line = next(x for x in text.splitlines() if x.startswith("Lead: R@1"))
    return start in line and "greedy upper bound" in text


def test_tables_and_csv_say_how_the_marks_were_made(board, tmp_path):
    rows = mark_best(board, n_boot=1000, settings=Settings(correction="bh"))
    text = format_tables(rows)
    assert "Benjamini-Hochberg (false discovery rate) over every pair of rows in every column" in text
    paths = write_leaderboard(rows, tmp_path)
    with open(paths["table5_closed"], newline="") as f:
        table = list(csv.DictReader(f))
    assert {r["marks"] for r in table} == {"test=bootstrap;correction=bh;family=board;alpha=0.05"}
    stored = json.loads(paths["json"].read_text())["rows"][0]
    assert {"rank", "rank_ci", "marks_method"} <= set(stored)


def test_stats_compare_and_power(board, tmp_path, capsys):
    rows = mark_best(board, n_boot=300)
    paths = write_leaderboard(rows, tmp_path / "board")
    board_file = str(paths["json"])
    out = tmp_path / "pairs"
    args = ["stats", "compare", "--leaderboard", board_file, "--metrics", "recall@1,t2r", "--n-boot", "300"]
    assert main([*args, "--test", "randomization", "--permutations", "300", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "paired randomization test (Monte Carlo: 300 assignments, seed 42)" in printed
    report = json.loads((out / "pairwise.json").read_text())
    assert len(report["comparisons"]) == 15 * 2 and report["family_size"] == {"board": 30}
    assert report["settings"]["correction"] == "holm" and "warning" in report  # 1/301 > 0.05 / 30: said
    assert main([*args, "--pair", "A", "F", "--test", "ttest", "--family", "column"]) == 0
    printed = capsys.readouterr().out
    assert "tests per family: recall@1 1, t2r 1" in printed and "(F leads)" in printed
    assert main(["stats", "power", "--leaderboard", board_file, "--pair", "A", "F", "--delta", "0.05"]) == 0
    printed = capsys.readouterr().out
    assert "recall@1" in printed and "n for 0.05" in printed
    assert main(["stats", "power", "--sd", "0.3", "--n", "1500", "--delta", "0.02", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["(stated sd)"]
    assert plan["n"] == 1500 and plan["needed"] > 1500
    for bad, says in (
        (["stats", "power", "--sd", "0.3"], "--sd needs --n"),
        (["stats", "power", "--leaderboard", board_file], "one --pair"),
        (["stats", "compare", "--leaderboard", board_file, "--pair", "A", "Z"], "no row named 'Z'"),
    ):
        assert main(bad) != 0 and says in capsys.readouterr().err


def test_stats_power_from_two_evaluate_results(data_dir, reference_rows, tmp_path, capsys):
    worse = json.loads(json.dumps(reference_rows))
    for r in worse:
        r["ranked_poi_ids"] = r["ranked_poi_ids"][::-1]
    files = []
    for name, rows in (("a", reference_rows), ("b", worse)):
        predictions = tmp_path / f"{name}.jsonl"
        predictions.write_text("".join(json.dumps(r) + "\n" for r in rows))
        out = tmp_path / f"{name}.json"
        assert (
            main(["evaluate", "--data", str(data_dir), "--predictions", str(predictions), "--out", str(out)])
            == 0
        )
        files.append(str(out))
    capsys.readouterr()
    assert (
        main(
            [
                "stats",
                "power",
                "--results",
                *files,
                "--metrics",
                "spatial_coherence@2km,tsr,cgs",
                "--n",
                "500",
                "--json",
            ]
        )
        == 0
    )
    plans = json.loads(capsys.readouterr().out)
    spatial = plans["spatial_coherence@2km"]
    assert spatial["n"] == 500 and spatial["sd"] > 0 and spatial["observed"] > 0
    assert "no spread" in plans["tsr"]["note"] and "formula of means" in plans["cgs"]["note"]
    (tmp_path / "a.per_item.json.gz").unlink()
    assert main(["stats", "power", "--results", *files]) != 0 and "per-item file" in capsys.readouterr().err


def test_the_dry_runs_power_note(data_dir, tmp_path):
    from types import SimpleNamespace

    from trace_harness.leaderboard.stats_tables import dry_run_power
    from trace_metrics.lib.significance import detectable_effect
    from trace_metrics.specs import SUITE_METRICS

    config = SimpleNamespace(
        data=data_dir,
        systems=("popularity", "tfidf", "dense"),
        closed=SimpleNamespace(split="test", subset=None),  # the whole split: 3 toy dialogues
        open=SimpleNamespace(split="test", subset=1500),  # at most the split's 3
        interactive=SimpleNamespace(split="test", n=2, systems=("popularity", "tfidf")),
        wants=lambda part: part == "interactive",
    )
    note = dry_run_power(config)
    family = 3 * len(SUITE_METRICS)
    strict = detectable_effect(3, 0.05 / family)
    assert f"closed pool (test split): 3 dialogues detect {detectable_effect(3):.3f} sd" in note
    assert f"({strict:.3f} sd at alpha/{family}, Holm's first step)" in note
    assert "open pool (test split): 3 dialogues" in note
    assert f"interactive (test split): 2 dialogues detect {detectable_effect(2):.3f} sd" in note
    assert f"at alpha/{len(SUITE_METRICS)}," in note  # two interactive systems: one pair per metric
    config.data = tmp_path / "nowhere"
    note = dry_run_power(config)
    assert "closed pool (test split): size unknown" in note
    assert f"open pool (test split): 1,500 dialogues detect {detectable_effect(1500):.3f} sd" in note
