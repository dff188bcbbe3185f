"""`evaluate --compare`'s statistics: the bootstrap as before, the randomization test and d_z beside it, and
`significant` after the correction over the compared metrics."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from trace_metrics.lib import stats
from trace_metrics.lib.significance import Family, compare

N = 40


def _per_item(rng, p):
    ids = [f"d{i:02d}" for i in range(N)]
    turns = [d for d in ids for _ in range(2)]
    return {
        "dialogues": {"dialogue_id": ids, "tsr": [float(x) for x in rng.random(N) < p]},
        "recommendation_turns": {
            "dialogue_id": turns,
            "turn_id": [t for _ in ids for t in (1, 3)],
            "recall@1": [float(x) for x in rng.random(2 * N) < p],
            "grounding_score": list(rng.uniform(0.8, 1.0, 2 * N)),
            "citation_density": list(rng.uniform(0.0, 0.1, 2 * N)),
            "provenance_coverage": [
                None if i % 7 == 0 else float(x) for i, x in enumerate(rng.uniform(size=2 * N))
            ],
        },
    }


@pytest.fixture(scope="module")
def runs():
    rng = np.random.default_rng(8)
    return _per_item(rng, 0.7), _per_item(rng, 0.4)


def test_bootstrap_unchanged_and_the_other_tests_beside_it(runs):
    a, b = runs
    found = compare(a, b, n_boot=1000, n_perm=1000)
    items = a["recommendation_turns"]
    boot = stats.paired_cluster_bootstrap(
        items["recall@1"], b["recommendation_turns"]["recall@1"], items["dialogue_id"], n_boot=1000
    )
    r = found["recall@1"]
    assert (r["delta"], r["ci_low"], r["ci_high"], r["p_bootstrap"]) == (
        boot["delta"],
        boot["ci_low"],
        boot["ci_high"],
        boot["p"],
    )
    assert r["p_randomization"] is not None and r["d_z"] is not None and r["ttest_p"] is not None
    assert found["cgs"]["p_randomization"] is not None and found["cgs"]["d_z"] is None
    assert found["provenance_coverage"]["n"] == 2 * N - len(range(0, 2 * N, 7))  # the items both have


def test_significant_is_the_corrected_decision(runs):
    a, b = runs
    found = compare(a, b, n_boot=1000, n_perm=1000)
    metrics = list(found)
    p = [found[m]["p_bootstrap"] for m in metrics]
    reject, adjusted, _, _ = multipletests(p, alpha=0.05, method="holm")
    assert [found[m]["p_adjusted"] for m in metrics] == pytest.approx(list(adjusted))
    assert [found[m]["significant"] for m in metrics] == list(reject)
    raw = compare(a, b, n_boot=1000, n_perm=1000, correction="none")
    for m in metrics:  # uncorrected, the bootstrap's mark is the interval excluding 0, as before
        c = raw[m]
        assert c["significant"] == (c["ci_low"] > 0 or c["ci_high"] < 0)
    by_t = compare(a, b, n_boot=200, n_perm=200, test="ttest", family=Family.parse("recall@1,tsr"))
    assert {m for m, c in by_t.items() if c["p_adjusted"] is not None} == {"recall@1", "tsr"}
    assert by_t["cgs"]["significant"] is None  # outside the named family (and no t-test for a formula)
