"""95% cluster-bootstrap intervals for every metric of a run, and paired comparisons between runs.

Every value of a run is a ratio over dialogues: the metric's defined item values summed over all dialogues,
divided by their number, i.e. value = sum_d s_d / sum_d c_d with s_d the sum of the metric's item values in
dialogue d and c_d how many there are (a turn metric: d's scored turns; a dialogue metric: 0 or 1; rejection
recovery: d's scored episodes). `cgs` and `cgs_ent` are the CGS formula applied to three such ratios
(`specs.MetricSpec.components`). A cluster-bootstrap resample draws the D dialogues with replacement
(`stats.resample_indices`: n_boot 10,000, seed 42, as the paper's Table 21); with w_d the number of times d
was drawn, the resampled value is sum_d w_d s_d / sum_d w_d c_d, and for `cgs` the formula on the resampled
component ratios (the statistic itself is bootstrapped, never per-turn values). The interval is the
percentile interval of the resampled values; resamples in which a metric has no item (a ratio 0/0) are left
out of its percentiles. A metric whose items come from fewer than two dialogues has no variance to resample
(every resample repeats the point value): its replicates are all NaN, so it gets no interval and takes part
in no test (`trace_metrics.lib.significance`, which reads these resamples), `no_variance` tells callers so,
and `bootstrap` logs a warning naming it.

So a run's per-dialogue sums and counts (`DialogueTable`) are all the statistics need. Runs of the same
dialogues (same split) share one resampling: `bootstrap` computes every metric of every table with one matrix
product per chunk of resamples (weights k x D times the stacked sums and counts D x K), which also makes
comparisons *paired*: the difference of two runs' resampled values is the paired cluster bootstrap of their
difference (for two turn metrics on the same turns it equals `stats.paired_cluster_bootstrap`).

`encode` / `decode` turn a table into a JSON-safe dict (zlib-compressed little-endian arrays, base64; no
timestamps, so the same table gives the same bytes).
"""

from __future__ import annotations

import base64
import hashlib
import logging
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from trace_dataset.constants import SEED
from trace_metrics.lib.grounding import DEFAULT_CD_GATE
from trace_metrics.lib.stats import ALPHA, MIN_CLUSTERS, N_BOOT, resample_indices
from trace_metrics.specs import METRICS

log = logging.getLogger(__name__)

FORMAT = "trace-per-dialogue/1"
ID_KEYS = ("dialogue_id", "turn_id")
# metrics whose value is a formula of other metrics' ratios: id -> (GS-like, CD, PC) component ids
COMPOSITES: dict[str, tuple[str, ...]] = {s.id: s.components for s in METRICS.values() if s.components}


class DialogueTable(NamedTuple):
    """Per-dialogue sums and counts of a run's metrics, dialogues in sorted-id order."""

    dialogues: str  # sha256 of the sorted dialogue ids joined by "\n": which dialogue set this is
    n_dialogues: int
    sums: dict[str, np.ndarray]  # metric -> float64 (n_dialogues,)
    counts: dict[str, np.ndarray]  # metric -> int64 (n_dialogues,)
    cd_gate: float = DEFAULT_CD_GATE  # the gate of the run's cgs / cgs_ent

    def metrics(self) -> list[str]:
        """Every metric this table gives a value for: its item metrics and the composites of them."""
        out = list(self.sums)
        out += [m for m, parts in COMPOSITES.items() if all(p in self.sums for p in parts)]
        return out

    def clusters(self, metric: str) -> int:
        """How many dialogues hold items of `metric` (of a composite: the fewest over its components)."""
        return min(int(np.count_nonzero(self.counts[p])) for p in COMPOSITES.get(metric, (metric,)))


def no_variance(table: DialogueTable, metric: str) -> bool:
    """Whether `metric`'s items come from fewer than two dialogues: a bootstrap then has no variance, and the
    metric gets no interval and no significance mark (module docstring)."""
    return table.clusters(metric) < MIN_CLUSTERS


def dialogue_set_id(dialogue_ids: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(sorted(dialogue_ids)).encode("utf-8")).hexdigest()


