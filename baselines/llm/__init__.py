"""The LLM baselines of the Trace paper (App. F, Table 8 rows 10-14, and Itinerary-LLM of Finding 1d).

    llm_zero_shot           zero_shot.py      history + POI cards + one action sentence -> ranking + response
    dst                     dst.py            LLM state deltas, merged; filters; TF-IDF ranking; LLM response
    rag_citation            rag_citation.py   top-10 Jaccard review sentences; a checked >= 10-token quote
    multi_review_synthesis  mrs.py            aspect consensus per POI -> ranking; LLM response from it
    memory_aug              memory.py         Zero-Shot + a persona-keyed memory across dialogues (not isolated)
    itinerary_llm           itinerary_llm.py  Zero-Shot + the Itinerary baseline's 500 m proximity graph

Every baseline talks to its model through the package's LLM layer (`trace_llm`: one `--llm SPEC` for
any backend, the response cache, bounded retries), keeps its prompt in `prompts/<name>.txt` (its SHA-256 is in
the run metadata) and uses App. F's decoding by default. Design choices are in docs/llm_baselines.md.
"""

# App. F's decoding (§5 and the NeurIPS checklist): DSPy/litellm defaults, i.e. no temperature override (the
# provider default, 1.0, which the paper also sets for gpt-5.4-mini) and max_tokens=600 for non-reasoning models.
# Here, not in common.py, so that `trace-bench run --help` can show them without importing the baselines.
APP_F_TEMPERATURE = 1.0
APP_F_MAX_NEW_TOKENS = 600
PREFILTERS: tuple[str, ...] = ("tfidf", "dense", "none")
PREFILTER_BASELINES: tuple[str, ...] = ("llm_zero_shot", "rag_citation", "itinerary_llm", "memory_aug")
