"""The verdict line of a reliability check: "reliable", "usable with care" or "not reliable".

Every check has one `Threshold` here (its two cut points, which direction is good, where the cut points come
from); the reports grade each figure with `grade` and a factor or column with the `worst` of its checks.

Grading rule (a choice, documented in docs/metrics_models.md): a figure is "reliable" when the pessimistic end
of its interval (the lower bound where higher is better, the upper bound where lower is better; the point
estimate where there is no interval) passes the `reliable` cut; "usable with care" when the point estimate
passes the `care` cut; "not reliable" otherwise. A figure that could not be computed (None) is graded None
("not measured"), never "reliable". Bias figures (a rank correlation with length) are graded on their absolute
value.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

RELIABLE = "reliable"
CARE = "usable with care"
NOT_RELIABLE = "not reliable"
VERDICTS: tuple[str, ...] = (RELIABLE, CARE, NOT_RELIABLE)  # best first


@dataclass(frozen=True)
class Threshold:
    """The cut points of one check: `reliable` and `care` on the figure's scale, in the good direction."""

    reliable: float
    care: float
    higher_is_better: bool
    absolute: bool  # grade |value| (a bias, whose sign says only its direction)
    source: str

    def __post_init__(self) -> None:
        ordered = self.reliable >= self.care if self.higher_is_better else self.reliable <= self.care
        if not ordered:
            raise ValueError(f"cut points {self.reliable} / {self.care} are in the wrong order")


THRESHOLDS: dict[str, Threshold] = {
    # Intraclass correlation of k repeated ratings: Koo & Li (2016) call < 0.5 poor, 0.5-0.75 moderate,
    # 0.75-0.9 good.
    "icc": Threshold(0.75, 0.5, True, False, "Koo & Li 2016, J. Chiropractic Medicine 15(2)"),
    # Share of items whose k ratings are all identical.
    "identical_share": Threshold(0.9, 0.7, True, False, "this package (one rating in ten may change)"),
    # Share of ratings that change when the candidates' or the debaters' order is permuted.
    "order_flip_rate": Threshold(0.1, 0.25, False, False, "this package (Zheng et al. 2023 position bias)"),
    # Spearman rho between a rating and the response's length: Cohen's small (0.1) and medium (0.3) effects.
    "length_rho": Threshold(0.1, 0.3, False, True, "Cohen 1988; AlpacaEval length-controlled win rate"),
    # Quadratic weighted kappa against human ratings: Landis & Koch (1977) substantial / moderate.
    "kappa": Threshold(0.6, 0.4, True, False, "Landis & Koch 1977, Biometrics 33(1)"),
    # Kendall tau_b between two system rankings (travellers, seeds, judge against humans).
    "kendall_tau": Threshold(0.7, 0.5, True, False, "SimulatorArena (rho about 0.7 for profiled simulators)"),
    # Share of traveller utterances that name or quote the target.
    "leak_rate": Threshold(0.01, 0.05, False, False, "SimpleUserSim (iEvaLM-style leaks inflate recall)"),
    # Share of dialogues won at the first recommendation turn.
    "first_turn_success": Threshold(
        0.5, 0.8, False, False, "this package (a traveller won at once tests little)"
    ),
    # Share of dialogues won with no system effort: at the first recommendation, every candidate a target.
    "no_effort_share": Threshold(
        0.05, 0.2, False, False, "this package (a dialogue any ranking wins tells systems nothing apart)"
    ),
    # Margin of the worst real system over the best deliberately bad one, on the column's own scale.
    "counterfactual_margin": Threshold(0.05, 0.0, True, False, "ConvApparel counterfactual validation"),
    # Share of LLM traveller replies that fell back to the rules policy.
    "fallback_share": Threshold(
        0.05, 0.2, False, False, "this package (fallbacks count beside every number)"
    ),
}


def _passes(t: Threshold, value: float, cut: float) -> bool:
    return value >= cut if t.higher_is_better else value <= cut


def grade(check: str, value: float | None, interval: tuple[float, float] | None = None) -> str | None:
    """The verdict of `value` (and its interval) on `check`'s thresholds; None where value is None."""
    if check not in THRESHOLDS:
        raise KeyError(f"unknown reliability check {check!r}; expected one of {sorted(THRESHOLDS)}")
    if value is None:
        return None
    t = THRESHOLDS[check]
    point = abs(value) if t.absolute else value
    pessimistic = point
    if interval is not None:
        ends = sorted(abs(e) for e in interval) if t.absolute else sorted(interval)
        if t.absolute and interval[0] <= 0.0 <= interval[1]:
            ends[0] = 0.0
        pessimistic = ends[0] if t.higher_is_better else ends[1]
    if _passes(t, pessimistic, t.reliable):
        return RELIABLE
    return CARE if _passes(t, point, t.care) else NOT_RELIABLE


def worst(verdicts: Iterable[str | None]) -> str | None:
    """The worst of the verdicts that were measured; None when none was."""
    measured = [v for v in verdicts if v is not None]
    unknown = [v for v in measured if v not in VERDICTS]
    if unknown:
        raise ValueError(f"unknown verdicts {unknown}; expected {VERDICTS}")
    return max(measured, key=VERDICTS.index) if measured else None
