"""Collab-REC (Banerjee et al.): three LLM agents negotiating under a deterministic moderator.

    moderator.py       Eq. 2-13 in plain Python, and one query's negotiation state (`Moderator`)
    agents.py          App. D's prompts through the LLM layer (prompts/collab_rec.txt, prompts/collab_rec.json)
    negotiation.py     RandRec, TopPop, SASI, MASI, MAMI over a batch of tasks
    catalogue.py       the authors' CSV formats (city knowledge base, queries) and M(c)
    trace_filters.py, trace_pipeline.py      the Trace baseline `collab_rec`

Its own benchmark (`trace-bench collab-rec run|tables`) is in the harness: `trace_harness.protocols.collab_rec`.

Choices and every difference between the paper and the authors' code: docs/collab_rec.md.
"""
