"""Human evaluation (Trace App. K) as an `evaluate` metric: a thin layer over `trace_metrics.lib.human`
(annotation format, aggregation and agreement choices there and in this folder's README)."""

from __future__ import annotations

import datasets
import evaluate

from trace_metrics import module as base
from trace_metrics.lib.human import ALPHA_LEVELS, human_metrics_from_rows
from trace_metrics.lib.human_format import REQUIRED_FIELDS, validate_annotation

_DESCRIPTION = """\
Human evaluation of system responses: citation precision (majority vote per quote, share Supported),
informativeness and naturalness (1-5 Likert means), Krippendorff's alpha per scale (ordinal Likert, nominal
citation labels and error categories) with a leave-one-annotator-out diagnostic, Spearman correlation with
per-item automatic scores, and per-dialogue paired t-tests between baselines.
"""

_KWARGS_DESCRIPTION = """
Args (one list entry per (item, annotator) annotation; or `trace_metrics.lib.human_format.annotation_columns(path)` for a JSON-lines file):
    item_id, annotator, baseline, dialogue_id (list of str)
    quote_labels (list of list of str|None): per quote "Supported" / "Partial" / "Not supported".
    errors (list of list of str): checked error categories (fabrication, wrong_poi, irrelevant_citation,
        too_vague, missing_citation, exaggeration, factual_error, no_errors).
    informativeness, naturalness (list of int|None): 1-5.
    auto_scores (dict or path): optional per-item automatic scores {item_id: {"cgs": .., "grounding_score": ..,
        "citation_density": ..}} for correlations and t-tests.
Returns:
    human_citation_precision (0-1), human_informativeness (1-5), human_naturalness (1-5), alpha_informativeness,
    alpha_naturalness, alpha_citation, alpha_errors, alpha_mean (-1..1, None when undefined), n_items,
    n_annotators, n_quotes; with auto_scores, spearman_<rating>_vs_<metric> (rho) and spearman_p_<rating>_vs_<metric>
    for the ratings human_citation_precision, human_informativeness, human_naturalness, error_free_rate.
    Per-baseline values, leave-one-out alphas and t-tests: trace_metrics.lib.human.human_metrics.
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Human(base.TraceMetric):
    description = _DESCRIPTION
    inputs_description = _KWARGS_DESCRIPTION
    input_features = {
        "item_id": datasets.Value("string"),
        "annotator": datasets.Value("string"),
        "baseline": datasets.Value("string"),
        "dialogue_id": datasets.Value("string"),
        "quote_labels": datasets.Sequence(datasets.Value("string")),
        "errors": datasets.Sequence(datasets.Value("string")),
        "informativeness": datasets.Value("int32"),
        "naturalness": datasets.Value("int32"),
    }
    options = ("auto_scores",)

    def _score(
        self,
        item_id,
        annotator,
        baseline,
        dialogue_id,
        quote_labels,
        errors,
        informativeness,
        naturalness,
        auto_scores=None,
    ) -> dict:
        columns = (
            item_id,
            annotator,
            baseline,
            dialogue_id,
            quote_labels,
            errors,
            informativeness,
            naturalness,
        )
        rows = [
            validate_annotation(dict(zip(REQUIRED_FIELDS, values, strict=True)), path="inputs", line=i)
            for i, values in enumerate(zip(*columns, strict=True), start=1)
        ]
        res = human_metrics_from_rows(rows, auto_scores)
        out = dict(res["values"])
        for scale in ALPHA_LEVELS:
            out[f"alpha_{scale}"] = res["alpha"][scale]
        out["alpha_mean"] = res["alpha"]["mean"]
        out["n_items"] = res["n"]["items"]
        out["n_annotators"] = res["n"]["annotators"]
        out["n_quotes"] = res["n"]["quotes"]
        for rating, by_metric in res.get("correlation", {}).items():
            for metric, r in by_metric.items():
                out[f"spearman_{rating}_vs_{metric}"] = r["rho"]
                out[f"spearman_p_{rating}_vs_{metric}"] = r["p"]
        return out
