"""Small helpers shared by the metric functions."""

from __future__ import annotations

import math
from collections.abc import Iterable


def mean_or_none(values: Iterable[float | None]) -> float | None:
    """Mean of the defined values (`math.fsum`, correctly rounded); None when there is none (a metric with
    n = 0 has no value, not 0). The one such mean of the package: every metric, CoRE, Collab-REC and the human
    evaluation aggregate with it."""
    vals = [v for v in values if v is not None]
    return math.fsum(vals) / len(vals) if vals else None


def defined(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None]
