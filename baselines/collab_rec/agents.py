"""Collab-REC's LLM agents (Personalization, Popularity, Sustainability; the single SASI agent) through the
project's LLM layer: any `--llm` spec, the response cache, bounded retries, JSON validation and repair.

Prompts are App. D's, in `prompts/collab_rec.txt` (the one prompt-file format, `trace_llm.prompts`); roles,
their filters, decoding (temperature 0.5, top-p 0.95) and repair retries are in `prompts/collab_rec.json`;
both files' SHA-256 go into the run metadata (`prompt_files`). One round of every active query is one batched
`generate_json_batch` call. A reply must be a JSON object with a non-empty string list `candidates` (other
fields are optional); a reply that stays invalid after the repairs is a failed agent call: the agent abstains
that round (counted, never filled in). Names outside the catalogue are passed on as they came: the moderator
counts them as hallucinations (Eq. 11) and lists them in the round's output.

Under the LLM layer's constrained decoding (`--structured auto`, the default) the schema is the grammar:
with `catalogue_enum=True` (default) `candidates` is an `enum` of the task's catalogue, so a constrained model
can name only catalogue items and Eq. 11's hallucination rate is 0 by construction; `catalogue_enum=False`
(`--param catalogue_enum=false`) keeps the paper's open list of strings, whose out-of-catalogue names the
moderator counts. Either way the schema requires `candidates`; the grammar allows no other key (App. D's optional fields pass the validator in prompt mode and are recorded).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from baselines.collab_rec.moderator import Moderator, ModeratorConfig
from trace_llm import LLM, DecodingSettings, LLMOutputError, prefix_reuse
from trace_llm.prompts import Prompt, load_prompt

PROMPTS_DIR = Path(__file__).with_name("prompts")
PROMPT_FILE = PROMPTS_DIR / "collab_rec.txt"
SETTINGS_FILE = PROMPTS_DIR / "collab_rec.json"
SASI_AGENT = "sasi"
# The answer's JSON Schema: the ranked names are required; App. D's other fields (agent_role, explanation,
# feedback_acknowledged, round_number) may be present and are recorded when they are, but a small model copies
# every property of the schema it is shown, so only `candidates` and `explanation` are spelled out.
AGENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["candidates"],
    "properties": {
        "candidates": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        # bounded (closes before max_new_tokens); anyOf, as a type list loses its bounds in llama.cpp's converter
        "explanation": {"anyOf": [{"type": "string", "maxLength": 500}, {"type": "null"}]},
    },
}  # other keys pass the validator (App. D's optional fields are recorded); the grammars allow none (strict)


def agent_schema(catalogue: Sequence[str] | None = None) -> dict[str, Any]:
    """AGENT_SCHEMA, with `candidates` an enum of `catalogue` (at most one entry per item) when one is given."""
    if not catalogue:
        return AGENT_SCHEMA
    names = list(dict.fromkeys(catalogue))
    items = {"type": "string", "enum": names}
    props = {
        **AGENT_SCHEMA["properties"],
        "candidates": {"type": "array", "items": items, "minItems": 1, "maxItems": len(names)},
    }
    return {**AGENT_SCHEMA, "properties": props}


# App. D.3 writes the counts in words ("Keep at least seven (>= 7)", "Pick the ten highest-scoring cities").
NUMBER_WORDS: tuple[str, ...] = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
)


def number_word(n: int) -> str:
    """n in words up to twenty (App. D.3's "seven", "ten"), digits beyond."""
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


@dataclass(frozen=True)
class AgentSettings:
    agents: tuple[tuple[str, tuple[str, ...]], ...]  # (name, filter names of its role), in the paper's order
    decoding: dict[str, Any]
    max_repairs: int
    default_role_filters: dict[str, dict[str, str]]
    vocabulary: dict[str, dict[str, str]]
    sha256: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.agents)

    def settings(self, **overrides: Any) -> DecodingSettings:
        return DecodingSettings(**{**self.decoding, **{k: v for k, v in overrides.items() if v is not None}})


@cache
def load_settings() -> AgentSettings:
    raw = SETTINGS_FILE.read_bytes()
    data = json.loads(raw)
    return AgentSettings(
        agents=tuple((a["name"], tuple(a["filters"])) for a in data["agents"]),
        decoding=dict(data["decoding"]),
        max_repairs=int(data["max_repairs"]),
        default_role_filters={k: dict(v) for k, v in data["default_role_filters"].items()},
        vocabulary={k: dict(v) for k, v in data["vocabulary"].items()},
        sha256=hashlib.sha256(raw).hexdigest(),
    )


