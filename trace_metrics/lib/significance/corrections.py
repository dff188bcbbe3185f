"""Multiple-comparison control: adjusted p-values over one family of tests.

- `holm` (default): Holm's step-down procedure (Holm 1979), which controls the family-wise error rate (the
  chance of any false "significant") under any dependence between the tests. Sorted p_(1) <= ... <= p_(m),
  the adjusted p_(i) is max over j <= i of min(1, (m - j + 1) p_(j)).
- `bh`: Benjamini-Hochberg's step-up procedure (Benjamini & Hochberg 1995), which controls the false
  discovery rate (the expected share of false ones among the "significant"), for independent or positively
  dependent tests. The adjusted p_(i) is min over j >= i of min(1, m p_(j) / j).
- `none`: the p-values as they are.

A test is significant at level alpha when its adjusted p-value is at most alpha. Missing p-values (None: a
test that could not be run) are not members of the family: they neither count in m nor get an adjusted value.
The adjusted values equal statsmodels' `multipletests(method="holm" / "fdr_bh")` (tested).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

CORRECTIONS: tuple[str, ...] = ("holm", "bh", "none")
DEFAULT_CORRECTION = "holm"
NAMES: dict[str, str] = {
    "holm": "Holm (family-wise error rate)",
    "bh": "Benjamini-Hochberg (false discovery rate)",
    "none": "no correction",
}


def check_correction(method: str) -> str:
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}; expected one of {CORRECTIONS}")
    return method


def adjust(pvalues: Sequence[float | None], method: str = DEFAULT_CORRECTION) -> list[float | None]:
    """The adjusted p-values of one family (module docstring), in the order given; None stays None."""
    check_correction(method)
    where = [i for i, p in enumerate(pvalues) if p is not None]
    p = np.array([pvalues[i] for i in where], dtype=float)
    if p.size and (np.isnan(p).any() or (p < 0).any() or (p > 1).any()):
        raise ValueError(f"p-values must lie in [0, 1]; got {p[np.isnan(p) | (p < 0) | (p > 1)][:3]}")
    out: list[float | None] = [None] * len(pvalues)
    if not p.size:
        return out
    m = p.size
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * ranked))
    elif method == "bh":
        adjusted = np.minimum.accumulate(np.minimum(1.0, m * ranked / np.arange(1, m + 1))[::-1])[::-1]
    else:
        adjusted = ranked
    back = np.empty(m)
    back[order] = adjusted
    for k, i in enumerate(where):
        out[i] = float(back[k])
    return out


def smallest_level(m: int, alpha: float, method: str = DEFAULT_CORRECTION) -> float:
    """The raw p-value a lone discovery in a family of `m` tests needs: alpha / m for Holm (its first step:
    above it nothing is significant) and for Benjamini-Hochberg (which can go higher only when several tests
    are small together), alpha without correction. A Monte Carlo p-value cannot go below 1 / (permutations
    + 1): above this level, a test cannot make a lone comparison significant."""
    check_correction(method)
    return alpha if method == "none" or m < 1 else alpha / m


# ---------------------------------------------------------------------------------------------------
# Families: which tests are corrected together
# ---------------------------------------------------------------------------------------------------
FAMILIES: tuple[str, ...] = ("board", "column")
DEFAULT_FAMILY = "board"
FAMILY_HELP = (
    "which tests are corrected together: 'board' (default: every comparison the table shows, all its "
    "columns), 'column' (each metric apart), or comma-separated metric ids (those metrics' comparisons as "
    "one family; the other metrics are not tested)"
)


@dataclass(frozen=True)
class Family:
    """A family of tests: `board` (every comparison of a table), `column` (one family per metric), or
    `metrics`: the comparisons of the metrics a user names (one family; other metrics are left untested)."""

    kind: str = DEFAULT_FAMILY
    metrics: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in (*FAMILIES, "metrics"):
            raise ValueError(f"unknown family {self.kind!r}; expected one of {(*FAMILIES, 'metrics')}")
        if (self.kind == "metrics") != bool(self.metrics):
            raise ValueError("a family of named metrics needs metric ids (and only it takes them)")

    @classmethod
    def parse(cls, text: str) -> Family:
        """'board', 'column' or 'id,id,...' (the command line's --family)."""
        text = text.strip()
        if text in FAMILIES:
            return cls(text)
        names = tuple(m.strip() for m in text.split(",") if m.strip())
        if not names:
            raise ValueError(f"family {text!r}: expected {' or '.join(FAMILIES)} or metric ids")
        return cls("metrics", names)

    def key(self, metric: str) -> str | None:
        """The family a metric's comparisons belong to; None: not tested."""
        if self.kind == "board":
            return "board"
        if self.kind == "column":
            return metric
        return "named" if metric in self.metrics else None

    def describe(self) -> str:
        """The family as a table's note says it ("board", "column", "metrics recall@1, mrr")."""
        return self.kind if self.kind != "metrics" else "metrics " + ", ".join(self.metrics)


def correct_families(
    pvalues: Sequence[float | None], keys: Sequence[str | None], method: str = DEFAULT_CORRECTION
) -> tuple[list[float | None], dict[str, int]]:
    """Adjusted p-values of tests grouped by family key (`Family.key`; None: not tested, no adjusted value),
    and the size of each family (the tests with a p-value)."""
    out: list[float | None] = [None] * len(pvalues)
    groups: dict[str, list[int]] = {}
    for i, k in enumerate(keys):
        if k is not None and pvalues[i] is not None:
            groups.setdefault(k, []).append(i)
    for members in groups.values():
        for i, p in zip(members, adjust([pvalues[i] for i in members], method), strict=True):
            out[i] = p
    return out, {k: len(v) for k, v in groups.items()}
