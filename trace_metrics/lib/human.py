"""Human evaluation (App. K): citation precision, Likert means, Krippendorff's alpha, metric correlation, t-tests.

Annotation file: JSON lines, one row per (item, annotator); the format and its checks are in
`trace_metrics.lib.human_format`.

What is computed (choices where the paper is silent are marked *):
- Per quote, the majority label among the annotators who labelled it; *ties go to the less favourable
  label (Not supported before Partial before Supported), following the briefing's "if unsure, Partial".
- `human_citation_precision`: quotes whose majority label is Supported / quotes with a majority label,
  pooled over all quotes of a baseline (Table 10: 40 / 44 = 0.909). The per-item fraction
  (`citation_precision_item_mean`, Table 15) is reported beside it and is what correlations and t-tests use.
- `human_informativeness`, `human_naturalness`: mean over items of the per-item annotator mean.
- Error rates: share of items where a strict majority of the answering annotators checked the category;
  error-free rate: share of the answering annotators who checked only "no_errors" (Table 14).
- Krippendorff's alpha (`krippendorff` package): *ordinal for the two Likert scales (value domain 1-5),
  nominal for citation labels (one unit per quote) and, *for the multi-label checklist, nominal over one
  binary unit per (item, category). Leave-one-annotator-out alphas as App. K Table 12.
- Spearman rho (scipy `spearmanr`) between per-item human ratings and per-item automatic scores, and
  per-dialogue paired t-tests (scipy `ttest_rel`) between every pair of baselines (App. K.3, Tables 14-15).
"""

from __future__ import annotations

import itertools
import logging
import math
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from statistics import median
from typing import Any, Literal

import numpy as np

from trace_dataset.io import TraceDataError, read_jsonl
from trace_metrics.lib import scoring
from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.human_format import (
    CITATION_LABELS,
    ERROR_CATEGORIES,
    LIKERT_DOMAIN,
    LIKERT_SCALES,
    NO_ERRORS,
    check_annotations,
    load_annotations,
)
from trace_metrics.specs import MetricSpec, by_family

log = logging.getLogger(__name__)

HUMAN_METRICS: tuple[MetricSpec, ...] = by_family("human")

# tie-break order for the majority label: the first (least favourable) of the tied labels wins
_TIE_ORDER: tuple[str, ...] = ("Not supported", "Partial", "Supported")
AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]  # krippendorff's levels of measurement
ALPHA_LEVELS: dict[str, AlphaLevel] = {
    "informativeness": "ordinal",
    "naturalness": "ordinal",
    "citation": "nominal",
    "errors": "nominal",
}
HUMAN_RATINGS: tuple[str, ...] = (
    "human_citation_precision",
    "human_informativeness",
    "human_naturalness",
    "error_free_rate",
)
AUTO_METRICS: tuple[str, ...] = ("cgs", "grounding_score", "citation_density")


def majority_label(labels: Iterable[str | None]) -> str | None:
    """Most frequent label; ties go to the less favourable label; None when nobody labelled."""
    counts = Counter(v for v in labels if v is not None)
    if not counts:
        return None
    top = max(counts.values())
    return next(label for label in _TIE_ORDER if counts.get(label) == top)


# ---------------------------------------------------------------------------------------------------
# Items and per-baseline aggregates
# ---------------------------------------------------------------------------------------------------


def item_scores(rows: Sequence[dict]) -> dict[str, dict]:
    """Per item: majority quote labels, citation precision, Likert means, error-free rate, majority errors."""
    by_item: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_item[r["item_id"]].append(r)
    out = {}
    for item_id, rs in by_item.items():
        n_quotes = len(rs[0]["quote_labels"])
        majority = [majority_label(r["quote_labels"][q] for r in rs) for q in range(n_quotes)]
        labelled = [m for m in majority if m is not None]
        answered = [r for r in rs if r["errors"]]
        out[item_id] = {
            "baseline": rs[0]["baseline"],
            "dialogue_id": rs[0]["dialogue_id"],
            "n_annotators": len(rs),
            "majority_labels": majority,
            "supported": labelled.count("Supported"),
            "partial": labelled.count("Partial"),
            "not_supported": labelled.count("Not supported"),
            "human_citation_precision": labelled.count("Supported") / len(labelled) if labelled else None,
            "human_informativeness": mean_or_none(r["informativeness"] for r in rs),
            "human_naturalness": mean_or_none(r["naturalness"] for r in rs),
            "error_free_rate": (sum(r["errors"] == [NO_ERRORS] for r in answered) / len(answered))
            if answered
            else None,
            "majority_errors": [
                c
                for c in ERROR_CATEGORIES
                if answered and sum(c in r["errors"] for r in answered) * 2 > len(answered)
            ],
            "errors_answered": bool(answered),
        }
    return out