@cache
def load_prompts() -> Prompt:
    return load_prompt(PROMPT_FILE)


def prompt_files() -> dict[str, str]:
    """file name -> SHA-256 of the versioned prompt and settings files (run metadata)."""
    from baselines.collab_rec.catalogue import interests_lexicon

    return {
        PROMPT_FILE.name: load_prompts().sha256,
        SETTINGS_FILE.name: load_settings().sha256,
        "interests.json": interests_lexicon()[2],
    }


def role_filters(
    filters: Mapping[str, Any],
    defaults: Mapping[str, Mapping[str, Any]],
    settings: AgentSettings | None = None,
) -> dict[str, dict[str, Any]]:
    """f_{a_i}: the query's filters of each role; a role with none uses its defaults, else all filters."""
    settings = settings or load_settings()
    out = {}
    for name, keys in settings.agents:
        own = {k: v for k, v in filters.items() if k in keys}
        out[name] = own or dict(defaults.get(name) or {}) or dict(filters)
    return out


@dataclass(frozen=True)
class Task:
    """One query as the agents and the moderator see it."""

    id: str
    text: str
    filters: dict[str, str]  # F: name -> value (strings, shown to the agents as JSON)
    catalogue: tuple[str, ...]  # C: the exact names agents must return
    satisfies: Callable[[str, str, Any], bool]  # M(c)
    domain: str = "cities"  # "cities" | "trace": picks role:<agent>:<domain> and catalogue_note:<domain>
    vocabulary: dict[str, str] = field(
        default_factory=dict
    )  # items, items_short, item, items_title, item_title
    catalogue_text: str = ""  # how the catalogue is shown (default: a JSON list of the names)
    default_role_filters: dict[str, dict[str, str]] = field(default_factory=dict)

    def shown_catalogue(self) -> str:
        return self.catalogue_text or json.dumps(list(self.catalogue), ensure_ascii=False)

    def role_filters(self) -> dict[str, dict[str, Any]]:
        return role_filters(self.filters, self.default_role_filters)


@dataclass
class Reply:
    items: list[str] | None  # None: no valid reply
    error: str = ""
    agent_role: str | None = None
    feedback_acknowledged: bool | None = None


