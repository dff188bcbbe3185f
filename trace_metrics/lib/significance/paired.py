"""Paired tests between runs of one dialogue set, from their per-dialogue sums and counts
(`trace_metrics.lib.intervals.DialogueTable`), each for many comparisons at once.

A comparison is (run a, run b, metric) on the same dialogues. Its statistic is the metric's own difference,
value_a - value_b, where a value is sum_d s_d / sum_d c_d (a ratio over dialogues) and `cgs` / `cgs_ent` the
CGS formula on three such ratios. Three tests, each two-sided:

- `bootstrap`: the paired cluster bootstrap (dialogues resampled with replacement, both runs on the same
  draws: `intervals.bootstrap`). Its interval is the percentile interval of the resampled differences; its
  p-value is the interval's dual, the smallest alpha whose (1 - alpha) percentile interval (numpy's linear
  interpolation) excludes 0: p = min(2 F(0+), 2 (1 - F(0-)), 1), F the interpolated distribution function of
  the resamples (`stats.bootstrap_pvalue`). So "p <= 0.05" and "the 95% interval excludes 0" agree (a
  difference only where p equals alpha exactly). p = 0 when every resample falls on one side: the bootstrap
  cannot resolve p below about 1 / n_boot.
- `randomization`: the paired randomization (permutation) test over dialogues (Fisher's; the test Smucker et
  al. 2007 recommend for comparing IR systems): under the null the two runs are exchangeable within each
  dialogue, so each of the 2^D assignments swaps or keeps each dialogue's (s_d, c_d) of a and b, and the
  statistic is recomputed. p = the share of assignments with |T*| >= |T|, where a |T*| within 1e-9 x
  (|value_a| + |value_b|) of |T| counts as equal: sums taken in another order differ in their last bits, and
  a test must not depend on them (nor on which other runs share the matrix product). Exact, enumerating
  every assignment, when 2^D <= the permutations asked for; otherwise Monte Carlo: that many random
  assignments from numpy `default_rng(seed)`, p = (1 + hits) / (1 + defined) (Phipson & Smyth 2010: never
  0). Every comparison shares one stream of assignments (one matrix product per chunk, as the bootstrap).
  An assignment whose statistic is undefined (a 0/0) is left out.
- `ttest`: the paper's per-dialogue paired t-test (App. K.3, `stats.paired_ttest`): each run's per-dialogue
  mean s_d / c_d, over the dialogues where both have items; scipy's t distribution. It tests the mean of
  per-dialogue means, which weights dialogues equally where the metric weights items; the CGS formulas have no
  per-dialogue value, so no t-test.

Effect sizes beside the p-values: the difference itself (the metric's units) and Cohen's d_z, the mean of the
per-dialogue differences over their standard deviation (Cohen 1988; the standardised effect of a paired
design, what `power` plans with); none for the CGS formulas.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from trace_dataset.constants import SEED
from trace_metrics.lib import intervals as iv
from trace_metrics.lib.significance.corrections import DEFAULT_CORRECTION, Family, correct_families
from trace_metrics.lib.stats import ALPHA, N_BOOT, bootstrap_pvalue

TESTS: tuple[str, ...] = ("bootstrap", "randomization", "ttest")
DEFAULT_TEST = "bootstrap"
TEST_NAMES: dict[str, str] = {
    "bootstrap": "paired cluster bootstrap",
    "randomization": "paired randomization test",
    "ttest": "paired t-test",
}
P_KEYS: dict[str, str] = {"bootstrap": "p_bootstrap", "randomization": "p_randomization", "ttest": "p_ttest"}
N_PERM = 10_000
_CHUNK = 500  # assignments per matrix product: bounds memory (500 x D), fixed so results never depend on it
_TOLERANCE = 1e-9  # |T*| this close to |T|, relative to the values' size, counts as equal (module docstring)


class Comparison(NamedTuple):
    """Run `a` against run `b` (indices into the tables) on `metric`."""

    a: int
    b: int
    metric: str


def check_test(test: str) -> str:
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; expected one of {TESTS}")
    return test


def same_dialogues(tables: Sequence[iv.DialogueTable]) -> int:
    """The number of dialogues the tables share; ValueError when they are not one dialogue set."""
    if not tables:
        raise ValueError("no tables to compare")
    first = tables[0]
    for t in tables[1:]:
        if (t.dialogues, t.n_dialogues) != (first.dialogues, first.n_dialogues):
            raise ValueError("paired tests need runs of one dialogue set (the same split and dialogues)")
    return first.n_dialogues


# ---------------------------------------------------------------------------------------------------
# The randomization test
# ---------------------------------------------------------------------------------------------------
class _Stack:
    """Per-dialogue sum and count columns of (table, metric) ratios, stacked once (identical count columns
    once), with the index of every ratio's columns."""

    def __init__(self, tables: Sequence[iv.DialogueTable]) -> None:
        self.tables = tables
        self.columns: list[np.ndarray] = []
        self._counts: dict[bytes, int] = {}
        self._ratios: dict[tuple[int, str], tuple[int, int]] = {}

    def ratio(self, table: int, metric: str) -> tuple[int, int]:
        if (table, metric) not in self._ratios:
            t = self.tables[table]
            if metric not in t.sums:
                raise KeyError(f"metric {metric!r} is not in table {table}; it has {sorted(t.sums)}")
            self.columns.append(t.sums[metric].astype(float))
            sums = len(self.columns) - 1
            key = t.counts[metric].tobytes()
            if key not in self._counts:
                self.columns.append(t.counts[metric].astype(float))
                self._counts[key] = len(self.columns) - 1
            self._ratios[(table, metric)] = (sums, self._counts[key])
        return self._ratios[(table, metric)]

    def matrix(self, n_dialogues: int) -> np.ndarray:
        return np.column_stack(self.columns) if self.columns else np.zeros((n_dialogues, 0))


