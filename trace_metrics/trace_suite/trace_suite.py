"""The whole Trace suite as an `evaluate` metric: prediction rows + a data directory -> the leaderboard row.

A thin layer over `trace_metrics.lib.suite.evaluate_rows`; see this folder's README.md.
"""

from __future__ import annotations

import evaluate

from trace_dataset.schema import PREDICTION_FEATURES
from trace_metrics import module as base
from trace_metrics import specs
from trace_metrics.lib import predictions as preds_lib
from trace_metrics.lib import suite as lib

_DESCRIPTION = """\
Every automatic Trace metric for one system at once (Trace §3, App. A Table 7, J, L, S): accuracy and
grounding on recommend/compare turns, BLEU-4 and ROUGE-L on all system turns, practical value per dialogue,
TSR/T2R per dialogue and rejection recovery per episode; with an NLI model, entailment and CGS_ent; with an
LLM judge, the five judge scales. The predictions must be exactly the system turns of the split (validated).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of dict): prediction rows {"dialogue_id", "turn_id", "ranked_poi_ids", "response",
        "citations": {"R1": review_id, ...}} (a list of {"label", "review_id"} also works; "meta" is ignored).
    data_dir (str): a (hydrated) Trace data directory.
    split (str): "train", "validation" or "test" (default).
    pool (str): "closed" (default), "pool_16", "pool_32" or "open": the candidates rankings are checked against.
    nli (str, optional): NLI model id or folder for entailment / cgs_ent. judge (str, optional): LLM spec.
    grounding_turns (str): "recommendation" (default: recommend/compare turns) or "system" (every system turn).
    compare_hit (str): "top2" (default: a compare turn hits with either of its top two) or "top1".
    t2r (str): "count" (default: recommend/compare turns up to the first hit) or "turn_index" (its turn index).
    fuzzy_threshold, cd_gate, pc_window, radius_km, use_stemmer: the suite options (trace_metrics.specs).
    check_pool (bool): check the rankings against the pool (default True).
Returns:
    every metric id (recall@1 ... rejection_recovery; cgs is the formula on the GS/CD/PC means, cgs_turn_mean
    the mean of per-turn CGS) with `<id>_n`, n_<count> for the counts
    (dialogues, system_turns, ...), corpus_version, kb_version, split, pool.
Examples:
    >>> suite = evaluate.load(trace_metrics.module_path("trace_suite"))
    >>> row = suite.compute(predictions=rows, data_dir="path/to/trace", split="test")
"""

# the metric options come from their declarations (trace_metrics.specs.SUITE_OPTIONS)
_OPTIONS = ("data_dir", "split", "pool", "nli", "judge", *specs.SUITE_OPTIONS, "check_pool")


def _arrow_row(row: dict) -> dict:
    """A row in the Features form (citations as a list); malformed rows fail as in predictions validation."""
    return preds_lib.check_row(row).to_features()


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class TraceSuite(base.TraceMetric):
    description = _DESCRIPTION
    inputs_description = _KWARGS_DESCRIPTION
    input_features = {"predictions": dict(PREDICTION_FEATURES)}
    options = _OPTIONS

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Add prediction rows (the JSONL dict form is converted to the Features form first)."""
        if predictions is not None:
            predictions = [_arrow_row(r) for r in predictions]
        return super().add_batch(predictions=predictions, **kwargs)

    def _score(
        self, predictions, data_dir=None, split="test", pool="closed", nli=None, judge=None, **options
    ) -> dict:
        if data_dir is None:
            raise ValueError("trace_suite needs data_dir=, a Trace data directory")
        rows = [{**r, "citations": {c["label"]: c["review_id"] for c in r["citations"]}} for r in predictions]
        result = lib.evaluate_rows(data_dir, rows, split, pool, nli, judge, with_std=False, **options)
        return lib.leaderboard_row(result)
