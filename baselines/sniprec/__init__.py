"""SnipRec (Sun et al., "Snippet-based Conversational Recommender System") and its Snippet / Sentence /
Document comparison systems, run on Trace as baselines.

    units.py        retrieval units: the deterministic snippet rules, sentences, documents, App. A.1 templates
    llm_snippets.py item snippets from the LLM (App. C.1 and its name post-check)
    store.py        the on-disk unit cache of a knowledge base (resumable, shared by processes)
    index.py        dense retrieval: unit and query embeddings, top-k
    queries.py      query snippets (App. C.2), rejections, expansion (App. C.3)
    scoring.py      SCORE_t(i) = SCORE_{t-1}(i) + sum of sgn(q) / (kappa + rank)
    respond.py      verbatim quotes behind the best snippets, clarification questions (App. C.4)
    pipeline.py     the four Trace pipelines
    cli.py          `trace-bench sniprec build`: a knowledge base's unit store ahead of runs
    prompts/        App. C's prompts as versioned files (SHA-256 in run metadata)

Design, choices and results: docs/sniprec.md.
"""