def dialogue_table(
    per_item: Mapping[str, Mapping[str, Sequence]], cd_gate: float = DEFAULT_CD_GATE
) -> DialogueTable:
    """The table of a suite result's `per_item` (groups of per-item lists keyed by metric id, with a
    `dialogue_id` list; None = undefined item). The dialogues are those of the `dialogues` group (every
    dialogue of the split), else the union of all groups' dialogue ids."""
    if "dialogues" in per_item:
        ids = sorted(set(per_item["dialogues"]["dialogue_id"]))
    else:
        ids = sorted({d for items in per_item.values() for d in items["dialogue_id"]})
    position = {d: i for i, d in enumerate(ids)}
    n = len(ids)
    sums: dict[str, np.ndarray] = {}
    counts: dict[str, np.ndarray] = {}
    for group, items in per_item.items():
        try:
            codes = np.fromiter(
                (position[d] for d in items["dialogue_id"]), dtype=np.int64, count=len(items["dialogue_id"])
            )
        except KeyError as e:
            raise ValueError(
                f"per_item[{group!r}] names dialogue {e} that the dialogues group lacks"
            ) from None
        for metric, values in items.items():
            if metric in ID_KEYS:
                continue
            if len(values) != len(codes):
                raise ValueError(
                    f"per_item[{group!r}][{metric!r}] has {len(values)} values for {len(codes)} items"
                )
            vals = np.array([np.nan if v is None else v for v in values], dtype=float)
            keep = ~np.isnan(vals)
            sums[metric] = np.bincount(codes[keep], weights=vals[keep], minlength=n)
            counts[metric] = np.bincount(codes[keep], minlength=n).astype(np.int64)
    return DialogueTable(dialogue_set_id(ids), n, sums, counts, float(cd_gate))


def point_value(table: DialogueTable, metric: str) -> float | None:
    """The metric's value from the table (what the suite reports, up to float rounding)."""
    if metric in COMPOSITES:
        parts = [point_value(table, p) for p in COMPOSITES[metric]]
        values = [p for p in parts if p is not None]
        if len(values) != len(parts):
            return None
        gs, cd, pc = values
        return float(gs * min(1.0, cd / table.cd_gate) * (0.5 + 0.5 * pc))
    c = table.counts[metric].sum()
    return float(table.sums[metric].sum() / c) if c else None


# ---------------------------------------------------------------------------------------------------
# Resampling
# ---------------------------------------------------------------------------------------------------
def resample_weights(idx: np.ndarray, n_clusters: int) -> np.ndarray:
    """How often each cluster is drawn in each resample: (k, n_clusters) float64 from (k, n_clusters) indices."""
    k = idx.shape[0]
    flat = (idx + (np.arange(k, dtype=np.int64) * n_clusters)[:, None]).ravel()
    return np.bincount(flat, minlength=k * n_clusters).reshape(k, n_clusters).astype(float)


def bootstrap(
    tables: Sequence[DialogueTable],
    metrics: Sequence[Sequence[str]] | None = None,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> list[dict[str, np.ndarray]]:
    """Resampled values (n_boot each; NaN where a resample has no item) of `metrics[i]` (default: all) of
    every table, all tables resampled with the same dialogue draws. The tables must share one dialogue set."""
    if not tables:
        return []
    first = tables[0]
    for t in tables[1:]:
        if (t.dialogues, t.n_dialogues) != (first.dialogues, first.n_dialogues):
            raise ValueError(
                "tables of different dialogue sets cannot share a resampling; bootstrap each set apart"
            )
    wanted = [t.metrics() for t in tables] if metrics is None else [list(m) for m in metrics]
    columns: list[np.ndarray] = []
    seen_counts: dict[bytes, int] = {}  # identical count columns (the metrics of one level) are stacked once

    def column(arr: np.ndarray, dedupe: bool) -> int:
        if not dedupe:
            columns.append(arr)
            return len(columns) - 1
        key = arr.tobytes()
        if key not in seen_counts:
            seen_counts[key] = len(columns)
            columns.append(arr)
        return seen_counts[key]

    ratios: list[tuple[int, int]] = []  # (sum column, count column) of every base ratio
    ratio_of: dict[tuple[int, str], int] = {}

    def ratio(i: int, metric: str) -> int:
        if (i, metric) not in ratio_of:
            t = tables[i]
            if metric not in t.sums:
                raise KeyError(f"metric {metric!r} is not in the table; it has {sorted(t.sums)}")
            ratio_of[(i, metric)] = len(ratios)
            ratios.append((column(t.sums[metric], False), column(t.counts[metric], True)))
        return ratio_of[(i, metric)]

    plan: list[tuple[int, str, tuple[int, ...]]] = []  # (table, metric, its ratio indices)
    flat: set[str] = set()
    for i, ms in enumerate(wanted):
        for m in ms:
            names = COMPOSITES.get(m, (m,))
            plan.append((i, m, tuple(ratio(i, p) for p in names)))
            if no_variance(tables[i], m):
                flat.add(m)
    if flat:
        log.warning(
            "no interval for %s: items from fewer than %d dialogues, so resampling has no variance",
            ", ".join(sorted(flat)),
            MIN_CLUSTERS,
        )
    stacked = np.column_stack(columns).astype(float) if columns else np.zeros((first.n_dialogues, 0))
    num = np.array([r[0] for r in ratios], dtype=np.int64)
    den = np.array([r[1] for r in ratios], dtype=np.int64)
    out: list[dict[str, np.ndarray]] = [{m: np.empty(n_boot) for m in ms} for ms in wanted]
    for start, idx in resample_indices(first.n_dialogues, n_boot, seed):
        resampled = resample_weights(idx, first.n_dialogues) @ stacked  # (k, columns)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = resampled[:, num] / resampled[:, den]  # 0/0 -> NaN: no item drawn
        stop = start + len(idx)
        for i, m, parts in plan:
            if m in flat and no_variance(tables[i], m):
                out[i][m][start:stop] = np.nan
            elif len(parts) == 1:
                out[i][m][start:stop] = r[:, parts[0]]
            else:
                gs, cd, pc = (r[:, p] for p in parts)
                out[i][m][start:stop] = gs * np.minimum(1.0, cd / tables[i].cd_gate) * (0.5 + 0.5 * pc)
    return out


def percentile_interval(values: np.ndarray, alpha: float = ALPHA) -> tuple[float, float] | None:
    """The [alpha/2, 1 - alpha/2] percentile interval (numpy's linear interpolation) of the defined values."""
    values = values[~np.isnan(values)]
    if not values.size:
        return None
    low, high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def intervals(
    table: DialogueTable,
    metrics: Sequence[str] | None = None,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    alpha: float = ALPHA,
) -> dict[str, tuple[float, float]]:
    """The percentile interval of each metric of one table (metrics with no defined resample are left out)."""
    [reps] = bootstrap([table], None if metrics is None else [metrics], n_boot, seed)
    out = {}
    for m, values in reps.items():
        ci = percentile_interval(values, alpha)
        if ci is not None:
            out[m] = ci
    return out


# ---------------------------------------------------------------------------------------------------
# Storage
# ---------------------------------------------------------------------------------------------------
def _smallest_uint(arr: np.ndarray) -> np.dtype:
    top = int(arr.max()) if arr.size else 0
    for dt in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dt).max:
            return np.dtype(dt).newbyteorder("<")
    return np.dtype("<u8")


