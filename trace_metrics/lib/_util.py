"""Small helpers shared by the metric functions."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def mean_or_none(values: Sequence[float | None]) -> float | None:
    """Mean of the defined values; None when there is none (a metric with n = 0 has no value, not 0)."""
    vals = [v for v in values if v is not None]
    return math.fsum(vals) / len(vals) if vals else None


def defined(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None]
