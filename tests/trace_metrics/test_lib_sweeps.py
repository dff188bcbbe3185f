"""App. L sweeps: the CGS alternatives by hand, and the sweep tables."""

from __future__ import annotations

import math

import pytest

from trace_metrics.lib import grounding as g
from trace_metrics.lib import sweeps as sw
from trace_metrics.lib.practical import SPATIAL_SWEEP_KM


def test_cgs_variants_hand_computed():
    gs, cd, pc = 0.8, 0.02, 0.5  # D = min(1, 0.02/0.05) = 0.4, P = 0.75
    expected = {
        "cgs": 0.8 * 0.4 * 0.75,
        "threshold_0.03": 0.8 * (0.02 / 0.03) * 0.75,
        "threshold_0.10": 0.8 * 0.2 * 0.75,
        "no_pc_floor": 0.8 * 0.4 * 0.5,
        "sqrt_pc": 0.8 * 0.4 * math.sqrt(0.5),
        "geometric": (0.8 * 0.4 * 0.75) ** (1 / 3),
        "harmonic": 3 / (1 / 0.8 + 1 / 0.4 + 1 / 0.75),
        "additive": (0.8 + 0.4 + 0.75) / 3,
        "gs0": 0.8,
    }
    assert list(sw.CGS_VARIANTS) == list(expected)  # the paper's seven + gs0, after the current CGS
    for name, value in expected.items():
        assert sw.CGS_VARIANTS[name](gs, cd, pc) == pytest.approx(value), name
    assert sw.CGS_VARIANTS["harmonic"](1.0, 0.0, 1.0) == 0.0 and sw.CGS_VARIANTS["gs0"](1.0, 0.0, 1.0) == 0.0


def test_grounding_sweeps_tables():
    review = "The seafood gumbo was rich and smoky."
    analyses = [
        g.analyse('"The seafood gumbo was rich" [R1], quiet', [review]),
        g.analyse('"the seafood gumbo was rich" [R1]', [review]),  # fuzzy only
        g.analyse("no quote at all", []),
    ]
    out = sw.grounding_sweeps(analyses)
    assert out["n"] == 3
    assert out["fuzzy_threshold"]["exact"]["grounding_score"] == pytest.approx(2 / 3)  # 1, 0, 1 (no quotes)
    assert out["fuzzy_threshold"]["0.8"]["grounding_score"] == 1.0
    assert set(out["cd_gate"]) == {"0.03", "0.05", "0.1"} and set(out["pc_window"]) == {
        "20",
        "40",
        "80",
        "160",
    }
    assert len(out["cgs_variants"]) == 9
    assert out["cgs_variants"]["cgs"]["mean"] == pytest.approx(sum(a.cgs() for a in analyses) / 3)
    # the CD-gate table: cgs = the formula on the means, cgs_turn_mean = the mean of per-turn CGS
    gate = out["cd_gate"]["0.05"]
    assert gate["cgs_turn_mean"] == pytest.approx(sum(a.cgs() for a in analyses) / 3)
    means = [
        sum(f(a) for a in analyses) / 3
        for f in (
            g.GroundingAnalysis.grounding_score,
            g.GroundingAnalysis.citation_density,
            g.GroundingAnalysis.provenance_coverage,
        )
    ]
    assert gate["cgs"] == pytest.approx(g.composite(*means)) == out["cgs_variants"]["cgs"]["of_means"]


def test_spatial_sweep():
    out = sw.spatial_sweep([[0.5, 1.2, 4.0], [], [2.5]])
    assert list(out) == [f"spatial_coherence@{r:g}km" for r in SPATIAL_SWEEP_KM]
    assert out["spatial_coherence@1km"] == {"value": pytest.approx((1 / 3 + 0) / 2), "n": 2}
    assert out["spatial_coherence@5km"]["value"] == 1.0
