"""Sensitivity sweeps of App. L, recomputed from the per-turn analyses without touching the text again.

- fuzzy threshold (Table 16): GS at 0.7, 0.8, 0.9 and exact substring match;
- CD gate: CGS with gate 0.03, 0.05, 0.10;
  (in these tables `cgs` is the formula on the GS/CD/PC means, as the leaderboard's `cgs`, and `cgs_turn_mean`
  the mean of per-turn CGS)
- CGS formula (App. L "CGS formula sensitivity"): with D = min(1, CD/0.05) and P = 0.5 + 0.5 PC,
  `threshold_0.03` and `threshold_0.10` (the gate), `no_pc_floor` (GS x D x PC), `sqrt_pc` (GS x D x sqrt(PC)),
  `geometric` ((GS x D x P)^(1/3)), `harmonic` (3 / (1/GS + 1/D + 1/P), 0 when a component is 0), `additive`
  ((GS + D + P) / 3). The paper announces eight alternatives but names these seven; the eighth here is
  `gs0` = GS x 1[CD > 0], the alternative App. L discusses under "Why not simply set GS=0". Each is reported
  as the mean of per-turn values and, as the paper's tables aggregate, applied to the GS/CD/PC means.
- PC window: PC at 20, 40, 80, 160 characters (the paper names the window tunable, not its grid);
- spatial radius (Table 18): spatial coherence at 1, 1.5, 2, 3, 5 km.
The NLI threshold sweep belongs to the entailment metric (`entailment.rescore`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.grounding import (
    DEFAULT_CD_GATE,
    DEFAULT_FUZZY_THRESHOLD,
    DEFAULT_PC_WINDOW,
    GroundingAnalysis,
    Threshold,
    composite,
    of_means,
)
from trace_metrics.lib.practical import SPATIAL_SWEEP_KM, coherence_from_distances, spatial_id

FUZZY_SWEEP: tuple[Threshold, ...] = (0.7, 0.8, 0.9, "exact")
CD_GATE_SWEEP: tuple[float, ...] = (0.03, 0.05, 0.10)
PC_WINDOW_SWEEP: tuple[int, ...] = (20, 40, 80, 160)


def _d(cd: float, gate: float = DEFAULT_CD_GATE) -> float:
    return min(1.0, cd / gate)


def _p(pc: float) -> float:
    return 0.5 + 0.5 * pc


def _harmonic(*xs: float) -> float:
    return 0.0 if any(x <= 0 for x in xs) else len(xs) / sum(1.0 / x for x in xs)


CGS_VARIANTS: dict[str, Callable[[float, float, float], float]] = {
    "cgs": lambda gs, cd, pc: composite(gs, cd, pc, DEFAULT_CD_GATE),
    "threshold_0.03": lambda gs, cd, pc: composite(gs, cd, pc, 0.03),
    "threshold_0.10": lambda gs, cd, pc: composite(gs, cd, pc, 0.10),
    "no_pc_floor": lambda gs, cd, pc: gs * _d(cd) * pc,
    "sqrt_pc": lambda gs, cd, pc: gs * _d(cd) * math.sqrt(pc),
    "geometric": lambda gs, cd, pc: (gs * _d(cd) * _p(pc)) ** (1.0 / 3.0),
    "harmonic": lambda gs, cd, pc: _harmonic(gs, _d(cd), _p(pc)),
    "additive": lambda gs, cd, pc: (gs + _d(cd) + _p(pc)) / 3.0,
    "gs0": lambda gs, cd, pc: gs if cd > 0 else 0.0,
}


def _key(x: float | str) -> str:
    return x if isinstance(x, str) else f"{x:g}"


def _cgs_pair(gs: Sequence[float], cd: Sequence[float], pc: Sequence[float], gate: float) -> dict:
    """`cgs` (the formula on the means) and `cgs_turn_mean` (the mean of per-turn values) at one setting."""
    return {
        "cgs": of_means(mean_or_none(gs), mean_or_none(cd), mean_or_none(pc), gate),
        "cgs_turn_mean": mean_or_none([composite(x, d, p, gate) for x, d, p in zip(gs, cd, pc, strict=True)]),
    }


def grounding_sweeps(
    analyses: Sequence[GroundingAnalysis],
    fuzzy_threshold: Threshold = DEFAULT_FUZZY_THRESHOLD,
    cd_gate: float = DEFAULT_CD_GATE,
    pc_window: float = DEFAULT_PC_WINDOW,
) -> dict:
    """Every grounding sweep; parameters not swept stay at the run's values."""
    gs = [a.grounding_score(fuzzy_threshold) for a in analyses]
    cd = [a.citation_density() for a in analyses]
    pc = [a.provenance_coverage(pc_window) for a in analyses]
    out: dict = {"n": len(analyses)}
    out["fuzzy_threshold"] = {}
    for t in FUZZY_SWEEP:
        gst = [a.grounding_score(t) for a in analyses]
        out["fuzzy_threshold"][_key(t)] = {
            "grounding_score": mean_or_none(gst),
            **_cgs_pair(gst, cd, pc, cd_gate),
        }
    out["cd_gate"] = {_key(gate): _cgs_pair(gs, cd, pc, gate) for gate in CD_GATE_SWEEP}
    out["pc_window"] = {}
    for w in PC_WINDOW_SWEEP:
        pcw = [a.provenance_coverage(w) for a in analyses]
        out["pc_window"][_key(w)] = {
            "provenance_coverage": mean_or_none(pcw),
            **_cgs_pair(gs, cd, pcw, cd_gate),
        }
    gs_mean, cd_mean, pc_mean = mean_or_none(gs), mean_or_none(cd), mean_or_none(pc)
    out["cgs_variants"] = {
        name: {
            "mean": mean_or_none([f(x, d, p) for x, d, p in zip(gs, cd, pc, strict=True)]),
            "of_means": None
            if gs_mean is None or cd_mean is None or pc_mean is None
            else f(gs_mean, cd_mean, pc_mean),
        }
        for name, f in CGS_VARIANTS.items()
    }
    return out


def spatial_sweep(
    pair_distances: Sequence[Sequence[float]], radii: Sequence[float] = SPATIAL_SWEEP_KM
) -> dict:
    """Spatial coherence at each radius from each dialogue's pairwise distances."""
    out: dict = {}
    for r in radii:
        values = [coherence_from_distances(ds, r) for ds in pair_distances]
        out[spatial_id(r)] = {"value": mean_or_none(values), "n": sum(v is not None for v in values)}
    return out