class _Plan(NamedTuple):
    """Column indices of one set of comparisons with the same number of parts (1, or 3 for CGS)."""

    where: np.ndarray  # positions in the comparison list
    sa: np.ndarray  # (parts, n): sum / count columns of a and b
    ca: np.ndarray
    sb: np.ndarray
    cb: np.ndarray
    gate_a: np.ndarray  # (n,) the CGS gates (unused for one part)
    gate_b: np.ndarray


def _plans(stack: _Stack, comparisons: Sequence[Comparison]) -> list[_Plan]:
    parts_of = [iv.COMPOSITES.get(c.metric, (c.metric,)) for c in comparisons]
    grouped: dict[int, list[int]] = {}
    for k, parts in enumerate(parts_of):
        grouped.setdefault(len(parts), []).append(k)
    plans = []
    for n_parts, where in sorted(grouped.items()):
        cols = np.array(
            [
                [
                    [
                        *stack.ratio(comparisons[k].a, parts_of[k][j]),
                        *stack.ratio(comparisons[k].b, parts_of[k][j]),
                    ]
                    for k in where
                ]
                for j in range(n_parts)
            ],
            dtype=np.int64,
        )  # (parts, n, 4)
        plans.append(
            _Plan(
                np.array(where),
                cols[:, :, 0],
                cols[:, :, 1],
                cols[:, :, 2],
                cols[:, :, 3],
                np.array([stack.tables[comparisons[k].a].cd_gate for k in where]),
                np.array([stack.tables[comparisons[k].b].cd_gate for k in where]),
            )
        )
    return plans


def _cgs(parts: np.ndarray, gate: np.ndarray) -> np.ndarray:
    """The CGS formula on (rows, 3, n) component ratios (GS-like, CD, PC), as `intervals` applies it."""
    gs, cd, pc = parts[:, 0], parts[:, 1], parts[:, 2]
    return gs * np.minimum(1.0, cd / gate) * (0.5 + 0.5 * pc)


def _statistic(plan: _Plan, zx: np.ndarray, totals: np.ndarray, scale: bool = False) -> Any:
    """value_a - value_b under each assignment: (rows, n). `zx` is assignments @ columns: what moves from b to
    a when a dialogue is swapped. With `scale`, (the first row's statistic, |value_a| + |value_b|)."""
    shift_s = zx[:, plan.sb] - zx[:, plan.sa]  # (rows, parts, n)
    shift_c = zx[:, plan.cb] - zx[:, plan.ca]
    with np.errstate(divide="ignore", invalid="ignore"):
        va = (totals[plan.sa] + shift_s) / (totals[plan.ca] + shift_c)
        vb = (totals[plan.sb] - shift_s) / (totals[plan.cb] - shift_c)
        if plan.sa.shape[0] == 1:
            xa, xb = va[:, 0], vb[:, 0]
        else:
            xa, xb = _cgs(va, plan.gate_a), _cgs(vb, plan.gate_b)
        return (xa[0] - xb[0], np.abs(xa[0]) + np.abs(xb[0])) if scale else xa - xb


