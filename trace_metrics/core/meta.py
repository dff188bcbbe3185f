"""Meta-evaluation (CoRE §7.1): how far CoRE's scores agree with human ratings of the same conversation logs.

Input: two JSON-lines files of `{"id", "factor", "score"}` rows (optional `system`): CoRE's `scores.jsonl` and
the human ratings (`trace-bench core human` converts the project's annotation format). `factor` is one of the
twelve factor ids (score: integer 0-4), `overall` (0-100) or, in CoRE's file only, `factor_mean` (0-4);
`score` may be null (a missing rating: counted, never paired). The log id is `DIALOGUE_ID:SYSTEM`; a row's
system is its `system` field, else the part of the id after the last ":".

Computed (choices where the paper is silent are marked *):
- Per factor, over the logs rated by both: quadratic weighted kappa over the explicit label set 0-4
  (`LABELS`: a label neither side used still counts, which libraries that infer labels from the data do
  not do), Spearman rho and Kendall tau_b with p-values (`significance.correlation`, scipy), the means of
  both sides. *`pooled`: the same
  over every (log, factor) pair of the twelve factors; *`macro`: the mean of the per-factor values.
- Overall (Table 7): Spearman and Kendall tau_b of the human `overall` against CoRE's `overall` (the debate)
  and against CoRE's `factor_mean` (the paper's "CoRE (Avg.)").
- Factor coupling (§7.1.1, Fig. 7): Kendall tau_b between every two factors across logs, for CoRE and for the
  human ratings separately, and the mean absolute value over the 66 pairs.
- Ranking agreement between systems (§7.1.2, Fig. 8): per factor and overall, each system's mean score over
  the logs both sides rated, and Kendall tau_b between the CoRE and the human system orderings (*needs two or
  more systems).
A statistic that is undefined (fewer than two pairs, a constant side) is None with the reason in `notes`.
"""

from __future__ import annotations

import itertools
import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from trace_dataset.io import TraceDataError, iter_jsonl_lines
from trace_metrics.core.factors import RATING_LABELS
from trace_metrics.core.prompts import FACTOR_IDS
from trace_metrics.core.scoring import FACTOR_MEAN, OVERALL
from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.significance import correlation

LABELS: tuple[int, ...] = RATING_LABELS
HUMAN_KEYS: tuple[str, ...] = (*FACTOR_IDS, OVERALL)
CORE_KEYS: tuple[str, ...] = (*FACTOR_IDS, FACTOR_MEAN, OVERALL)

Scores = dict[tuple[str, str], float | None]  # (log id, factor) -> score


