"""How far a number a model made can be trusted: the checks of the judge, CoRE and the simulated traveller.

    verdict     the three verdicts, the documented threshold of every check, and the grading rule
    agreement   Kendall tau_b between two system rankings, with a bootstrap interval over the shared items
    simulator   the simulated traveller's statistics: shares counted in dialogues, first-turn wins, margins

The reports that use them: `trace_metrics.core` (CoRE and the LLM judge) and the interactive protocol's
simulator report. docs/metrics_models.md ("Reliability") says what each check measures and where it comes from.
"""

from __future__ import annotations

from trace_metrics.lib.reliability.agreement import ranking_agreement
from trace_metrics.lib.reliability.verdict import (
    CARE,
    NOT_RELIABLE,
    RELIABLE,
    THRESHOLDS,
    VERDICTS,
    Threshold,
    grade,
    worst,
)

__all__ = [
    "CARE",
    "NOT_RELIABLE",
    "RELIABLE",
    "THRESHOLDS",
    "VERDICTS",
    "Threshold",
    "grade",
    "ranking_agreement",
    "worst",
]
