"""LLM-as-Judge (Trace App. J, U) as an `evaluate` metric: a thin layer over `trace_metrics.lib.judge`
(prompt, parsing and failure handling there and in this folder's README)."""

from __future__ import annotations

import datasets
import evaluate

from trace_metrics import module as base
from trace_metrics.lib.judge import DEFAULT_MAX_REPAIRS, aggregate_judgements, judge_turns

_DESCRIPTION = """\
An LLM judge rates each system response on five 1-5 Likert scales: Relevance, Informativeness, Grounding
Quality, Natural Flow and Justification. The judge is any model of the project's LLM layer
(`trace_llm`: the packaged SmolLM2, a transformers model, or an OpenAI-compatible server). Items the
judge cannot rate, even after the repair retries, are counted in `n_failed`; means are over rated items.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): system responses.
    references (list of list of str): per response, the texts of the reviews it cites ([Rn] = references[i][n-1]).
    contexts (list of str): per response, the dialogue before it ("User: ...\\nSystem: ..."); "" if none.
    llm (str or LLM): an LLM spec for `trace_llm.load_llm` ("smollm2", "hf:PATH_OR_ID",
        "openai:BASE_URL#MODEL") or an already loaded LLM object. Default "smollm2".
    settings (dict or DecodingSettings): decoding settings (default greedy, max_new_tokens 256, seed 42).
    max_repairs (int): repair rounds for invalid JSON (default 2).
    cache_path (str | None | False): the LLM response cache when `llm` is a spec (None: default file).
    item_ids (list of str): optional ids kept in the records.
    return_per_item (bool): add `<metric>_per_item` lists (None where the judge failed).
    return_records (bool): add `records`: per item ok, ratings, raw output, error.
Returns:
    judge_relevance, judge_informativeness, judge_grounding, judge_flow, judge_justification (1-5, mean over
    rated items, None if none), n (rated), n_items, n_failed, llm_backend and llm_model (from describe()).
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class LLMJudge(base.TraceMetric):
    description = _DESCRIPTION
    inputs_description = _KWARGS_DESCRIPTION
    input_features = {
        "predictions": datasets.Value("string"),
        "references": datasets.Sequence(datasets.Value("string")),
        "contexts": datasets.Value("string"),
    }
    options = (
        "llm",
        "settings",
        "max_repairs",
        "cache_path",
        "item_ids",
        "return_per_item",
        "return_records",
    )

    def _score(
        self,
        predictions,
        references,
        contexts,
        llm="smollm2",
        settings=None,
        max_repairs=DEFAULT_MAX_REPAIRS,
        cache_path=None,
        item_ids=None,
        return_per_item=False,
        return_records=False,
    ) -> dict:
        from trace_llm import DecodingSettings, load_llm

        if isinstance(settings, dict):
            settings = DecodingSettings.from_dict(settings)
        if isinstance(llm, str):
            llm = load_llm(llm, settings=settings, cache_path=cache_path)
        if item_ids is not None and len(item_ids) != len(predictions):
            raise ValueError(
                f"{len(item_ids)} item_ids for {len(predictions)} predictions; expected one per prediction"
            )
        items = [
            {"item_id": None if item_ids is None else item_ids[i], "response": p, "reviews": r, "context": c}
            for i, (p, r, c) in enumerate(zip(predictions, references, contexts, strict=True))
        ]
        records = judge_turns(llm, items, settings=settings, max_repairs=max_repairs)
        out = aggregate_judgements(records, return_per_item=return_per_item)
        described = llm.describe()
        out["llm_backend"] = described.get("backend")
        out["llm_model"] = described.get("model")
        if return_records:
            out["records"] = records
        return out
