"""Helpers for the CoRE tests: a scripted responder for the OpenAI-compatible stub server (recorded-style model
replies per factor and per debater), so the real LLM layer runs end to end without a model."""

from __future__ import annotations

import json
import re

FACTOR_RE = re.compile(r"You will assess the (.+?) of the recommender system")
ROLE_RE = re.compile(r"YOUR ROLE: (.+)")


def scripted(ratings=None, debate_scores=None, default_rating="<rating>3</rating>"):
    """A stub responder: factor prompts get `ratings[factor name]` (a reply text, or a list of texts taken in
    order for the first try and the retries), debate prompts `{"statement", "score"}` with
    `debate_scores[role name]` (default "70")."""
    ratings = {k: list(v) if isinstance(v, list) else v for k, v in (ratings or {}).items()}
    debate_scores = debate_scores or {}

    def respond(body):
        first = body["messages"][0]["content"]
        role = ROLE_RE.search(first)
        if role:
            name = role.group(1).strip()
            return (
                200,
                json.dumps(
                    {
                        "evaluator": name,
                        "statement": f"{name} thinks so.",
                        "score": debate_scores.get(name, "70"),
                    }
                ),
            )
        factor = FACTOR_RE.search(first).group(1)
        reply = ratings.get(factor, default_rating)
        if isinstance(reply, list):
            attempt = (len(body["messages"]) - 1) // 2  # 0 for the first try, 1 for the first retry, ...
            reply = reply[min(attempt, len(reply) - 1)]
        return (200, f"Reasoning about {factor}. {reply}")

    return respond
