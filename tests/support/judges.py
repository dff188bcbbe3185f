"""Scripted judges for the reliability reports: subclasses of the real `trace_llm.LLM` (through
`tests.support.llm.ScriptedLLM`) whose ratings depend on one thing only.

- `LengthLovingJudge`: the LLM judge's five ratings all grow with the length of the rated response (words),
  whatever it says: the length bias the reliability report must show, and that its LC score must remove.
"""

from __future__ import annotations

import math
import re
from typing import Any

from tests.support.llm import Conversation, ScriptedLLM

RESPONSE_RE = re.compile(r"RESPONSE:\n(.*?)\n\nReturn the JSON", re.DOTALL)


def length_rating(n_words: int) -> int:
    """1 at 8 words up to 5 at 80, linear in the log of the length (rounded, clamped to 1-5)."""
    return max(1, min(5, round(1 + 4 * math.log(max(n_words, 1) / 8) / math.log(10))))


class LengthLovingJudge(ScriptedLLM):
    backend = "scripted"

    def __init__(self, **kwargs: Any):
        super().__init__(self._rate, model=kwargs.pop("model", "scripted-judge"), **kwargs)

    @staticmethod
    def _rate(conversation: Conversation) -> dict[str, int]:
        found = RESPONSE_RE.search(conversation[-1]["content"])
        if found is None:
            raise AssertionError("not a judge prompt: no RESPONSE section")
        score = length_rating(len(found.group(1).split()))
        return {k: score for k in ("relevance", "informativeness", "grounding", "flow", "justification")}


__all__ = ["LengthLovingJudge", "length_rating"]


def order_sensitive_core(conversation: Conversation) -> Any:
    """A CoRE judge that rates a factor 4 when the session list's first place sorts before its last, else 1 (so
    reversing the list flips every rating of a list of two different places); debaters all say 70."""
    text = conversation[0]["content"]
    if "YOUR ROLE:" in text:
        return {"evaluator": "x", "statement": "Agreed.", "score": "70"}
    listed = text.split("<system_recommendation_list>")[-1].split("</system_recommendation_list>")[0]
    entries = [line.strip() for line in listed.strip().splitlines()]
    names = [e.split(". ", 1)[1] if ". " in e else e for e in entries]
    rating = 4 if names and names[0] <= names[-1] else 1
    return f"Reasoning. <rating>{rating}</rating>"


__all__ += ["order_sensitive_core"]
