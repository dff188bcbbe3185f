"""Cluster-bootstrap intervals: per-dialogue tables, against a direct resampling loop and scipy.stats.bootstrap,
paired comparisons against stats.paired_cluster_bootstrap, and the stored encoding."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.leaderboard import fake_result
from trace_metrics.lib import intervals as iv
from trace_metrics.lib import stats
from trace_metrics.lib.grounding import composite
from trace_metrics.lib.significance import mark_group


def _turns(seed: int, n_dialogues: int = 30):
    """Random per-turn GS/CD/PC and recall@1 over dialogues of 1-4 recommendation turns, plus a dialogue metric."""
    rng = np.random.default_rng(seed)
    ids = [f"d{i:03d}" for i in range(n_dialogues)]
    turn_ids = [d for d in ids for _ in range(int(rng.integers(1, 5)))]
    k = len(turn_ids)
    per_item = {
        "dialogues": {
            "dialogue_id": ids,
            "tsr": [float(x) for x in rng.random(n_dialogues) < 0.6],
            "t2r": [None if x < 0.3 else float(rng.integers(1, 4)) for x in rng.random(n_dialogues)],
        },
        "recommendation_turns": {
            "dialogue_id": turn_ids,
            "recall@1": [float(x) for x in rng.random(k) < 0.4],
            "grounding_score": list(rng.uniform(0.5, 1.0, k)),
            "citation_density": list(rng.uniform(0.0, 0.12, k)),
            "provenance_coverage": list(rng.uniform(0.0, 1.0, k)),
        },
    }
    return ids, per_item


def test_dialogue_table_sums_and_counts_by_hand():
    per_item = {
        "dialogues": {"dialogue_id": ["b", "a", "c"], "t2r": [2.0, None, 1.0]},
        "recommendation_turns": {"dialogue_id": ["a", "a", "b", "c"], "recall@1": [1.0, 0.0, 1.0, None]},
    }
    t = iv.dialogue_table(per_item)
    assert t.n_dialogues == 3 and t.dialogues == iv.dialogue_set_id(["a", "b", "c"])  # sorted ids
    assert t.sums["recall@1"].tolist() == [1.0, 1.0, 0.0] and t.counts["recall@1"].tolist() == [2, 1, 0]
    assert t.sums["t2r"].tolist() == [0.0, 2.0, 1.0] and t.counts["t2r"].tolist() == [0, 1, 1]
    assert iv.point_value(t, "recall@1") == pytest.approx(2 / 3) and iv.point_value(t, "t2r") == 1.5
    assert "cgs" not in t.metrics()  # no grounding components, no composite


def test_bootstrap_equals_a_direct_resampling_loop():
    ids, per_item = _turns(1)
    t = iv.dialogue_table(per_item)
    [reps] = iv.bootstrap([t], n_boot=600, seed=7)
    # the same draws, one resample at a time, from the per-turn values
    rec = per_item["recommendation_turns"]
    by_d = {d: [i for i, x in enumerate(rec["dialogue_id"]) if x == d] for d in ids}
    rng = np.random.default_rng(7)
    expected_r1, expected_cgs = [], []
    for chunk in (500, 100):
        for draw in rng.integers(0, len(ids), size=(chunk, len(ids))):
            turns = [i for j in draw for i in by_d[ids[j]]]
            expected_r1.append(np.mean([rec["recall@1"][i] for i in turns]))
            gs, cd, pc = (
                np.mean([rec[m][i] for i in turns])
                for m in ("grounding_score", "citation_density", "provenance_coverage")
            )
            expected_cgs.append(composite(gs, cd, pc))
    np.testing.assert_allclose(reps["recall@1"], expected_r1, rtol=1e-12)
    np.testing.assert_allclose(reps["cgs"], expected_cgs, rtol=1e-12)  # the statistic itself, resampled


def test_intervals_match_scipy_bootstrap():
    from scipy.stats import bootstrap

    _, per_item = _turns(2, n_dialogues=60)
    t = iv.dialogue_table(per_item)
    ours = iv.intervals(t, ["recall@1", "cgs", "t2r"], n_boot=20_000, seed=3)
    s = t.sums
    c = t.counts
    arrays = (
        s["recall@1"],
        c["recall@1"],
        s["grounding_score"],
        s["citation_density"],
        s["provenance_coverage"],
        c["grounding_score"],
        s["t2r"],
        c["t2r"],
    )

    def stat(which):
        def f(r1s, r1c, gs, cd, pc, gc, ts, tc, axis=-1):
            if which == "recall@1":
                return r1s.sum(axis) / r1c.sum(axis)
            if which == "t2r":
                return ts.sum(axis) / tc.sum(axis)
            n = gc.sum(axis)
            return composite(gs.sum(axis) / n, cd.sum(axis) / n, pc.sum(axis) / n)

        return f

    for m in ("recall@1", "cgs", "t2r"):
        res = bootstrap(
            arrays,
            stat(m),
            paired=True,
            vectorized=True,
            n_resamples=20_000,
            method="percentile",
            confidence_level=0.95,
            random_state=np.random.default_rng(11),
        )
        low, high = res.confidence_interval
        width = high - low
        assert ours[m][0] == pytest.approx(low, abs=0.04 * width), m
        assert ours[m][1] == pytest.approx(high, abs=0.04 * width), m


def test_paired_differences_equal_paired_cluster_bootstrap():
    ids, per_item = _turns(4)
    other = {g: dict(items) for g, items in per_item.items()}
    rng = np.random.default_rng(5)
    rec = per_item["recommendation_turns"]
    other["recommendation_turns"]["recall@1"] = [float(x) for x in rng.random(len(rec["recall@1"])) < 0.6]
    a, b = iv.dialogue_table(per_item), iv.dialogue_table(other)
    ra, rb = iv.bootstrap([a, b], [["recall@1"], ["recall@1"]])
    low, high = iv.percentile_interval(ra["recall@1"] - rb["recall@1"])
    ref = stats.paired_cluster_bootstrap(
        rec["recall@1"], other["recommendation_turns"]["recall@1"], rec["dialogue_id"]
    )
    assert (low, high) == pytest.approx((ref["ci_low"], ref["ci_high"]), abs=1e-12)
    with pytest.raises(ValueError, match="different dialogue sets"):
        iv.bootstrap([a, iv.dialogue_table(_turns(4, n_dialogues=31)[1])])


def test_undefined_resamples_are_left_out_and_one_dialogue_gives_no_interval(caplog):
    per_item = {"dialogues": {"dialogue_id": ["a", "b", "c", "d"], "t2r": [None, 3.0, None, 2.0]}}
    [reps] = iv.bootstrap([iv.dialogue_table(per_item)], n_boot=1000)
    drawn = ~np.isnan(reps["t2r"])
    assert 0 < drawn.sum() < 1000 and ((reps["t2r"][drawn] >= 2.0) & (reps["t2r"][drawn] <= 3.0)).all()
    low, high = iv.percentile_interval(reps["t2r"])
    assert low < high  # b and d: an interval with a width
    assert iv.percentile_interval(np.array([np.nan, np.nan])) is None
    # items from one dialogue only: every resample repeats 2.0; no variance, so no interval (not a zero width)
    one = iv.dialogue_table(
        {"dialogues": {"dialogue_id": ["a", "b", "c", "d"], "t2r": [None, None, None, 2.0]}}
    )
    assert iv.no_variance(one, "t2r") and not iv.no_variance(iv.dialogue_table(per_item), "t2r")
    with caplog.at_level("WARNING", logger="trace_metrics.lib.intervals"):
        [flat] = iv.bootstrap([one], n_boot=1000)
    assert np.isnan(flat["t2r"]).all() and iv.percentile_interval(flat["t2r"]) is None
    assert iv.intervals(one, ["t2r"], n_boot=100) == {}
    assert "no interval for t2r" in caplog.text


def test_encode_decode_round_trip_is_deterministic():
    _, per_item = _turns(6)
    t = iv.dialogue_table(per_item, cd_gate=0.1)
    stored = iv.encode(t)
    assert stored == iv.encode(iv.dialogue_table(per_item, cd_gate=0.1))  # same table, same bytes
    back = iv.decode(stored)
    assert back.dialogues == t.dialogues and back.n_dialogues == t.n_dialogues and back.cd_gate == 0.1
    for m in t.sums:
        assert (
            back.sums[m].tobytes() == t.sums[m].tobytes() and back.counts[m].tolist() == t.counts[m].tolist()
        )
    assert stored["counts_dtype"] == "|u1"  # at most 4 turns per dialogue: one byte per count
    with pytest.raises(ValueError, match="corrupt"):
        iv.decode({**stored, "data": stored["data"][:-8] + "AAAAAAAA"})
    with pytest.raises(ValueError, match="side file"):
        iv.decode({k: v for k, v in stored.items() if k != "data"})
    with pytest.raises(ValueError, match="format"):
        iv.decode({**stored, "format": "other/9"})


def test_point_values_equal_what_the_suite_reports(data_dir, reference_rows, tmp_path):
    from trace_dataset.io import write_jsonl
    from trace_metrics.lib import suite

    reference_rows[2]["ranked_poi_ids"] = reference_rows[2]["ranked_poi_ids"][::-1]
    path = tmp_path / "p.jsonl"
    write_jsonl(path, reference_rows)
    result = suite.evaluate_run(data_dir, path)
    t = iv.dialogue_table(result["per_item"])
    for m, v in result["values"].items():
        if v is not None:
            assert iv.point_value(t, m) == pytest.approx(v, abs=1e-12), m
    assert set(t.metrics()) >= {m for m, v in result["values"].items() if v is not None}


def test_fake_result_helper_matches_the_table():
    _, per_item = _turns(8)
    r = fake_result(per_item)
    t = iv.dialogue_table(r["per_item"])
    assert iv.point_value(t, "cgs") == pytest.approx(r["values"]["cgs"])


def test_one_dialogue_gives_no_significance_marks():
    """With one dialogue every interval had zero width and any difference was marked significant."""
    one = {
        "dialogues": {"dialogue_id": ["a"]},
        "recommendation_turns": {"dialogue_id": ["a", "a"], "recall@1": [1.0, 0.0]},
    }
    other = {
        "dialogues": {"dialogue_id": ["a"]},
        "recommendation_turns": {"dialogue_id": ["a", "a"], "recall@1": [0.0, 0.0]},
    }
    ta, tb = iv.dialogue_table(one), iv.dialogue_table(other)
    ra, rb = iv.bootstrap([ta, tb], [["recall@1"], ["recall@1"]], n_boot=200)
    found = mark_group([ta, tb], [{"recall@1": 0.5}, {"recall@1": 0.0}], [ra, rb], {"recall@1": True})
    assert found.tied == [{}, {}]  # no mark either way
    # with two dialogues the same comparison is made again
    two = {
        "dialogues": {"dialogue_id": ["a", "b"]},
        "recommendation_turns": {"dialogue_id": ["a", "b"], "recall@1": [1.0, 1.0]},
    }
    low = {
        "dialogues": {"dialogue_id": ["a", "b"]},
        "recommendation_turns": {"dialogue_id": ["a", "b"], "recall@1": [0.0, 1.0]},
    }
    tables = [iv.dialogue_table(two), iv.dialogue_table(low)]
    r2a, r2b = iv.bootstrap(tables, [["recall@1"], ["recall@1"]], n_boot=200)
    found = mark_group(tables, [{"recall@1": 1.0}, {"recall@1": 0.5}], [r2a, r2b], {"recall@1": True})
    assert found.tied[0] == {"recall@1": True} and found.tied[1]["recall@1"] in (True, False)