def human_scores(items: Sequence[dict], metrics: Sequence[MetricSpec] = HUMAN_METRICS) -> dict[str, Any]:
    """The human evaluation's declarations (`trace_metrics.specs`, family "human") over annotated responses
    (`item_scores` values) and their quotes' majority labels, through `lib.scoring`."""
    scoring.check(metrics, ("human_item", "human_quote"))
    quotes = [label for i in items for label in i["majority_labels"] if label is not None]
    return scoring.score(metrics, {"human_item": items, "human_quote": quotes}).values


def _aggregate(items: Sequence[dict], metrics: Sequence[MetricSpec] = HUMAN_METRICS) -> dict:
    supported = sum(i["supported"] for i in items)
    labelled = supported + sum(i["partial"] + i["not_supported"] for i in items)
    answered = [i for i in items if i["errors_answered"]]
    return {
        **human_scores(items, metrics),
        "citation_precision_item_mean": mean_or_none(i["human_citation_precision"] for i in items),
        "error_free_rate": mean_or_none(i["error_free_rate"] for i in items),
        "supported": supported,
        "partial": sum(i["partial"] for i in items),
        "not_supported": sum(i["not_supported"] for i in items),
        "n_items": len(items),
        "n_quotes": labelled,
        "error_rates": {
            c: (sum(c in i["majority_errors"] for i in answered) / len(answered)) if answered else None
            for c in ERROR_CATEGORIES
        },
    }


# ---------------------------------------------------------------------------------------------------
# Agreement
# ---------------------------------------------------------------------------------------------------


def _alpha(matrix: np.ndarray, level: AlphaLevel, domain: Sequence[float] | None = None) -> float | None:
    """Krippendorff's alpha of an annotators x units matrix (nan = missing); None when undefined."""
    import krippendorff

    if matrix.shape[0] < 2 or matrix.shape[1] == 0:
        return None
    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    if not pairable.any():
        return None
    values = np.unique(matrix[:, pairable][~np.isnan(matrix[:, pairable])])
    if values.size < 2:
        return None  # every pairable value identical: no disagreement to measure, alpha undefined
    kwargs = {"value_domain": list(domain)} if domain is not None else {}
    value = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level, **kwargs)
    return None if math.isnan(value) else float(value)


def reliability_matrices(
    rows: Sequence[dict], annotators: Sequence[str] | None = None
) -> dict[str, np.ndarray]:
    """Annotators x units matrices per scale (rows in `annotators` order; nan = not rated)."""
    annotators = sorted({r["annotator"] for r in rows}) if annotators is None else list(annotators)
    a_index = {a: i for i, a in enumerate(annotators)}
    items = sorted({r["item_id"] for r in rows})
    i_index = {it: j for j, it in enumerate(items)}
    n_quotes = {r["item_id"]: len(r["quote_labels"]) for r in rows}
    q_offset, total = {}, 0
    for it in items:
        q_offset[it] = total
        total += n_quotes[it]
    n_cat = len(ERROR_CATEGORIES)
    mats = {
        "informativeness": np.full((len(annotators), len(items)), np.nan),
        "naturalness": np.full((len(annotators), len(items)), np.nan),
        "citation": np.full((len(annotators), total), np.nan),
        "errors": np.full((len(annotators), len(items) * n_cat), np.nan),
    }
    codes = {label: k for k, label in enumerate(CITATION_LABELS)}
    for r in rows:
        if r["annotator"] not in a_index:
            continue
        a, j = a_index[r["annotator"]], i_index[r["item_id"]]
        for scale in LIKERT_SCALES:
            if r[scale] is not None:
                mats[scale][a, j] = r[scale]
        for q, label in enumerate(r["quote_labels"]):
            if label is not None:
                mats["citation"][a, q_offset[r["item_id"]] + q] = codes[label]
        if r["errors"]:
            for k, c in enumerate(ERROR_CATEGORIES):
                mats["errors"][a, j * n_cat + k] = float(c in r["errors"])
    return mats


def agreement(rows: Sequence[dict], annotators: Sequence[str] | None = None) -> dict[str, float | None]:
    """Krippendorff's alpha per scale (levels in `ALPHA_LEVELS`) and their mean."""
    mats = reliability_matrices(rows, annotators)
    out: dict[str, float | None] = {}
    for scale, level in ALPHA_LEVELS.items():
        out[scale] = _alpha(mats[scale], level, LIKERT_DOMAIN if scale in LIKERT_SCALES else None)
    defined = [v for v in out.values() if v is not None]
    out["mean"] = sum(defined) / len(defined) if len(defined) == len(ALPHA_LEVELS) else None
    return out