# ---------------------------------------------------------------------------------------------------
# Statistics
# ---------------------------------------------------------------------------------------------------
def quadratic_weighted_kappa(
    a: Sequence[int], b: Sequence[int], labels: Sequence[int] = LABELS
) -> float | None:
    """Cohen's kappa with quadratic weights over `labels` (explicit: unused labels still count); None for
    fewer than two pairs (one pair gives 0.0 whatever the ratings: "too few", as the correlations say) and
    when the expected disagreement is zero (both sides constant and equal)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} and {len(b)} ratings; expected pairs")
    index = {label: i for i, label in enumerate(labels)}
    bad = sorted({v for v in (*a, *b) if v not in index})
    if bad:
        raise ValueError(f"ratings {bad} are not in the label set {list(labels)}")
    if len(a) < 2:
        return None
    k = len(labels)
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[index[x], index[y]] += 1
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    grid = np.arange(k)
    weights = (grid[:, None] - grid[None, :]) ** 2 / (k - 1) ** 2
    denominator = float((weights * expected).sum())
    if denominator == 0.0:
        return None
    return float(1.0 - (weights * observed).sum() / denominator)


# ---------------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------------
def _check_score(factor: str, value: Any, path: Any, line: int) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TraceDataError(
            f"score {value!r} for {factor!r}; expected a number or null", path=path, line=line
        )
    if factor in FACTOR_IDS:
        if float(value) not in LABELS:
            raise TraceDataError(
                f"score {value!r} for {factor!r}; expected an integer in {list(LABELS)}", path=path, line=line
            )
        return int(value)
    high = 100 if factor == OVERALL else max(LABELS)
    if not 0 <= value <= high:
        raise TraceDataError(f"score {value!r} for {factor!r}; expected 0-{high}", path=path, line=line)
    return float(value)


def load_scores(path: str | os.PathLike, allowed: Sequence[str] = CORE_KEYS) -> tuple[Scores, dict[str, str]]:
    """(scores by (id, factor), system by id) from a JSON-lines file; TraceDataError names file and line."""
    scores: Scores = {}
    systems: dict[str, str] = {}
    for line, _, row in iter_jsonl_lines(path):
        log_id, factor = row.get("id"), row.get("factor")
        if not isinstance(log_id, str) or not log_id:
            raise TraceDataError(
                f"field 'id' is {log_id!r}; expected a non-empty string", path=path, line=line
            )
        if not isinstance(factor, str) or factor not in allowed:
            raise TraceDataError(f"factor {factor!r}; expected one of {list(allowed)}", path=path, line=line)
        if "score" not in row:
            raise TraceDataError("missing field 'score' (null for a missing rating)", path=path, line=line)
        if (log_id, factor) in scores:
            raise TraceDataError(f"a second score for ({log_id!r}, {factor!r})", path=path, line=line)
        scores[(log_id, factor)] = _check_score(factor, row["score"], path, line)
        system = row.get("system")
        systems[log_id] = system if isinstance(system, str) and system else log_id.rpartition(":")[2]
    if not scores:
        raise TraceDataError("no score rows", path=path)
    return scores, systems


# ---------------------------------------------------------------------------------------------------
# Agreement
# ---------------------------------------------------------------------------------------------------
def _pairs(core: Scores, human: Scores, core_key: str, human_key: str) -> tuple[list, list, list[str], dict]:
    xs, ys, ids = [], [], []
    counts = {"n_missing_core": 0, "n_missing_human": 0}
    for (log_id, f), h in sorted(human.items()):
        if f != human_key:
            continue
        c = core.get((log_id, core_key))
        if h is None:
            counts["n_missing_human"] += 1
        elif c is None:
            counts["n_missing_core"] += 1  # CoRE gave no valid rating, or did not score this log
        else:
            xs.append(c)
            ys.append(h)
            ids.append(log_id)
    return xs, ys, ids, counts


def _factor_agreement(xs: Sequence[int], ys: Sequence[int]) -> dict[str, Any]:
    out = {"qwk": quadratic_weighted_kappa(list(xs), list(ys)), **correlation(xs, ys)}
    out["core_mean"], out["human_mean"] = mean_or_none(xs), mean_or_none(ys)
    return out


def coupling(scores: Scores, factors: Sequence[str] = FACTOR_IDS) -> dict[str, Any]:
    """Kendall tau_b between every two factors across logs (None where undefined) and the mean |tau_b|."""
    by_log: dict[str, dict[str, float]] = defaultdict(dict)
    for (log_id, f), v in scores.items():
        if f in factors and v is not None:
            by_log[log_id][f] = v
    n = len(factors)
    matrix: list[list[float | None]] = [[None] * n for _ in range(n)]
    for i in range(n):
        matrix[i][i] = 1.0 if sum(factors[i] in r for r in by_log.values()) >= 2 else None
    off: list[float] = []
    for i, j in itertools.combinations(range(n), 2):
        pairs = [
            (r[factors[i]], r[factors[j]]) for r in by_log.values() if factors[i] in r and factors[j] in r
        ]
        tau = correlation([p[0] for p in pairs], [p[1] for p in pairs])["kendall_tau_b"]
        matrix[i][j] = matrix[j][i] = tau
        if tau is not None:
            off.append(abs(tau))
    return {
        "factors": list(factors),
        "kendall_tau_b": matrix,
        "mean_abs": mean_or_none(off),
        "n_pairs_defined": len(off),
        "n_logs": len(by_log),
    }


def ranking(core: Scores, human: Scores, systems: Mapping[str, str], core_key: str, human_key: str) -> dict:
    """System means on both sides over the logs both rated, and Kendall tau_b between the two orderings."""
    xs, ys, ids, _ = _pairs(core, human, core_key, human_key)
    per: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for x, y, log_id in zip(xs, ys, ids, strict=True):
        per[systems.get(log_id, log_id.rpartition(":")[2])].append((x, y))
    names = sorted(per)
    core_means = {s: mean_or_none(p[0] for p in per[s]) for s in names}
    human_means = {s: mean_or_none(p[1] for p in per[s]) for s in names}
    out: dict[str, Any] = {
        "systems": names,
        "core_means": core_means,
        "human_means": human_means,
        "n_logs": {s: len(per[s]) for s in names},
    }
    # every system has at least one pair, so neither mean is None
    corr = correlation(
        [cast(float, core_means[s]) for s in names], [cast(float, human_means[s]) for s in names]
    )
    out["kendall_tau_b"] = corr["kendall_tau_b"]
    if corr["kendall_tau_b"] is None:
        out["note"] = "needs two or more systems" if len(names) < 2 else corr.get("note")
    return out


def meta_evaluate(core: Scores, human: Scores, systems: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Everything in the module docstring, from loaded score maps."""
    systems = dict(systems or {})
    shared = sorted({i for i, _ in core} & {i for i, _ in human})
    factors: dict[str, Any] = {}
    pooled_x: list[int] = []
    pooled_y: list[int] = []
    for f in FACTOR_IDS:
        xs, ys, _, counts = _pairs(core, human, f, f)
        pooled_x += xs
        pooled_y += ys
        factors[f] = {**_factor_agreement(xs, ys), **counts}
    defined = {
        k: [v[k] for v in factors.values() if v[k] is not None] for k in ("qwk", "spearman", "kendall_tau_b")
    }
    overall = {}
    for name, key in (("multi_agent", OVERALL), ("factor_mean", FACTOR_MEAN)):
        xs, ys, _, counts = _pairs(core, human, key, OVERALL)
        overall[name] = {
            **correlation(xs, ys),
            **counts,
            "core_mean": mean_or_none(xs),
            "human_mean": mean_or_none(ys),
        }
    return {
        "label_set": list(LABELS),
        "n": {
            "core_logs": len({i for i, _ in core}),
            "human_logs": len({i for i, _ in human}),
            "shared_logs": len(shared),
            "core_rows": len(core),
            "human_rows": len(human),
        },
        "factors": factors,
        "pooled": _factor_agreement(pooled_x, pooled_y),
        "macro": {k: mean_or_none(v) for k, v in defined.items()}
        | {"n_factors": {k: len(v) for k, v in defined.items()}},
        "overall": overall,
        "coupling": {"core": coupling(core), "human": coupling(human)},
        "ranking": {
            "per_factor": {f: ranking(core, human, systems, f, f) for f in FACTOR_IDS},
            "overall": ranking(core, human, systems, OVERALL, OVERALL),
            "factor_mean": ranking(core, human, systems, FACTOR_MEAN, OVERALL),
        },
    }


def meta_evaluate_files(scores_path: str | os.PathLike, human_path: str | os.PathLike) -> dict[str, Any]:
    """`meta_evaluate` on CoRE's scores file and a human ratings file (same row shape)."""
    core, systems = load_scores(scores_path, CORE_KEYS)
    human, human_systems = load_scores(human_path, HUMAN_KEYS)
    result = meta_evaluate(core, human, {**human_systems, **systems})
    result["files"] = {"scores": os.fspath(scores_path), "human": os.fspath(human_path)}
    if not result["n"]["shared_logs"]:
        raise TraceDataError(
            f"no log id appears in both files (CoRE ids look like {next(iter(core))[0]!r}, human ids like "
            f"{next(iter(human))[0]!r}); ids are DIALOGUE_ID:SYSTEM",
            path=human_path,
        )
    return result
