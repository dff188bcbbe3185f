"""The corrected marks of one group of runs: 20 runs of one system are all marked tied with the best after
Holm's correction (and not without it), while a constructed real difference survives the correction; each
test, family and correction; ranks and robustness come along."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.significance import table, value
from trace_metrics.lib import intervals as iv
from trace_metrics.lib.significance import Family, Settings, mark_group

N = 300  # dialogues
DIRECTIONS = {"recall@1": True, "tsr": True, "t2r": False}


def _system(rng, recall, success):
    """One run: three recommendation turns per dialogue (recall@1), success per dialogue (tsr), and the turns
    to success of the successful dialogues (t2r)."""
    hits = rng.binomial(3, recall, N)
    won = rng.random(N) < success
    turns = rng.integers(1, 5, N)
    return table(
        {"recall@1": hits, "tsr": won.astype(float), "t2r": np.where(won, turns, 0).astype(float)},
        {"recall@1": [3] * N, "tsr": [1] * N, "t2r": won.astype(int)},
    )


def _group(tables, metrics=tuple(DIRECTIONS), n_boot=2000):
    reps = iv.bootstrap(tables, [list(metrics)] * len(tables), n_boot=n_boot, seed=42)
    points = [{m: value(t, m) for m in metrics} for t in tables]
    return tables, points, reps


@pytest.fixture(scope="module")
def null_board():
    rng = np.random.default_rng(20)
    return _group([_system(rng, 0.4, 0.6) for _ in range(20)])


@pytest.fixture(scope="module")
def real_board():
    rng = np.random.default_rng(21)
    return _group([_system(rng, 0.4, 0.6) for _ in range(20)] + [_system(rng, 0.7, 0.9)])


def _untied(found):
    return sorted((i, m) for i, marks in enumerate(found.tied) for m, tie in marks.items() if not tie)


@pytest.mark.parametrize("test", ["bootstrap", "ttest", "randomization"])
def test_twenty_runs_of_one_system_are_all_tied_after_correction(null_board, test):
    settings = Settings(test=test, n_perm=2000)
    found = mark_group(*null_board, DIRECTIONS, settings)
    assert _untied(found) == []  # Holm over every pair of the 20 runs on the three columns
    assert all(found.family_size[i] == {m: 3 * 190 for m in DIRECTIONS} for i in range(20))
    raw = mark_group(*null_board, DIRECTIONS, Settings(test=test, correction="none", n_perm=2000))
    assert _untied(raw)  # without the correction, chance alone makes some "significantly worse than the best"


@pytest.mark.parametrize("test", ["bootstrap", "ttest", "randomization"])
@pytest.mark.parametrize("correction", ["holm", "bh"])
def test_a_real_difference_survives_the_correction(real_board, test, correction):
    settings = Settings(test=test, correction=correction, n_perm=20_000)  # 1/20,001 < alpha / 630
    found = mark_group(*real_board, DIRECTIONS, settings)
    assert found.warnings == []
    assert found.tied[20] == {"recall@1": True, "tsr": True, "t2r": True}  # the better system is the best
    for i in range(20):
        assert found.tied[i]["recall@1"] is False and found.tied[i]["tsr"] is False
    assert found.rank[20] == {"recall@1": 1, "tsr": 1, "t2r": found.rank[20]["t2r"]}
    assert found.rank_ci[20]["recall@1"] == [1, 1]
    lead = found.robustness[20]["recall@1"]
    assert lead["exact"] and lead["of"] == N and lead["removed"] > 30  # a lead of hundreds of hits


def test_too_few_permutations_are_said_and_make_nothing_significant(real_board, caplog):
    with caplog.at_level("WARNING"):
        found = mark_group(*real_board, DIRECTIONS, Settings(test="randomization", n_perm=1000))
    assert found.warnings and "use at least" in found.warnings[0] and "use at least" in caplog.text
    assert _untied(found) == []


def test_families(real_board):
    column = mark_group(*real_board, DIRECTIONS, Settings(family=Family("column")))
    assert column.family_size[0] == {m: 210 for m in DIRECTIONS}
    named = mark_group(*real_board, DIRECTIONS, Settings(family=Family.parse("tsr")))
    assert all(set(marks) == {"tsr"} for marks in named.tied)  # the other columns are not tested
    assert named.family_size[0] == {"tsr": 210} and named.rank[0].keys() == DIRECTIONS.keys()  # ranks stay


def test_equal_values_and_runs_without_variance():
    same = table({"tsr": [1.0, 0.0] * 10}, {"tsr": [1] * 20})
    flat = table({"tsr": [1.0] + [0.0] * 19}, {"tsr": [1] + [0] * 19})  # items from one dialogue only
    tables, points, reps = _group([same, same, flat], ("tsr",))
    found = mark_group(tables, points, reps, {"tsr": True})
    assert found.tied[0] == found.tied[1] == {"tsr": True}  # the best and its copy
    assert found.tied[2] == {} and found.rank[2] == {}  # no variance: takes no part
    with pytest.raises(ValueError, match="unknown test"):
        Settings(test="wilcoxon")


def test_why_the_family_holds_every_pair():
    """Boards of 20 runs of one system: correcting only the 19 comparisons with the (data-selected) best marks
    some run significantly worse on far more than 5% of boards; correcting every pair of runs holds 5%."""
    from scipy.stats import t as student

    from trace_metrics.lib.significance import adjust

    rng = np.random.default_rng(0)
    shown = every = 0
    boards = 200
    for _ in range(boards):
        x = rng.binomial(3, 0.4, size=(20, 300)) / 3
        best = int(np.argmax(x.mean(axis=1)))
        d = x[:, None, :] - x[None, :, :]  # every pair's per-dialogue differences
        with np.errstate(divide="ignore", invalid="ignore"):
            t = d.mean(axis=2) / (d.std(axis=2, ddof=1) / np.sqrt(300))
        p = np.where(np.eye(20, dtype=bool), 1.0, 2 * student.sf(np.abs(t), 299))
        others = [i for i in range(20) if i != best]
        shown += any(q <= 0.05 for q in adjust([p[best, i] for i in others], "holm"))
        pairs = [(i, j) for i in range(20) for j in range(i + 1, 20)]
        adjusted = dict(zip(pairs, adjust([p[i, j] for i, j in pairs], "holm"), strict=True))
        every += any(adjusted[(min(i, best), max(i, best))] <= 0.05 for i in others)
    assert shown / boards > 0.15 and every / boards <= 0.06
