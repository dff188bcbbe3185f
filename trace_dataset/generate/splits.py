"""Official splits: 70 / 15 / 15, stratified by city x POI type, seeded (paper §2.1: seed 42)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from trace_dataset.constants import SPLIT_SHARES, SPLITS


def split_counts(n: int) -> dict[str, int]:
    """Largest-remainder 70/15/15 of n items (ties go to the earlier split)."""
    raw = {s: n * SPLIT_SHARES[s] for s in SPLITS}
    counts = {s: int(raw[s]) for s in SPLITS}
    left = n - sum(counts.values())
    for s in sorted(SPLITS, key=lambda s: (-round(raw[s] - counts[s], 9), SPLITS.index(s)))[:left]:
        counts[s] += 1
    return counts


def stratified_counts(sizes: dict[tuple[str, str], int]) -> dict[tuple[str, str], dict[str, int]]:
    """Per-cell split counts: each cell gets floor(n_c x share) per split, and the leftover units go, one per
    split per cell at most, to the splits furthest below the corpus-wide 70/15/15 target, so the totals
    are exact and every cell is within one dialogue of its own 70/15/15."""
    base = {c: {s: int(n * SPLIT_SHARES[s]) for s in SPLITS} for c, n in sizes.items()}
    target = split_counts(sum(sizes.values()))
    deficit = {s: target[s] - sum(b[s] for b in base.values()) for s in SPLITS}
    for c in sorted(sizes):
        left = sizes[c] - sum(base[c].values())
        for _ in range(left):
            options = [s for s in SPLITS if base[c][s] == int(sizes[c] * SPLIT_SHARES[s])] or list(SPLITS)
            s = max(options, key=lambda s: (deficit[s], -SPLITS.index(s)))
            base[c][s] += 1
            deficit[s] -= 1
    return base


def assign_splits(cells: Sequence[tuple[str, str]], seed: int) -> list[str]:
    """The split of each dialogue, given each dialogue's (city, poi_type): within every cell the dialogue
    indices are shuffled with `seed` and cut by `stratified_counts`."""
    by_cell: dict[tuple[str, str], list[int]] = {}
    for i, cell in enumerate(cells):
        by_cell.setdefault((cell[0], cell[1]), []).append(i)
    counts = stratified_counts({c: len(v) for c, v in by_cell.items()})
    out = [""] * len(cells)
    for cell in sorted(by_cell):
        idx = by_cell[cell]
        random.Random(f"{seed}:split:{cell[0]}:{cell[1]}").shuffle(idx)
        pos = 0
        for split in SPLITS:
            k = counts[cell][split]
            for i in idx[pos : pos + k]:
                out[i] = split
            pos += k
    return out
