"""Meta-evaluation statistics against values computed independently (scikit-learn's kappa with an explicit
label set, rank correlations by hand) on hand-made vectors, and the file-level agreement report."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from sklearn import metrics as sklearn_metrics  # the test extra: an independent kappa

from trace_dataset.io import TraceDataError
from trace_metrics.core.meta import (
    LABELS,
    correlation,
    coupling,
    load_scores,
    meta_evaluate,
    meta_evaluate_files,
    quadratic_weighted_kappa,
    ranking,
)
from trace_metrics.core.prompts import FACTOR_IDS

A = [0, 1, 2, 3, 4, 4, 3, 2, 2, 1]
B = [0, 2, 2, 3, 3, 4, 4, 1, 2, 0]
NARROW_A = [1, 2, 2, 3, 3, 2]  # labels 0 and 4 unused on both sides
NARROW_B = [1, 3, 2, 3, 2, 2]
GAP_A = [0, 1, 4, 4, 1, 1, 4]  # labels 2 and 3 unused on both sides
GAP_B = [1, 1, 4, 1, 0, 1, 4]


def brute_tau_b(x, y):
    """Kendall tau_b by counting pairs: (C - D) / sqrt((n0 - n1)(n0 - n2))."""
    concordant = discordant = ties_x = ties_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        if dx == 0 and dy == 0:
            ties_x += 1
            ties_y += 1
        elif dx == 0:
            ties_x += 1
        elif dy == 0:
            ties_y += 1
        elif dx == dy:
            concordant += 1
        else:
            discordant += 1
    n0 = len(x) * (len(x) - 1) / 2
    return (concordant - discordant) / np.sqrt((n0 - ties_x) * (n0 - ties_y))


def average_ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def hand_spearman(x, y):
    return float(np.corrcoef(average_ranks(x), average_ranks(y))[0, 1])


@pytest.mark.parametrize(
    ("a", "b"), [(A, B), (NARROW_A, NARROW_B), (GAP_A, GAP_B), ([4, 4, 0, 0], [0, 0, 4, 4]), (A, A)]
)
def test_qwk_equals_sklearn_with_the_explicit_label_set(a, b):
    expected = sklearn_metrics.cohen_kappa_score(a, b, weights="quadratic", labels=list(LABELS))
    assert quadratic_weighted_kappa(a, b) == pytest.approx(expected)


def test_qwk_by_hand_and_why_the_label_set_matters():
    # 2x2 table on labels {0, 4}: perfect disagreement gives -1 whatever the label set
    assert quadratic_weighted_kappa([4, 4, 0, 0], [0, 0, 4, 4]) == pytest.approx(-1.0)
    assert quadratic_weighted_kappa([0, 1], [0, 1]) == pytest.approx(1.0)
    # labels inferred from the data ({0, 1, 4} here) are re-indexed 0, 1, 2: a 1-vs-4 disagreement then weighs
    # as much as 0-vs-1 instead of nine times more, and the value changes; hence the explicit 0-4 set
    explicit = quadratic_weighted_kappa(GAP_A, GAP_B)
    inferred = sklearn_metrics.cohen_kappa_score(GAP_A, GAP_B, weights="quadratic")
    assert explicit == pytest.approx(0.6907630522088353) and inferred == pytest.approx(0.5333333333333333)
    # by hand: O and E on the five labels, W_ij = (i-j)^2 / 16
    observed = np.zeros((5, 5))
    for x, y in zip(A, B, strict=True):
        observed[x, y] += 1
    expected = np.outer(observed.sum(1), observed.sum(0)) / len(A)
    weights = np.array([[(i - j) ** 2 / 16 for j in range(5)] for i in range(5)])
    assert quadratic_weighted_kappa(A, B) == pytest.approx(
        1 - (weights * observed).sum() / (weights * expected).sum()
    )


def test_qwk_edge_cases():
    assert quadratic_weighted_kappa([], []) is None
    assert quadratic_weighted_kappa([2, 2, 2], [2, 2, 2]) is None  # no expected disagreement: undefined
    assert quadratic_weighted_kappa([2], [3]) is None  # one pair: too few (it gave 0.0 whatever the ratings)
    assert quadratic_weighted_kappa([2, 3], [3, 2]) is not None
    with pytest.raises(ValueError, match="not in the label set"):
        quadratic_weighted_kappa([5], [4])
    with pytest.raises(ValueError, match="pairs"):
        quadratic_weighted_kappa([1, 2], [1])


@pytest.mark.parametrize(
    ("x", "y"), [(A, B), (NARROW_A, NARROW_B), ([10.0, 55.5, 70, 90, 20], [30, 50, 65, 95, 5])]
)
def test_rank_correlations_equal_hand_computation(x, y):
    got = correlation(x, y)
    assert got["n"] == len(x)
    assert got["spearman"] == pytest.approx(hand_spearman(x, y))
    assert got["kendall_tau_b"] == pytest.approx(brute_tau_b(x, y))
    assert 0 <= got["spearman_p"] <= 1 and 0 <= got["kendall_p"] <= 1


def test_undefined_correlations_say_why():
    assert correlation([1], [2])["note"] == "fewer than two pairs"
    res = correlation([1, 1, 1], [1, 2, 3])
    assert res["spearman"] is None and res["kendall_tau_b"] is None and res["note"] == "one side is constant"


def _scores(rows):
    return {(i, f): s for i, f, s in rows}


def test_coupling_matrix():
    rows = []
    coherence = [0, 1, 2, 3, 4]
    recover = [0, 1, 2, 4, 3]
    novelty = [4, 3, 2, 1, 0]
    for k in range(5):
        rows += [
            (f"d{k}:s", "coherence", coherence[k]),
            (f"d{k}:s", "recoverability", recover[k]),
            (f"d{k}:s", "novelty", novelty[k]),
            (f"d{k}:s", "diversity", 2),
        ]
    res = coupling(_scores(rows))
    m = res["kendall_tau_b"]
    i = {f: FACTOR_IDS.index(f) for f in ("coherence", "recoverability", "novelty", "diversity")}
    assert m[i["coherence"]][i["recoverability"]] == pytest.approx(brute_tau_b(coherence, recover))
    assert m[i["coherence"]][i["novelty"]] == pytest.approx(-1.0)
    assert m[i["novelty"]][i["coherence"]] == m[i["coherence"]][i["novelty"]]
    assert m[i["coherence"]][i["diversity"]] is None  # constant diversity: undefined
    assert m[i["coherence"]][i["coherence"]] == 1.0 and m[i["diversity"]][i["diversity"]] == 1.0
    assert m[FACTOR_IDS.index("groundness")][FACTOR_IDS.index("groundness")] is None  # never rated
    defined = [brute_tau_b(coherence, recover), -1.0, brute_tau_b(recover, novelty)]
    assert res["mean_abs"] == pytest.approx(np.mean(np.abs(defined))) and res["n_pairs_defined"] == 3
    assert res["n_logs"] == 5


def test_ranking_agreement_between_systems():
    core = _scores(
        [
            ("d1:a", "coherence", 4),
            ("d2:a", "coherence", 3),
            ("d1:b", "coherence", 2),
            ("d2:b", "coherence", 2),
            ("d1:c", "coherence", 0),
            ("d2:c", "coherence", 1),
        ]
    )
    human = _scores(
        [
            ("d1:a", "coherence", 3),
            ("d2:a", "coherence", 3),
            ("d1:b", "coherence", 0),
            ("d2:b", "coherence", 1),
            ("d1:c", "coherence", 2),
            ("d2:c", "coherence", 2),
        ]
    )
    res = ranking(core, human, {}, "coherence", "coherence")
    assert res["systems"] == ["a", "b", "c"]
    assert res["core_means"] == {"a": 3.5, "b": 2.0, "c": 0.5}
    assert res["human_means"] == {"a": 3.0, "b": 0.5, "c": 2.0}
    assert res["kendall_tau_b"] == pytest.approx(brute_tau_b([3.5, 2.0, 0.5], [3.0, 0.5, 2.0]))
    one = ranking({("d1:a", "coherence"): 1}, {("d1:a", "coherence"): 1}, {}, "coherence", "coherence")
    assert one["kendall_tau_b"] is None and one["note"] == "needs two or more systems"


def test_meta_evaluate_per_factor_pooled_overall():
    core, human = {}, {}
    for k, (c, h) in enumerate(zip(A, B, strict=True)):
        log = f"d{k}:{'ab'[k % 2]}"
        core[(log, "coherence")], human[(log, "coherence")] = c, h
        core[(log, "naturalness")], human[(log, "naturalness")] = (None if k == 0 else h), c
        core[(log, "overall")], human[(log, "overall")] = 10.0 * c + k, 20.0 * h
        core[(log, "factor_mean")] = c / 2
    human[("d99:a", "coherence")] = 3  # CoRE never scored this log
    res = meta_evaluate(core, human)
    coh = res["factors"]["coherence"]
    assert coh["n"] == 10 and coh["n_missing_core"] == 1
    assert coh["qwk"] == pytest.approx(
        sklearn_metrics.cohen_kappa_score(A, B, weights="quadratic", labels=list(LABELS))
    )
    assert coh["core_mean"] == pytest.approx(np.mean(A)) and coh["human_mean"] == pytest.approx(np.mean(B))
    nat = res["factors"]["naturalness"]
    assert nat["n"] == 9 and nat["n_missing_core"] == 1  # a null CoRE rating is counted, not paired
    assert res["factors"]["novelty"]["n"] == 0 and res["factors"]["novelty"]["qwk"] is None
    pooled_core = A + B[1:]
    pooled_human = B + A[1:]
    assert res["pooled"]["n"] == 19
    assert res["pooled"]["qwk"] == pytest.approx(
        sklearn_metrics.cohen_kappa_score(pooled_core, pooled_human, weights="quadratic", labels=list(LABELS))
    )
    assert (
        res["macro"]["qwk"] == pytest.approx((coh["qwk"] + nat["qwk"]) / 2)
        and res["macro"]["n_factors"]["qwk"] == 2
    )
    overall = res["overall"]["multi_agent"]
    x = [10.0 * c + k for k, c in enumerate(A)]
    y = [20.0 * h for h in B]
    assert overall["spearman"] == pytest.approx(hand_spearman(x, y))
    assert overall["kendall_tau_b"] == pytest.approx(brute_tau_b(x, y))
    assert res["overall"]["factor_mean"]["kendall_tau_b"] == pytest.approx(brute_tau_b([c / 2 for c in A], y))
    assert res["n"]["shared_logs"] == 10 and res["label_set"] == [0, 1, 2, 3, 4]
    assert res["ranking"]["per_factor"]["coherence"]["systems"] == ["a", "b"]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_files_and_their_errors(tmp_path):
    core = _write(
        tmp_path / "scores.jsonl",
        [
            {"id": "d1:tfidf", "factor": "coherence", "score": 3, "system": "tfidf"},
            {"id": "d2:tfidf", "factor": "coherence", "score": None},
        ],
    )
    human = _write(
        tmp_path / "human.jsonl",
        [
            {"id": "d1:tfidf", "factor": "coherence", "score": 2},
            {"id": "d2:tfidf", "factor": "coherence", "score": 4.0},
        ],
    )
    res = meta_evaluate_files(core, human)
    assert res["factors"]["coherence"]["n"] == 1 and res["factors"]["coherence"]["n_missing_core"] == 1
    scores, systems = load_scores(core)
    assert scores[("d2:tfidf", "coherence")] is None and systems == {"d1:tfidf": "tfidf", "d2:tfidf": "tfidf"}
    bad = {
        "factor 'charm'": {"id": "x:s", "factor": "charm", "score": 1},
        "expected an integer in": {"id": "x:s", "factor": "coherence", "score": 3.5},
        "expected 0-100": {"id": "x:s", "factor": "overall", "score": 101},
        "missing field 'score'": {"id": "x:s", "factor": "overall"},
        "field 'id'": {"factor": "overall", "score": 1},
        "expected a number or null": {"id": "x:s", "factor": "novelty", "score": "3"},
    }
    for message, row in bad.items():
        path = _write(tmp_path / "bad.jsonl", [{"id": "ok:s", "factor": "coherence", "score": 1}, row])
        with pytest.raises(TraceDataError, match=message) as info:
            load_scores(path)
        assert str(info.value).startswith(f"{path}:2: ")
    dup = _write(tmp_path / "dup.jsonl", [{"id": "a:s", "factor": "coherence", "score": 1}] * 2)
    with pytest.raises(TraceDataError, match="a second score"):
        load_scores(dup)
    with pytest.raises(TraceDataError, match="factor 'factor_mean'"):  # humans have no factor mean
        meta_evaluate_files(
            core, _write(tmp_path / "h2.jsonl", [{"id": "d1:tfidf", "factor": "factor_mean", "score": 1}])
        )
    other = _write(tmp_path / "h3.jsonl", [{"id": "zz:other", "factor": "coherence", "score": 1}])
    with pytest.raises(TraceDataError, match="no log id appears in both files"):
        meta_evaluate_files(core, other)
