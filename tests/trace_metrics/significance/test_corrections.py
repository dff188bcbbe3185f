"""Holm and Benjamini-Hochberg against statsmodels' `multipletests` on constructed p-values; families."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from trace_metrics.lib.significance import Family, adjust, correct_families

STATSMODELS = {"holm": "holm", "bh": "fdr_bh"}


def _cases():
    rng = np.random.default_rng(7)
    yield [0.01, 0.04, 0.03, 0.2, 0.5]  # the textbook example
    yield [0.0, 1.0, 0.05, 0.05, 0.05]  # zero, one, ties
    yield [0.001] * 4 + [0.9]
    yield list(rng.uniform(size=50))
    yield list(np.concatenate([rng.uniform(0, 0.001, 10), rng.uniform(size=90)]))  # some real effects
    yield [0.02]


@pytest.mark.parametrize("method", ["holm", "bh"])
@pytest.mark.parametrize("p", list(_cases()))
def test_adjusted_p_values_equal_statsmodels(method, p):
    reject, expected, _, _ = multipletests(p, alpha=0.05, method=STATSMODELS[method])
    got = adjust(p, method)
    assert got == pytest.approx(list(expected), abs=1e-15)
    assert [q <= 0.05 for q in got] == list(reject)  # the decision too


def test_none_leaves_p_values_and_missing_ones_are_not_members():
    assert adjust([0.01, None, 0.2], "none") == [0.01, None, 0.2]
    # the missing test does not count in m: Holm over two tests, not three
    assert adjust([0.01, None, 0.04], "holm") == pytest.approx([0.02, None, 0.04])
    assert adjust([None, None], "bh") == [None, None]
    with pytest.raises(ValueError, match="unknown correction"):
        adjust([0.1], "bonferroni")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        adjust([1.5], "holm")


def test_families_are_corrected_apart():
    p = [0.01, 0.02, 0.01, 0.02, 0.3]
    keys = ["a", "a", "b", "b", None]
    adjusted, sizes = correct_families(p, keys, "holm")
    assert adjusted == pytest.approx([0.02, 0.02, 0.02, 0.02, None]) and sizes == {"a": 2, "b": 2}
    together, sizes = correct_families(p, ["x"] * 5, "holm")
    assert together == pytest.approx(list(multipletests(p, method="holm")[1])) and sizes == {"x": 5}


def test_family_parse_and_keys():
    assert Family.parse("board").key("mrr") == "board"
    assert Family.parse("column").key("mrr") == "mrr"
    named = Family.parse("recall@1, mrr")
    assert named == Family("metrics", ("recall@1", "mrr")) and named.key("mrr") == "named"
    assert named.key("cgs") is None and named.describe() == "metrics recall@1, mrr"
    with pytest.raises(ValueError, match="metric ids"):
        Family.parse(" , ")
    with pytest.raises(ValueError, match="unknown family"):
        Family("pairs")
