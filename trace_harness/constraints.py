"""Every constraint the package sends to an LLM, in one place: the unit tests compile each to a grammar and
benchmarks/structured.py measures them. A new LLM caller adds its schema here.

Schemas that depend on the request (the candidate ids of a ranking, a Collab-REC catalogue) appear with a
typical instance: the ranking over 8 shown cards, a catalogue of 6 cities.
"""

from __future__ import annotations

from trace_llm.structured import Constraint

SAMPLE_LABELS: tuple[str, ...] = tuple(f"P{i}" for i in range(1, 9))
SAMPLE_CATALOGUE: tuple[str, ...] = ("Amsterdam", "Barcelona", "Bruges", "Ljubljana", "Porto", "Tallinn")


def package_constraints() -> dict[str, Constraint]:
    """name -> Constraint, for every kind of request the package makes with a constraint."""
    from baselines.collab_rec.agents import AGENT_SCHEMA, agent_schema
    from baselines.llm.common import ranking_schema
    from baselines.llm.dst import DELTA_SCHEMA
    from baselines.sniprec.llm_snippets import SNIPPET_SCHEMA
    from baselines.sniprec.queries import QUERY_SCHEMA
    from trace_dataset.generate.llm_backend import TURN_SCHEMA
    from trace_metrics.core.debate import DEBATE_SCHEMA
    from trace_metrics.core.factors import rating_constraint
    from trace_metrics.lib.judge import JUDGE_SCHEMA

    schemas = {
        "llm_baselines.ranking": ranking_schema(SAMPLE_LABELS, True),
        "llm_baselines.response": ranking_schema(SAMPLE_LABELS, False),
        "dst.delta": DELTA_SCHEMA,
        "collab_rec.agent": agent_schema(SAMPLE_CATALOGUE),
        "collab_rec.agent_open": AGENT_SCHEMA,
        "sniprec.item_snippets": SNIPPET_SCHEMA,
        "sniprec.query_snippets": QUERY_SCHEMA,
        "judge.ratings": JUDGE_SCHEMA,
        "core.debate": DEBATE_SCHEMA,
        "generator.turns": TURN_SCHEMA,
    }
    out = {name: Constraint.json(schema) for name, schema in schemas.items()}
    out["core.factor_rating"] = rating_constraint()
    return out
