"""Exposure of a catalogue's items across many recommendation lists: Gini, normalised entropy, coverage.

Collab-REC (Table 3) reads popularity bias off the distribution of recommendations over the *full* catalogue:
every catalogue item counts, including the ones never recommended (exposure 0). That is what makes TopPop
(the same 10 of 200 cities for every query) score Gini 1 - 10/200 = 0.95 and normalised entropy
ln 10 / ln 200 = 0.43, the paper's reference values. Items outside the catalogue (hallucinations) are not part
of the distribution; `exposure_counts` returns how many there were so callers can report them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence


def exposure_counts(lists: Iterable[Sequence[str]], catalogue: Sequence[str]) -> tuple[list[int], int]:
    """(times each catalogue item is recommended, in catalogue order; items outside the catalogue)."""
    counts: Counter[str] = Counter()
    for items in lists:
        counts.update(items)
    known = set(catalogue)
    outside = sum(n for item, n in counts.items() if item not in known)
    return [counts.get(item, 0) for item in catalogue], outside


def gini(counts: Sequence[float]) -> float:
    """Gini index of non-negative exposures (0 = equal, 1 - 1/n = one item takes everything); 0 if none."""
    if any(c < 0 for c in counts):
        raise ValueError("exposure counts must be non-negative")
    n, total = len(counts), float(sum(counts))
    if n == 0 or total == 0:
        return 0.0
    ordered = sorted(counts)
    weighted = sum((2 * i - n - 1) * c for i, c in enumerate(ordered, start=1))
    return weighted / (n * total)


def normalised_entropy(counts: Sequence[float]) -> float:
    """Shannon entropy of the exposure distribution divided by ln(catalogue size); 0 if nothing is exposed."""
    n, total = len(counts), float(sum(counts))
    if n <= 1 or total == 0:
        return 0.0
    entropy = -sum((c / total) * math.log(c / total) for c in counts if c > 0)
    return entropy / math.log(n)


def coverage(counts: Sequence[float]) -> float:
    """Share of catalogue items recommended at least once."""
    return sum(1 for c in counts if c > 0) / len(counts) if counts else 0.0


def recs_per_covered_item(counts: Sequence[float]) -> float:
    """Recommendations per item that was recommended at all (Table 3's "avg #recs/city")."""
    covered = sum(1 for c in counts if c > 0)
    return float(sum(counts)) / covered if covered else 0.0


def exposure_summary(lists: Iterable[Sequence[str]], catalogue: Sequence[str]) -> dict[str, float | int]:
    """gini, entropy (normalised), coverage, avg_recs_per_item and out_of_catalogue for lists over a catalogue."""
    if not catalogue:
        raise ValueError("exposure needs a non-empty catalogue")
    counts, outside = exposure_counts(lists, catalogue)
    return {
        "gini": gini(counts),
        "entropy": normalised_entropy(counts),
        "coverage": coverage(counts),
        "avg_recs_per_item": recs_per_covered_item(counts),
        "out_of_catalogue": outside,
    }
