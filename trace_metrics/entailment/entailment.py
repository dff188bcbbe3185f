"""Entailment grounding and CGS_ent (Trace App. L) as an `evaluate` metric: a thin layer over
`trace_metrics.lib.entailment` (definitions and choices there and in this folder's README)."""

from __future__ import annotations

import datasets
import evaluate

from trace_metrics import module as base
from trace_metrics.lib.entailment import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_LENGTH,
    DEFAULT_NLI_MODEL,
    DEFAULT_THRESHOLD,
    NLIScorer,
    aggregate_entailment,
    entailment_scores,
    grounding_components,
)

_DESCRIPTION = """\
Entailment grounding: the share of a response's sentences (claims) that an NLI model finds entailed by the
reviews the response cites (max entailment probability over the cited reviews >= threshold, default 0.5), and
CGS_ent = Entail x min(1, CD / 0.05) x (0.5 + 0.5 x PC). Also reports each sentence's category (Quote,
Framing, Rating-meta, Other-claim) and the entailed rate per category (the paper's calibration mini-audit).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): system responses, with [Rn] citation labels.
    references (list of list of str): per response, the cited review texts; references[i][n-1] is the review
        label [Rn] of response i points to (None for a label that points nowhere).
    model (str): NLI model: a Hub id (default cross-encoder/nli-deberta-v3-base) or a local folder.
    threshold (float): entailment probability threshold, default 0.5.
    thresholds (list of float): extra thresholds reported as `entailment@t` (App. L sweep: 0.3 ... 0.7).
    batch_size (int), device (str), dtype (str), max_length (int): inference settings.
    cache_path (str | None | False): SQLite cache of NLI results (None: the user cache folder; False: none).
    premise_scope ("cited" | "all"): premises are the reviews whose labels the response contains (default),
        or every given review.
    citation_density, provenance_coverage (list of float): per-response CD and PC for cgs_ent; when omitted
        they are computed with trace_metrics.lib.grounding (cd_gate 0.05, pc_window 80).
    scorer (NLIScorer): an already loaded scorer (overrides the model settings).
    return_per_item (bool): add `entailment_per_item`, `cgs_ent_per_item`; return_claims (bool): add `claims`.
Returns:
    entailment (0-1), cgs_ent (0-1, the formula on the means, as Table 22 and the leaderboard),
    cgs_ent_turn_mean (0-1, mean of per-response values), n, n_claims, n_without_premises, share_<category> and entailed_<category> for
    quote, framing, rating_meta, other_claim, n_<category>, entailment@t per sweep threshold, nli_model,
    nli_model_key, nli_entailment_label, nli_dtype, threshold.
Examples:
    >>> entailment = evaluate.load(trace_metrics.module_path("entailment"))
    >>> results = entailment.compute(predictions=["It is \\"great\\" [R1]."], references=[["great food"]],
    ...                              model="/path/to/nli-model")
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Entailment(base.TraceMetric):
    description = _DESCRIPTION
    inputs_description = _KWARGS_DESCRIPTION
    input_features = {
        "predictions": datasets.Value("string"),
        "references": datasets.Sequence(datasets.Value("string")),
    }
    # the declared metric options (cd_gate, pc_window) come from trace_metrics.specs
    options = (
        "model",
        "threshold",
        "thresholds",
        "batch_size",
        "cache_path",
        "device",
        "dtype",
        "max_length",
        "premise_scope",
        "citation_density",
        "provenance_coverage",
        *base.declared_options("entailment"),
        "scorer",
        "return_per_item",
        "return_claims",
    )

    def _load_scorer(self, model, batch_size, cache_path, device, dtype, max_length) -> NLIScorer:
        """One loaded model per metric instance, reused while the settings stay the same."""
        key = (str(model), batch_size, str(cache_path), device, dtype, max_length)
        cached = getattr(self, "_cached_scorer", None)
        if cached is None or cached[0] != key:
            scorer = NLIScorer(
                model,
                batch_size,
                DEFAULT_THRESHOLD,
                cache_path,
                device=device,
                dtype=dtype,
                max_length=max_length,
            )
            self._cached_scorer = (key, scorer)
        return self._cached_scorer[1]

    def _score(
        self,
        predictions,
        references,
        model=DEFAULT_NLI_MODEL,
        threshold=DEFAULT_THRESHOLD,
        thresholds=(),
        batch_size=DEFAULT_BATCH_SIZE,
        cache_path=None,
        device=None,
        dtype=None,
        max_length=DEFAULT_MAX_LENGTH,
        premise_scope="cited",
        citation_density=None,
        provenance_coverage=None,
        scorer=None,
        return_per_item=False,
        return_claims=False,
        **options,
    ) -> dict:
        o = base.metric_options("entailment", options)
        cd_gate, pc_window = o["cd_gate"], o["pc_window"]
        scorer = scorer or self._load_scorer(model, batch_size, cache_path, device, dtype, max_length)
        results = entailment_scores(
            predictions, references, scorer, threshold=threshold, premise_scope=premise_scope
        )
        if citation_density is None and provenance_coverage is None:
            citation_density, provenance_coverage = grounding_components(predictions, references, pc_window)
        out = aggregate_entailment(
            results,
            citation_density,
            provenance_coverage,
            cd_gate,
            thresholds,
            return_per_item=return_per_item,
        )
        described = scorer.describe()
        out.update(
            nli_model=described["model"],
            nli_model_key=described["model_key"],
            nli_entailment_label=described["entailment_label"],
            nli_dtype=described["dtype"],
            threshold=threshold,
        )
        if return_claims:
            out["claims"] = [r["claims"] for r in results]
        return out