def leave_one_out(rows: Sequence[dict]) -> dict[str, dict]:
    """Alphas with each annotator dropped, and the change of their mean against all annotators (Table 12)."""
    annotators = sorted({r["annotator"] for r in rows})
    base = agreement(rows, annotators)["mean"]
    out = {}
    for drop in annotators:
        kept = [a for a in annotators if a != drop]
        res = agreement([r for r in rows if r["annotator"] != drop], kept)
        res["delta"] = None if res["mean"] is None or base is None else res["mean"] - base
        out[drop] = res
    return out


def annotator_diagnostics(rows: Sequence[dict]) -> dict[str, dict]:
    """Per annotator (Table 11): Likert means, mean absolute deviation from the item median, flag rate, avg. cats."""
    medians: dict[str, dict[str, float]] = defaultdict(dict)
    by_item: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_item[r["item_id"]].append(r)
    for item_id, rs in by_item.items():
        for scale in LIKERT_SCALES:
            vals = [r[scale] for r in rs if r[scale] is not None]
            if vals:
                medians[item_id][scale] = median(vals)
    out = {}
    for annotator in sorted({r["annotator"] for r in rows}):
        mine = [r for r in rows if r["annotator"] == annotator]
        answered = [r for r in mine if r["errors"]]
        res: dict[str, Any] = {"n_items": len(mine)}
        for scale in LIKERT_SCALES:
            res[f"{scale}_mean"] = mean_or_none(r[scale] for r in mine)
            res[f"{scale}_deviation"] = mean_or_none(
                abs(r[scale] - medians[r["item_id"]][scale]) for r in mine if r[scale] is not None
            )
        res["flag_rate"] = (
            (sum(r["errors"] != [NO_ERRORS] for r in answered) / len(answered)) if answered else None
        )
        res["avg_categories"] = mean_or_none(
            len([c for c in r["errors"] if c != NO_ERRORS]) for r in answered
        )
        out[annotator] = res
    return out


# ---------------------------------------------------------------------------------------------------
# Correlation with automatic metrics, paired t-tests
# ---------------------------------------------------------------------------------------------------


def load_auto_scores(
    source: str | os.PathLike | Mapping[str, Mapping[str, float]],
) -> dict[str, dict[str, float]]:
    """Per-item automatic scores: a mapping item_id -> {metric id: value}, or a JSON-lines file of rows
    {"item_id": ..., "cgs": ..., "grounding_score": ..., "citation_density": ...}."""
    if isinstance(source, Mapping):
        return {str(k): dict(v) for k, v in source.items()}
    out: dict[str, dict[str, float]] = {}
    for i, row in enumerate(read_jsonl(source), start=1):
        item_id = row.get("item_id")
        if not isinstance(item_id, str):
            raise TraceDataError(f"field 'item_id' is {item_id!r}; expected a string", path=source, line=i)
        if item_id in out:
            raise TraceDataError(f"item {item_id!r} appears twice", path=source, line=i)
        out[item_id] = {k: v for k, v in row.items() if k != "item_id"}
    return out


