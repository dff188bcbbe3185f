"""CoRE (the 12-factor LLM evaluator and its multi-agent debate) as an `evaluate` metric: a thin layer over
`trace_metrics.core` (prompts, parsing, debate and their choices there and in this folder's README)."""

from __future__ import annotations

import datasets
import evaluate

from trace_metrics import module as base
from trace_metrics.core.conversation import ConversationLog, LogTurn
from trace_metrics.core.debate import DEFAULT_MAX_REPAIRS, DEFAULT_MAX_ROUNDS
from trace_metrics.core.factors import DEFAULT_MAX_RETRIES
from trace_metrics.core.prompts import FACTOR_IDS, load_prompts
from trace_metrics.core.scoring import DEFAULT_DEBATE_TOKENS, DEFAULT_FACTOR_TOKENS, score_logs, summarize

_DESCRIPTION = """\
CoRE rates a conversation log on twelve user-centric factors (coherence, recoverability, proactiveness,
grammatical correctness, naturalness, appropriateness, effectiveness, novelty, diversity, semantic relevance,
explainability, groundness), 0-4 each with a rationale, one LLM call per factor; four role-played agents then
debate a 0-100 overall score. Ratings the LLM does not give in the required form, even after the retries, are
counted as missing, never guessed.
"""

_KWARGS_DESCRIPTION = """
Args (one entry per conversation log; `trace_metrics.core.conversation.build_log` makes logs from Trace data):
    interactions (list of list of {"role", "text", "evidence"}): the rated turns, role "user" or "system";
        evidence: the system turn's cited reviews as "[Rn] (review of PLACE) text" (Groundness reads them).
    recommendations (list of list of str): the session-level recommendation list, one entry per place.
    ground_truth (list of list of str): the places the user was looking for.
    histories (list of list of {"role", "text"}): optional context before the interaction (not rated).
    ids (list of str): optional log ids (default "log0", "log1", ...).
    factors (list of str): rate only these factors (default all twelve; the others are None).
    llm (str or LLM): an LLM spec for `trace_llm.load_llm` or a loaded LLM. Default "smollm2".
    settings (dict or DecodingSettings): factor decoding (with a spec, default greedy, max_new_tokens 1024,
        seed 42; with a loaded LLM, its own settings).
    debate_settings (dict or DecodingSettings): debate decoding (with a spec, default max_new_tokens 512).
    debate (bool): run the multi-agent debate (default True). max_rounds (int, default 4).
    max_retries (int): retries of a reply without a valid rating (default 2).
    max_repairs (int): JSON repair rounds of a debater's reply (default 2).
    cache_path (str | None | False): the LLM response cache when `llm` is a spec (None: default file).
    prompts_dir (str): a prompts folder replacing the packaged one.
    return_records (bool): add `records` (per log: factor results with rationales, debate messages).
Returns:
    core_<factor> (0-4, mean over the logs it was rated on, None if none), core_factor_mean (0-4),
    core_overall (0-100, mean debate score), n_items, n_ratings, n_missing_ratings, n_overall,
    n_debate_failed, llm_backend, llm_model, prompts_version, prompts_sha256.
"""


def _turns(turns) -> tuple[LogTurn, ...]:
    return tuple(LogTurn(t["role"], t["text"], tuple(t.get("evidence") or ())) for t in turns or ())


def _settings(value, default_tokens: int):
    from trace_llm import DecodingSettings

    if value is None:
        return DecodingSettings(max_new_tokens=default_tokens)
    return DecodingSettings.from_dict(value) if isinstance(value, dict) else value


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Core(base.TraceMetric):
    description = _DESCRIPTION
    inputs_description = _KWARGS_DESCRIPTION
    input_features = {
        "interactions": [
            {
                "role": datasets.Value("string"),
                "text": datasets.Value("string"),
                "evidence": datasets.Sequence(datasets.Value("string")),
            }
        ],
        "recommendations": datasets.Sequence(datasets.Value("string")),
        "ground_truth": datasets.Sequence(datasets.Value("string")),
    }
    options = (
        "histories",
        "ids",
        "factors",
        "llm",
        "settings",
        "debate_settings",
        "debate",
        "max_rounds",
        "max_retries",
        "max_repairs",
        "cache_path",
        "prompts_dir",
        "return_records",
    )

    def _score(
        self,
        interactions,
        recommendations,
        ground_truth,
        histories=None,
        ids=None,
        factors=FACTOR_IDS,
        llm="smollm2",
        settings=None,
        debate_settings=None,
        debate=True,
        max_rounds=DEFAULT_MAX_ROUNDS,
        max_retries=DEFAULT_MAX_RETRIES,
        max_repairs=DEFAULT_MAX_REPAIRS,
        cache_path=None,
        prompts_dir=None,
        return_records=False,
    ) -> dict:
        from trace_llm import load_llm

        n = len(interactions)
        for name, value in (("ids", ids), ("histories", histories)):
            if value is not None and len(value) != n:
                raise ValueError(f"{len(value)} {name} for {n} logs; expected one per log")
        # a spec gets CoRE's defaults; a loaded LLM keeps its own settings unless some are given here
        given = isinstance(llm, str)
        factor_settings = _settings(settings, DEFAULT_FACTOR_TOKENS) if given or settings else None
        debate_settings = (
            _settings(debate_settings, DEFAULT_DEBATE_TOKENS) if given or debate_settings else None
        )
        if given:
            llm = load_llm(llm, settings=factor_settings, cache_path=cache_path)
        prompts = load_prompts(prompts_dir)
        logs = [
            ConversationLog(
                log_id=ids[i] if ids is not None else f"log{i}",
                interaction=_turns(interactions[i]),
                history=_turns(histories[i]) if histories is not None else (),
                recommendations=tuple(recommendations[i]),
                ground_truth=tuple(ground_truth[i]),
            )
            for i in range(n)
        ]
        records = score_logs(
            llm,
            logs,
            prompts,
            factors=factors,
            debate=debate,
            max_rounds=max_rounds,
            max_retries=max_retries,
            max_repairs=max_repairs,
            factor_settings=factor_settings,
            debate_settings=debate_settings,
        )
        summary = summarize(records, debate=debate)
        out: dict = {f"core_{f}": summary["factors"].get(f, {}).get("mean") for f in FACTOR_IDS}
        out["core_factor_mean"] = summary["factor_mean"]["mean"]
        out["core_overall"] = summary["overall"]["mean"] if debate else None
        out["n_items"] = n
        out["n_ratings"] = summary["ratings"]["ok"]
        out["n_missing_ratings"] = summary["ratings"]["missing"]
        out["n_overall"] = summary["overall"]["n"] if debate else 0
        out["n_debate_failed"] = summary["overall"]["n_failed"] if debate else 0
        described = llm.describe() if hasattr(llm, "describe") else {}
        out["llm_backend"] = described.get("backend")
        out["llm_model"] = described.get("model")
        out["prompts_version"] = prompts.version
        out["prompts_sha256"] = prompts.sha256
        if return_records:
            out["records"] = records
        return out