def _json(values: Sequence[str]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


class AgentCaller:
    """Builds App. D's prompts for (task, agent, moderator state) and asks the LLM, one batch per round."""

    def __init__(
        self,
        llm: LLM,
        config: ModeratorConfig | None = None,
        max_repairs: int | None = None,
        catalogue_enum: bool = True,
    ):
        self.llm = llm
        self.catalogue_enum = catalogue_enum
        self.config = config or ModeratorConfig()
        self.settings = load_settings()
        self.prompts = load_prompts()
        self.max_repairs = self.settings.max_repairs if max_repairs is None else max_repairs
        self.calls = 0  # conversations asked (agent invocations, before repairs)
        self.failures = 0  # conversations without a valid reply after the repairs

    # -- prompt pieces ---------------------------------------------------------------------------
    def _vocab(self, task: Task) -> dict[str, str]:
        return {**self.settings.vocabulary.get(task.domain, {}), **task.vocabulary}

    def _section(self, name: str, domain: str, **fields: Any) -> str:
        specific = f"{name}:{domain}"
        return self.prompts.render(specific if specific in self.prompts.sections else name, **fields)

    def _common(self, task: Task) -> dict[str, Any]:
        k, k_reject = self.config.k, self.config.k_reject
        assert k_reject is not None  # ModeratorConfig resolves None to its default
        return {
            **self._vocab(task),
            "k": k,
            "k_word": number_word(k),
            "k_keep": k - k_reject,
            "k_keep_word": number_word(k - k_reject),
            "k_reject": self.config.k_reject,
            "query": task.text,
        }

    def feedback_text(self, task: Task, facts: Mapping[str, Any], role: Mapping[str, Any]) -> str:
        common = self._common(task)
        if not facts.get("answered"):
            return self._section("feedback:failed", task.domain, **common)
        parts = []
        if facts["had_offer"]:
            enough = facts["kept"] >= common["k_keep"]
            parts.append(
                self._section(
                    "feedback:kept_ok" if enough else "feedback:kept_low",
                    task.domain,
                    **common,
                    kept=facts["kept"],
                )
            )
        else:
            parts.append(self._section("feedback:first", task.domain, **common))
        bad = [*facts["out_of_catalogue"], *facts["rejected"]]
        if bad:
            parts.append(
                self._section("feedback:invalid", task.domain, **common, n=len(bad), names=_json(bad))
            )
        if facts.get("success") is not None:
            parts.append(
                self._section(
                    "feedback:success",
                    task.domain,
                    **common,
                    percent=round(100 * facts["success"]),
                    filters=json.dumps(dict(role)),
                )
            )
        return " ".join(parts)

    def agent_prompt(self, task: Task, agent: str, moderator: Moderator | None) -> str:
        common = self._common(task)
        names = dict(self.settings.agents)
        shown = {k: v for k, v in task.filters.items() if k in names[agent]}
        role = task.role_filters()[agent]
        if moderator is None or moderator.round == 0:
            negotiation, ack = "", self._section("ack:first", task.domain, **common)
        else:
            t = moderator.round + 1
            previous = moderator.previous.get(agent) or []
            negotiation = self._section(
                "negotiation",
                task.domain,
                **common,
                round=t,
                feedback=self.feedback_text(task, moderator.feedback_facts(agent), role),
                previous=_json(previous),
                offer=_json(moderator.offer),
                additional=_json(moderator.additional_candidates()),
                rejected=_json(sorted(moderator.rejected)),
                filter_type="preferences for " + (", ".join(role) or "the query"),
                filter_context=json.dumps(role, ensure_ascii=False),
            )
            ack = self._section("ack:later", task.domain, **common, round=t)
        return self._section(
            "base",
            task.domain,
            **common,
            agent=agent,
            filters=json.dumps(shown, ensure_ascii=False),
            catalogue=task.shown_catalogue(),
            catalogue_note=self._section(f"catalogue_note:{task.domain}", task.domain),
            role=self._section(f"role:{agent}", task.domain, **common),
            negotiation=negotiation,
            acknowledge=ack,
        )

    def sasi_prompt(self, task: Task) -> str:
        filters = task.filters
        if self.config.code("sasi_role_filters"):
            keys = dict(self.settings.agents)["sustainability"]
            filters = {k: v for k, v in filters.items() if k in keys}
        return self._section(
            "sasi",
            task.domain,
            **self._common(task),
            filters=json.dumps(filters, ensure_ascii=False),
            catalogue=task.shown_catalogue(),
            catalogue_note=self._section(f"catalogue_note:{task.domain}", task.domain),
        )

    # -- asking ------------------------------------------------------------------------------------
    def ask(self, prompts: Sequence[str], catalogues: Sequence[Sequence[str]] | None = None) -> list[Reply]:
        """One reply per prompt (a user message each); failures are counted and come back with items None.

        catalogues: each prompt's catalogue (the enum of its schema with catalogue_enum); one batch per catalogue.
        """
        if not prompts:
            return []
        convs = [[{"role": "user", "content": p}] for p in prompts]
        groups: dict[tuple[str, ...], list[int]] = {}
        for i in range(len(convs)):
            key = tuple(catalogues[i]) if catalogues is not None and self.catalogue_enum else ()
            groups.setdefault(key, []).append(i)
        answers: list[Any] = [None] * len(convs)
        for catalogue, idx in groups.items():
            got = self.llm.generate_json_batch(
                [convs[i] for i in idx], agent_schema(catalogue), max_repairs=self.max_repairs
            )
            for i, answer in zip(idx, got, strict=True):
                answers[i] = answer
        self.calls += len(convs)
        out = []
        for answer in answers:
            if isinstance(answer, LLMOutputError):
                self.failures += 1
                out.append(Reply(None, error=str(answer)[:300]))
                continue
            role, ack = answer.get("agent_role"), answer.get("feedback_acknowledged")
            out.append(
                Reply(
                    [str(c) for c in answer["candidates"]],
                    agent_role=role if isinstance(role, str) else None,
                    feedback_acknowledged=ack if isinstance(ack, bool) else None,
                )
            )
        return out

    def propose(self, requests: Sequence[tuple[Task, str, Moderator]]) -> list[Reply]:
        """The agents' replies for (task, agent, moderator) requests of one round. An agent's prompt in a later
        round starts like its prompt in the round before: sent inside `prefix_reuse()`, a backend that keeps
        states reads only the rest (speed only: the same replies; trace_llm.prefix_reuse)."""
        with prefix_reuse():
            return self.ask(
                [self.agent_prompt(task, agent, mod) for task, agent, mod in requests],
                [task.catalogue for task, _, _ in requests],
            )