def _metric_value(value: Any, item_id: str, metric: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TraceDataError(
            f"automatic score {metric!r} of item {item_id!r} is {value!r}; expected a finite number or null"
        )
    return float(value)


def correlations(
    items: Mapping[str, dict], auto: Mapping[str, Mapping[str, Any]], metrics: Sequence[str] | None = None
) -> dict[str, dict[str, dict]]:
    """Spearman rho of each human rating against each automatic metric over the items having both (Table 14)."""
    from scipy.stats import spearmanr

    unknown = sorted(set(auto) - set(items))
    if unknown:
        raise TraceDataError(
            f"{len(unknown)} automatic-score item ids are not annotated, first {unknown[:3]}"
        )
    if metrics is None:
        present = {m for v in auto.values() for m in v}
        metrics = [m for m in AUTO_METRICS if m in present] + sorted(present - set(AUTO_METRICS))
    out: dict[str, dict[str, dict]] = {}
    for rating in HUMAN_RATINGS:
        out[rating] = {}
        for metric in metrics:
            xs, ys = [], []
            for item_id, scores in sorted(auto.items()):
                h = items[item_id][rating]
                m = _metric_value(scores.get(metric), item_id, metric)
                if h is not None and m is not None:
                    xs.append(h)
                    ys.append(m)
            res: dict[str, Any] = {"rho": None, "p": None, "n": len(xs)}
            if len(xs) >= 3 and len(set(xs)) > 1 and len(set(ys)) > 1:
                r = spearmanr(xs, ys)
                res["rho"], res["p"] = float(r.statistic), float(r.pvalue)
            out[rating][metric] = res
    return out


def paired_baseline_tests(
    items: Mapping[str, dict], auto: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, dict[str, dict]]:
    """Per-dialogue paired t-tests between every pair of baselines (names sorted, "A vs B"), per rating (Table 15).

    A dialogue's value for a baseline is the mean over that baseline's items of the dialogue; only dialogues
    where both baselines have a value are paired. `p_adjusted`: Holm's correction over the table's family,
    every test with a p-value (every pair on every rating and metric; docs/leaderboard.md, "Significance").
    """
    from trace_metrics.lib.significance import DEFAULT_CORRECTION, adjust, paired_ttest

    metrics = ["human_informativeness", "human_naturalness", "human_citation_precision"]
    if auto:
        present = {m for v in auto.values() for m in v}
        metrics += [m for m in AUTO_METRICS if m in present] + sorted(present - set(AUTO_METRICS))
    baselines = sorted({i["baseline"] for i in items.values()})
    out: dict[str, dict[str, dict]] = {}
    for metric in metrics:
        per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for item_id, it in items.items():
            value = (
                it.get(metric)
                if metric in it
                else _metric_value((auto or {}).get(item_id, {}).get(metric), item_id, metric)
            )
            if value is not None:
                per[it["baseline"]][it["dialogue_id"]].append(value)
        out[metric] = {}
        for a, b in itertools.combinations(baselines, 2):
            shared = sorted(set(per[a]) & set(per[b]))
            xa = [sum(per[a][d]) / len(per[a][d]) for d in shared]
            xb = [sum(per[b][d]) / len(per[b][d]) for d in shared]
            if len(shared) >= 2:
                res = paired_ttest(xa, xb)
            else:
                res = {
                    "t": None,
                    "p": None,
                    "mean_a": mean_or_none(xa),
                    "mean_b": mean_or_none(xb),
                    "n": len(shared),
                }
            out[metric][f"{a} vs {b}"] = {
                k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in res.items()
            }
    tests = [t for by_pair in out.values() for t in by_pair.values()]
    for t, p in zip(tests, adjust([t["p"] for t in tests], DEFAULT_CORRECTION), strict=True):
        t["p_adjusted"] = p
    return out


# ---------------------------------------------------------------------------------------------------
# Everything
# ---------------------------------------------------------------------------------------------------


def human_metrics_from_rows(
    rows: Sequence[dict],
    auto_scores: str | os.PathLike | Mapping[str, Mapping[str, float]] | None = None,
    metrics: Sequence[MetricSpec] = HUMAN_METRICS,
) -> dict:
    """`human_metrics` on already loaded rows (each passed through `validate_annotation`); `metrics`: the
    declarations to compute (default the registry's, family "human")."""
    check_annotations(rows)
    items = item_scores(rows)
    baselines = sorted({i["baseline"] for i in items.values()})
    overall = _aggregate(list(items.values()), metrics)
    result: dict[str, Any] = {
        "values": {m.id: overall[m.id] for m in metrics},
        "n": {
            "items": len(items),
            "annotators": len({r["annotator"] for r in rows}),
            "rows": len(rows),
            "quotes": overall["n_quotes"],
            "dialogues": len({i["dialogue_id"] for i in items.values()}),
        },
        "overall": overall,
        "per_baseline": {
            b: _aggregate([i for i in items.values() if i["baseline"] == b], metrics) for b in baselines
        },
        "alpha": agreement(rows),
        "alpha_levels": dict(ALPHA_LEVELS),
        "leave_one_out": leave_one_out(rows),
        "annotators": annotator_diagnostics(rows),
        "items": items,
    }
    auto = load_auto_scores(auto_scores) if auto_scores is not None else None
    if auto is not None:
        result["correlation"] = correlations(items, auto)
    result["ttests"] = paired_baseline_tests(items, auto)
    return result


def human_metrics(
    annotations_path: str | os.PathLike,
    auto_scores: str | os.PathLike | Mapping[str, Mapping[str, float]] | None = None,
) -> dict:
    """All human-evaluation numbers of App. K from an annotation file (format in the module docstring).

    `auto_scores`: optional per-item automatic scores (mapping item_id -> {metric: value} or a JSON-lines
    path, see `load_auto_scores`) for the Spearman correlations and the automatic-metric t-tests.
    Keys: values (the three canonical ids over all items), n, overall, per_baseline, alpha, alpha_levels,
    leave_one_out, annotators, items, ttests and, with auto_scores, correlation.
    """
    rows = load_annotations(Path(annotations_path))
    return human_metrics_from_rows(rows, auto_scores)
