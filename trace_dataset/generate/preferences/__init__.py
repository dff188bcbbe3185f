"""User preferences (constraints) and the predicate that decides whether a POI satisfies them."""

from __future__ import annotations

from trace_dataset.generate.preferences.constraints import (
    EVIDENCE_PHRASES,
    KINDS,
    REVISABLE_KINDS,
    TYPE_VALUES,
    Constraint,
    evidence_mentions,
    landmark_distance_km,
    satisfies,
    satisfies_all,
    violation_is_explicit,
)

__all__ = [
    "EVIDENCE_PHRASES",
    "KINDS",
    "REVISABLE_KINDS",
    "TYPE_VALUES",
    "Constraint",
    "evidence_mentions",
    "landmark_distance_km",
    "satisfies",
    "satisfies_all",
    "violation_is_explicit",
]