def encode(table: DialogueTable) -> dict[str, Any]:
    """A JSON-safe dict of the table: metric ids, sizes, and the sums (float64, bytes shuffled: float values
    of one metric share their high bytes, which then compress) and counts (smallest unsigned type) as one
    zlib stream in base64."""
    metrics = sorted(table.sums)
    n = table.n_dialogues
    sums = np.stack([table.sums[m] for m in metrics]).astype("<f8") if metrics else np.zeros((0, n), "<f8")
    counts = np.stack([table.counts[m] for m in metrics]) if metrics else np.zeros((0, n), np.int64)
    count_dtype = _smallest_uint(counts)
    shuffled = np.ascontiguousarray(sums.reshape(-1).view(np.uint8).reshape(-1, 8).T)
    payload = shuffled.tobytes() + counts.astype(count_dtype).tobytes()
    return {
        "format": FORMAT,
        "dialogues": table.dialogues,
        "n_dialogues": n,
        "metrics": metrics,
        "cd_gate": table.cd_gate,
        "counts_dtype": count_dtype.str,
        "data": base64.b64encode(zlib.compress(payload, 9)).decode("ascii"),
    }


def decode(stored: Mapping[str, Any]) -> DialogueTable:
    """The table `encode` stored; ValueError naming what is wrong with a damaged one."""
    if stored.get("format") != FORMAT:
        raise ValueError(f"per-dialogue data has format {stored.get('format')!r}; expected {FORMAT!r}")
    if "data" not in stored:
        raise ValueError(
            "per-dialogue data has no 'data' (a leaderboard.json row: read it with "
            "trace_harness.leaderboard.build.read_leaderboard, which attaches its side file)"
        )
    metrics, n = list(stored["metrics"]), int(stored["n_dialogues"])
    count_dtype = np.dtype(stored["counts_dtype"])
    try:
        payload = zlib.decompress(base64.b64decode(stored["data"]))
    except (ValueError, zlib.error) as e:
        raise ValueError(f"per-dialogue data is corrupt: {e}") from None
    n_sums = len(metrics) * n * 8
    if len(payload) != n_sums + len(metrics) * n * count_dtype.itemsize:
        raise ValueError(
            f"per-dialogue data holds {len(payload)} bytes; expected {len(metrics)} metrics x {n} dialogues"
        )
    shuffled = np.frombuffer(payload[:n_sums], dtype=np.uint8).reshape(8, -1)
    sums = np.ascontiguousarray(shuffled.T).view("<f8").reshape(len(metrics), n).astype(float)
    counts = np.frombuffer(payload[n_sums:], dtype=count_dtype).reshape(len(metrics), n).astype(np.int64)
    return DialogueTable(
        stored["dialogues"],
        n,
        {m: sums[k] for k, m in enumerate(metrics)},
        {m: counts[k] for k, m in enumerate(metrics)},
        float(stored.get("cd_gate", DEFAULT_CD_GATE)),
    )
