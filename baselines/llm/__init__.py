"""The LLM baselines of the Trace paper (App. F, Table 8 rows 10-14, and Itinerary-LLM of Finding 1d).

    llm_zero_shot           llm_zero_shot.py  history + POI cards + one action sentence -> ranking + response
    dst                     dst.py            LLM state deltas, merged; filters; TF-IDF ranking; LLM response
    rag_citation            rag_citation.py   top-10 Jaccard review sentences; a checked >= 10-token quote
    multi_review_synthesis  multi_review_synthesis.py  aspect consensus per POI ranks; the LLM writes from it and its sentences
    memory_aug              memory_aug.py     Zero-Shot + a persona-keyed memory across dialogues (not isolated)
    itinerary_llm           itinerary_llm.py  Zero-Shot + the Itinerary baseline's 500 m proximity graph

Every baseline talks to its model through the package's LLM layer (`trace_llm`: one `--llm SPEC` for
any backend, the response cache, bounded retries), keeps its prompt in `prompts/<name>.txt` (its SHA-256 is in
the run metadata) and uses App. F's decoding by default. Design choices are in docs/llm_baselines.md.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trace_llm import LLM

# App. F's decoding (§5 and the NeurIPS checklist): "DSPy/litellm defaults (no explicit temperature override, single
# response, default retry, max_tokens=600); reasoning models (gpt-5.4-mini) use temperature=1.0 and
# max_tokens=16,000". That pair is what DSPy 3.0.3 demanded of a reasoning model (its LM refused gpt-5* unless
# temperature=1.0 and max_tokens >= 16,000; 3.0.0-3.0.2 wanted 20,000, and after stanfordnlp/dspy#8908, in the
# releases from 3.0.4 on, nothing need be set), so the release is 3.0.3, whose `dspy.LM` default temperature is
# 0.0: that is what "no override" leaves a non-reasoning backbone. The other reading (the provider's own default, 1.0, as DSPy >= 3.0.4 leaves it) is `--temperature 1.0`.
# Here, not in common.py, so that `trace-bench run --help` can show them without importing the baselines.
APP_F_TEMPERATURE = 0.0  # non-reasoning backbones: DSPy 3.0.3's dspy.LM default
APP_F_MAX_NEW_TOKENS = 600
REASONING_TEMPERATURE = 1.0  # reasoning backbones (gpt-5.4-mini): the paper's explicit setting
REASONING_MAX_NEW_TOKENS = 16000
PROVIDER_DEFAULT_TEMPERATURE = 1.0  # the other reading of "no explicit temperature override"
# DSPy 3.0.3's test for a reasoning model, on the model name's last path part, lower-cased (re.match: a prefix).
REASONING_MODEL_PATTERN = r"^(?:o[1345]|gpt-5)(?:-(?:mini|nano))?"
PREFILTERS: tuple[str, ...] = ("tfidf", "dense", "none")
PREFILTER_BASELINES: tuple[str, ...] = ("llm_zero_shot", "rag_citation", "itinerary_llm", "memory_aug")


def is_reasoning_model(model: str) -> bool:
    """Whether DSPy 3.0.3 treats `model` (a name, a Hub id or an `--llm` spec) as a reasoning model."""
    if ":" in model:  # an --llm spec: the model it names
        from trace_llm.spec import parse_spec

        spec = parse_spec(model)
        model = spec.model or spec.target or spec.backend
    family = model.rstrip("/").rsplit("/", 1)[-1].lower()
    return re.match(REASONING_MODEL_PATTERN, family) is not None


def app_f_decoding(
    llm: str | LLM | None, temperature: float | None = None, max_new_tokens: int | None = None
) -> tuple[float, int]:
    """App. F's (temperature, max_new_tokens) for the model `llm` names (a spec string; a loaded LLM or None is
    not a reasoning model here), each replaced by the value given, if any."""
    reasoning = isinstance(llm, str) and bool(llm) and is_reasoning_model(llm)
    return (
        (REASONING_TEMPERATURE if reasoning else APP_F_TEMPERATURE) if temperature is None else temperature,
        (REASONING_MAX_NEW_TOKENS if reasoning else APP_F_MAX_NEW_TOKENS)
        if max_new_tokens is None
        else max_new_tokens,
    )