def is_exact(n_dialogues: int, n_perm: int) -> bool:
    """Whether the randomization test enumerates every assignment: 2^D <= the permutations asked for."""
    return n_dialogues < 63 and (1 << n_dialogues) <= n_perm


def randomization_method(n_dialogues: int, n_perm: int = N_PERM, seed: int = SEED) -> dict[str, Any]:
    """What the randomization test does for D dialogues: exact (every one of the 2^D assignments) or Monte
    Carlo (`n_perm` assignments from `seed`)."""
    if is_exact(n_dialogues, n_perm):
        return {"exact": True, "assignments": 1 << n_dialogues, "seed": None}
    return {"exact": False, "assignments": n_perm, "seed": seed}


def _assignments(n_dialogues: int, n_perm: int, seed: int) -> Iterator[np.ndarray]:
    """Chunks (k, D) of 0/1 assignments (1: swap the dialogue's a and b): every one of the 2^D when exact,
    else `n_perm` uniform draws from `default_rng(seed)`."""
    if is_exact(n_dialogues, n_perm):
        codes = np.arange(1 << n_dialogues, dtype=np.int64)
        bits = np.arange(n_dialogues, dtype=np.int64)
        for start in range(0, codes.size, _CHUNK):
            yield ((codes[start : start + _CHUNK, None] >> bits) & 1).astype(float)
        return
    rng = np.random.default_rng(seed)
    for start in range(0, n_perm, _CHUNK):
        yield rng.integers(0, 2, size=(min(_CHUNK, n_perm - start), n_dialogues)).astype(float)


def randomization_pvalues(
    tables: Sequence[iv.DialogueTable],
    comparisons: Sequence[Comparison],
    n_perm: int = N_PERM,
    seed: int = SEED,
) -> list[float | None]:
    """The two-sided randomization p-value of every comparison (module docstring), from one stream of
    assignments; None where a run has no value."""
    if n_perm < 1:
        raise ValueError(f"n_perm {n_perm!r} must be >= 1")
    n = same_dialogues(tables)
    if not comparisons:
        return []
    stack = _Stack(tables)
    plans = _plans(stack, comparisons)
    columns = stack.matrix(n)
    totals = columns.sum(axis=0)
    observed = np.empty(len(comparisons))
    scale = np.empty(len(comparisons))
    for plan in plans:
        observed[plan.where], scale[plan.where] = _statistic(
            plan, np.zeros((1, columns.shape[1])), totals, True
        )
    threshold = np.abs(observed) - _TOLERANCE * scale
    hits = np.zeros(len(comparisons))
    defined = np.zeros(len(comparisons))
    for z in _assignments(n, n_perm, seed):
        zx = z @ columns
        for plan in plans:
            t = np.abs(_statistic(plan, zx, totals))
            ok = np.isfinite(t)
            hits[plan.where] += (ok & (t >= threshold[plan.where])).sum(axis=0)
            defined[plan.where] += ok.sum(axis=0)
    exact = is_exact(n, n_perm)
    out: list[float | None] = []
    for k in range(len(comparisons)):
        if not np.isfinite(observed[k]) or defined[k] == 0:
            out.append(None)
        else:
            out.append(float(hits[k] / defined[k] if exact else (hits[k] + 1) / (defined[k] + 1)))
    return out


# ---------------------------------------------------------------------------------------------------
# The t-test and the effect size
# ---------------------------------------------------------------------------------------------------
def dialogue_means(table: iv.DialogueTable, metric: str) -> np.ndarray:
    """Each dialogue's mean s_d / c_d of a metric (NaN where the dialogue has no item)."""
    counts = table.counts[metric]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(counts > 0, table.sums[metric] / np.where(counts > 0, counts, 1), np.nan)


def paired_differences(a: iv.DialogueTable, b: iv.DialogueTable, metric: str) -> np.ndarray | None:
    """The per-dialogue differences of means over the dialogues where both runs have items; None for a CGS
    formula (no per-dialogue value)."""
    if metric in iv.COMPOSITES:
        return None
    diff = dialogue_means(a, metric) - dialogue_means(b, metric)
    return diff[np.isfinite(diff)]


