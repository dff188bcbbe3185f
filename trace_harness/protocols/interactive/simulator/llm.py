"""The `llm` simulator: any `--llm` model words the traveler's decisions (iEvaLM-style persona prompt).

What the traveler does (answer, reject naming a preference, accept) is decided by `policy.decide`, the same
check as the rules simulator, so success is never the model's opinion; the model writes the message from
`prompts/traveler_v1.txt` (persona, travel context, the preferences it holds as private wishes, the
conversation so far, and the instruction for this turn). No target POI is ever put in the prompt, and, as
iEvaLM does, every sentence of the reply too close to a target's name is removed (rapidfuzz partial ratio
>= NAME_SIMILARITY against each target name, except the POI the system just recommended, which the traveler
may name). A reply that is empty after that, or a failed call, falls back to the rules wording of the same
decision; both are counted and marked in the turn's meta.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import trace_dataset.generate.phrases as P
from trace_dataset.constants import SEED
from trace_harness.protocols.interactive.simulator.goal import World
from trace_harness.protocols.interactive.simulator.party import SimulatedUser
from trace_harness.protocols.interactive.simulator.policy import Decision
from trace_harness.protocols.interactive.simulator.rules import Simulator, Traveler, rules_text
from trace_llm.base import LLM
from trace_llm.errors import LLMConnectionError, LLMError
from trace_llm.prompts import Prompt, load_prompt

log = logging.getLogger(__name__)

PROMPTS_DIR = Path(__file__).with_name("prompts")  # the simulators' prompt files (trace_llm.prompts)
PROMPT_FILE = "traveler_v1.txt"
NAME_SIMILARITY = 90  # rapidfuzz partial_ratio (0-100) at or above which a sentence names a target
MIN_NAME_CHARS = 4  # names shorter than this are not filtered (they match too much ordinary text)
TRANSCRIPT_TURNS = 12  # most recent messages shown to the model
_SENTENCE_RE = re.compile(r"[^.!?\n]+[.!?]*")
_LEADING_ROLE_RE = re.compile(r"^\s*(?:traveler|traveller|user|seeker|me|you)\s*:\s*", re.IGNORECASE)


def clean_reply(text: str) -> str:
    """One chat message from a model reply: the first non-empty paragraph, without a role prefix or quotes."""
    para = next((p.strip() for p in text.strip().split("\n\n") if p.strip()), "")
    para = _LEADING_ROLE_RE.sub("", para.replace("\n", " ")).strip()
    if len(para) >= 2 and para[0] == para[-1] and para[0] in "\"'":
        para = para[1:-1].strip()
    return para


def remove_names(text: str, names: Iterable[str], threshold: int = NAME_SIMILARITY) -> tuple[str, int]:
    """`text` without the sentences too close to any of `names`; (kept text, sentences removed)."""
    from rapidfuzz import fuzz

    keys = [n.lower() for n in names if len(n.strip()) >= MIN_NAME_CHARS]
    kept, removed = [], 0
    for m in _SENTENCE_RE.finditer(text):
        sentence = m.group().strip()
        if not sentence:
            continue
        low = sentence.lower()
        if any(fuzz.partial_ratio(k, low) >= threshold for k in keys):
            removed += 1
            continue
        kept.append(sentence)
    return " ".join(kept), removed


def generate_or_none(llm: LLM, conversations: list[list[dict[str, str]]]) -> list[str | None]:
    """One text per conversation, None where the call failed (after the layer's own retries and timeouts);
    a failed batch is retried one conversation at a time so one bad request costs one answer. A server that
    cannot be reached (LLMConnectionError) stops the run (resumable) instead of being retried per conversation."""
    if not conversations:
        return []
    try:
        return list(llm.generate_batch(conversations))
    except LLMConnectionError:
        raise
    except LLMError as e:
        log.warning("simulator batch failed (%s); retrying one conversation at a time", e)
    out: list[str | None] = []
    for conv in conversations:
        try:
            out.append(llm.generate_batch([conv])[0])
        except LLMConnectionError:
            raise
        except LLMError as e:
            log.warning("simulator call failed: %s", e)
            out.append(None)
    return out


def worded(raw: str | None, names: Iterable[str], fallback: Callable[[], str]) -> tuple[str, dict[str, Any]]:
    """(message, meta) from a model reply: cleaned, sentences naming a target removed; the rules wording
    (`fallback()`) when the call failed or nothing is left, with why in the meta."""
    why, removed, text = None, 0, ""
    if raw is None:
        why = "llm_error"
    else:
        text, removed = remove_names(clean_reply(raw), names)
        if not text:
            why = "empty_after_filter" if removed else "empty_reply"
    if why is not None:
        text = fallback()
    extra: dict[str, Any] = {"wording": "rules_fallback" if why else "llm"}
    if why:
        extra["fallback"] = why
    if removed:
        extra["sentences_removed"] = removed
    return text, extra


class LLMWording(SimulatedUser):
    """What both LLM-worded simulators hold beside their rules parent: the model and the versioned prompt.

    Mixed in before the rules class (`class LLMSimulator(LLMWording, Simulator)`); `prompt_file` names the
    default prompt under trace_harness/protocols/interactive/simulator/prompts/.
    """

    name = "llm"
    prompt_file: str = PROMPT_FILE

    llm: LLM

    def __init__(self, world: World, llm: LLM, seed: int = SEED, prompt: Prompt | None = None):
        super().__init__(world, seed)
        self.llm = llm
        self.prompt = prompt or load_prompt(PROMPTS_DIR / self.prompt_file)


def _phrase(kind: str, what: str) -> str:
    """A preference as the object of "you want ...": adjectives (quiet, romantic) become "somewhere quiet"."""
    return f"somewhere {what}" if kind in ("noise", "ambience") else what


def wishes(t: Traveler) -> list[str]:
    return [_phrase(c.kind, t.language.what(c)) for c in t.goal.constraints]


def _inline(items: Sequence[str]) -> str:
    items = list(items)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


class LLMSimulator(LLMWording, Simulator):
    """Words each decision with an LLM (see the module docstring)."""

    def messages(self, t: Traveler, d: Decision) -> list[dict[str, str]]:
        g = t.goal
        s = g.scenario
        lang = t.language
        type_noun = P.bank().type_nouns[g.poi_type][1] if g.poi_type in P.bank().type_nouns else g.poi_type
        fill = {
            "type_noun": type_noun,
            "city": g.city,
            "persona": s["persona"],
            "travel_context": s["travel_context"],
        }
        whats = [_phrase(c.kind, lang.what(c)) for c in d.constraints]
        name = self.world.kb.pois[d.poi_id].name if d.poi_id in self.world.kb.pois else ""
        clause = (
            self.prompt.render(f"{d.form}_wish", wishes_inline=_inline(whats))
            if whats and d.form in ("greet", "nudge")
            else ""
        )
        instruction = self.prompt.render(
            d.form, **fill, what=whats[0] if whats else "", name=name, wish_clause=clause
        )
        system = self.prompt.render("system", **fill, wishes="\n".join(f"- {w}" for w in wishes(t)))
        lines = [
            f"{'Traveler' if role == 'user' else 'Recommender'}: {text}"
            for role, text in t.transcript[-TRANSCRIPT_TURNS:]
        ]
        user = self.prompt.render(
            "user", transcript="\n".join(lines) or "(nothing yet: you speak first)", instruction=instruction
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def words(
        self, travelers: Sequence[Traveler], decisions: Sequence[Decision]
    ) -> list[tuple[str, dict[str, Any]]]:
        replies = generate_or_none(
            self.llm, [self.messages(t, d) for t, d in zip(travelers, decisions, strict=True)]
        )
        out = []
        for t, d, raw in zip(travelers, decisions, replies, strict=True):
            targets = (
                []
                if raw is None
                else [
                    self.world.kb.pois[p].name
                    for p in self.world.targets(t.goal, t.goal.pool("open"))
                    if p != d.poi_id
                ]
            )
            out.append(worded(raw, targets, functools.partial(rules_text, t, d)))
        return out

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "llm": self.llm.describe(),
            "prompt": self.prompt.describe(),
            "name_similarity": NAME_SIMILARITY,
        }