def ttest_of(diff: np.ndarray | None) -> dict[str, Any]:
    """t, p (two-sided, scipy's t distribution), the number of paired dialogues and Cohen's d_z of
    per-dialogue differences; None where undefined (fewer than two, or no variance: scipy's nan)."""
    from scipy.stats import t as student

    out: dict[str, Any] = {"t": None, "p_ttest": None, "n_dialogues": 0, "d_z": None}
    if diff is None:
        return out
    n = int(diff.size)
    out["n_dialogues"] = n
    if n < 2:
        return out
    sd = float(diff.std(ddof=1))
    mean = float(diff.mean())
    if sd == 0.0 or not math.isfinite(sd):
        return out
    t = mean / (sd / math.sqrt(n))
    out.update(t=t, p_ttest=float(2 * student.sf(abs(t), n - 1)), d_z=mean / sd)
    return out


# ---------------------------------------------------------------------------------------------------
# Everything for a list of comparisons
# ---------------------------------------------------------------------------------------------------
def needed_metrics(n_tables: int, comparisons: Sequence[Comparison]) -> list[list[str]]:
    """The metrics each table takes part in (what `intervals.bootstrap` must resample)."""
    wanted: list[list[str]] = [[] for _ in range(n_tables)]
    for c in comparisons:
        for i in (c.a, c.b):
            if c.metric not in wanted[i]:
                wanted[i].append(c.metric)
    return wanted


def bootstrap_tests(
    replicates: Sequence[Mapping[str, np.ndarray]], comparisons: Sequence[Comparison], alpha: float = ALPHA
) -> list[dict[str, Any]]:
    """The percentile interval and dual p-value of each comparison's resampled differences (the runs
    resampled together: `intervals.bootstrap` of all tables at once)."""
    out = []
    for c in comparisons:
        ra, rb = replicates[c.a].get(c.metric), replicates[c.b].get(c.metric)
        ci = None if ra is None or rb is None else iv.percentile_interval(ra - rb, alpha)
        out.append(
            {
                "ci": None if ci is None else list(ci),
                "p_bootstrap": None if ci is None else bootstrap_pvalue(ra - rb),  # type: ignore[operator]
            }
        )
    return out


def pairwise(
    tables: Sequence[iv.DialogueTable],
    comparisons: Sequence[Comparison],
    *,
    tests: Sequence[str] = TESTS,
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
    seed: int = SEED,
    alpha: float = ALPHA,
    replicates: Sequence[Mapping[str, np.ndarray]] | None = None,
) -> list[dict[str, Any]]:
    """Every comparison's values, difference, effect size d_z and the `tests` asked for: `ci` and
    `p_bootstrap`, `p_randomization`, `t` / `p_ttest` / `n_dialogues` (module docstring). `replicates`: the
    tables' bootstrap resamples when the caller has them (`intervals.bootstrap`, same order as `tables`)."""
    for test in tests:
        check_test(test)
    same_dialogues(tables)
    out: list[dict[str, Any]] = []
    for c in comparisons:
        va, vb = iv.point_value(tables[c.a], c.metric), iv.point_value(tables[c.b], c.metric)
        out.append(
            {
                "a": c.a,
                "b": c.b,
                "metric": c.metric,
                "value_a": va,
                "value_b": vb,
                "delta": None if va is None or vb is None else va - vb,
                **ttest_of(paired_differences(tables[c.a], tables[c.b], c.metric)),
            }
        )
        if "ttest" not in tests:
            out[-1].update(t=None, p_ttest=None)
    if "bootstrap" in tests:
        if replicates is None:
            replicates = iv.bootstrap(tables, needed_metrics(len(tables), comparisons), n_boot, seed)
        for row, found in zip(out, bootstrap_tests(replicates, comparisons, alpha), strict=True):
            row.update(found)
    if "randomization" in tests:
        for row, p in zip(out, randomization_pvalues(tables, comparisons, n_perm, seed), strict=True):
            row["p_randomization"] = p
    return out


def correct(
    results: Sequence[dict[str, Any]],
    test: str = DEFAULT_TEST,
    correction: str = DEFAULT_CORRECTION,
    family: Family | None = None,
    alpha: float = ALPHA,
) -> dict[str, int]:
    """Adds `p_adjusted` (the `test`'s p-value after `correction` within its family) and `significant`
    (p_adjusted <= alpha; None where the test could not be run or the metric is outside the family) to every
    result of `pairwise`; returns the size of each family."""
    family = family or Family()
    keys = [family.key(r["metric"]) for r in results]
    adjusted, sizes = correct_families([r.get(P_KEYS[check_test(test)]) for r in results], keys, correction)
    for r, q in zip(results, adjusted, strict=True):
        r["p_adjusted"] = q
        r["significant"] = None if q is None else bool(q <= alpha)
    return sizes
