"""SnipRec's prompts (App. C) as versioned prompt files beside this module, rendered into chat messages.

Each `prompts/<name>.txt` is in the package's one prompt-file format (`trace_llm.prompts`): an optional
`system` section and a `user` section. Placeholders are `$item_type` (restaurant, hotel or
attraction: the paper's prompts say "restaurant"; Trace has three POI types) and the prompt's own fields
(`$review`, `$question`, ...); braces in the few-shot JSON are plain text, and values are never read as
templates. `prompts/prompts.json` gives each prompt's paper section and its max_new_tokens; `prompt_hashes()`
is the SHA-256 of every file, recorded in run metadata.
`load_llm_from` loads the LLM a spec names with App. F's decoding, as the LLM baselines do.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baselines.llm import app_f_decoding
from trace_dataset.io import TraceDataError
from trace_llm.base import DEFAULT_MAX_REPAIRS  # the LLM layer's default for generate_json_batch
from trace_llm.prompts import Prompt, load_prompt

if TYPE_CHECKING:
    from trace_llm import LLM, DecodingSettings

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
SETTINGS_FILE = "prompts.json"
PROMPT_NAMES: tuple[str, ...] = (
    "item_snippets",
    "name_check",
    "query_snippets",
    "expand_paraphrase",
    "expand_support",
    "expand_opposite",
    "clarify",
)
# The fields each prompt's template fills in (besides item_type).
PROMPT_FIELDS: dict[str, tuple[str, ...]] = {
    "item_snippets": ("review",),
    "name_check": ("item_snippet", "item_name"),
    "query_snippets": ("question", "response", "intents"),
    "expand_paraphrase": ("sentence",),
    "expand_support": ("sentence",),
    "expand_opposite": ("sentence",),
    "clarify": ("context",),
}


@cache
def load(name: str) -> Prompt:
    """The prompt file of `name` (one of PROMPT_NAMES), checked to use only its declared placeholders."""
    if name not in PROMPT_FIELDS:
        raise KeyError(f"unknown SnipRec prompt {name!r}; expected one of {PROMPT_NAMES}")
    path = PROMPT_DIR / f"{name}.txt"
    prompt = load_prompt(path)
    if "user" not in prompt.sections or set(prompt.sections) - {"system", "user"}:
        raise TraceDataError(
            f"expected a 'user' section and optionally a 'system' one, got {sorted(prompt.sections)}",
            path=path,
        )
    declared = {"item_type", *PROMPT_FIELDS[name]}
    for section in prompt.sections:
        unknown = sorted(set(prompt.placeholders(section)) - declared)
        if unknown:
            raise TraceDataError(
                f"section {section!r} has placeholders {unknown}; expected some of {sorted(declared)}",
                path=path,
            )
    return prompt


@lru_cache(maxsize=1)
def prompt_settings() -> dict[str, dict[str, Any]]:
    """name -> {"section", "max_new_tokens", "json"} from prompts.json."""
    path = PROMPT_DIR / SETTINGS_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    missing = [n for n in PROMPT_NAMES if n not in data.get("prompts", {})]
    if missing:
        raise TraceDataError(f"no settings for prompt(s) {missing}", path=path)
    return data["prompts"]


def prompt_hashes() -> dict[str, str]:
    """SHA-256 of every prompt file and of prompts.json (what run metadata records)."""
    return {
        **{f"{n}.txt": load(n).sha256 for n in PROMPT_NAMES},
        SETTINGS_FILE: hashlib.sha256((PROMPT_DIR / SETTINGS_FILE).read_bytes()).hexdigest(),
    }


def render(name: str, item_type: str, **fields: str) -> list[dict[str, str]]:
    """Chat messages of prompt `name` with its placeholders filled in (all of them must be given)."""
    prompt = load(name)
    expected = PROMPT_FIELDS[name]
    if sorted(fields) != sorted(expected):
        raise TypeError(f"prompt {name!r} takes fields {list(expected)}, got {sorted(fields)}")
    values = {"item_type": item_type, **{k: str(v) for k, v in fields.items()}}
    system = prompt.render("system", **values) if "system" in prompt.sections else ""
    messages = [{"role": "system", "content": system}] if system else []
    return [*messages, {"role": "user", "content": prompt.render("user", **values)}]


def max_new_tokens(name: str) -> int:
    return int(prompt_settings()[name]["max_new_tokens"])


_LABEL_RE = re.compile(
    r"^\s*(?:recommender|assistant|answer|output|paraphrase|sentence|opposite|evidence)\s*:\s*", re.IGNORECASE
)
_WRAP = " \t`\"'\u201c\u201d*"


def first_line(reply: str) -> str:
    """The usable line of a plain-text reply: its first non-empty line without a leading role label
    ("Recommender:") and without wrapping quotes, backticks or asterisks; "" when there is none."""
    for line in reply.splitlines():
        line = _LABEL_RE.sub("", line.strip()).strip(_WRAP).strip()
        if line:
            return line
    return ""


@dataclass(frozen=True)
class PromptRunner:
    """One LLM with SnipRec's per-prompt settings: max_new_tokens = the prompt's own (prompts.json) capped by
    the LLM's setting (`--max-new-tokens`), and the JSON repair budget. Every call is batched; the LLM layer
    caches, retries and counts."""

    llm: LLM
    json_repairs: int = DEFAULT_MAX_REPAIRS

    def settings(self, name: str) -> DecodingSettings:
        return self.llm.settings.replace(
            max_new_tokens=min(max_new_tokens(name), self.llm.settings.max_new_tokens)
        )

    def json(
        self, name: str, items: Sequence[tuple[str, dict[str, str]]], schema: dict[str, Any]
    ) -> list[Any]:
        """One JSON value (or an LLMOutputError) per (item_type, fields) of prompt `name`."""
        if not items:
            return []
        convs = [render(name, item_type, **fields) for item_type, fields in items]
        return self.llm.generate_json_batch(convs, schema, self.settings(name), max_repairs=self.json_repairs)

    def text(self, name: str, items: Sequence[tuple[str, dict[str, str]]]) -> list[str]:
        """The first usable line (`first_line`) of the reply to each (item_type, fields) of prompt `name`."""
        if not items:
            return []
        convs = [render(name, item_type, **fields) for item_type, fields in items]
        return [first_line(r) for r in self.llm.generate_batch(convs, self.settings(name))]


def load_llm_from(
    llm: str | LLM | None,
    temperature: float | None,
    top_p: float,
    max_new_tokens: int | None,
    seed: int,
    llm_cache: str | bool | None,
    llm_options: Mapping[str, Any] | None,
) -> LLM | None:
    """The LLM a spec names, with these decoding settings (as the LLM baselines load theirs: a None temperature
    or max_new_tokens is App. F's for that model, `baselines.llm.app_f_decoding`); None for none."""
    if llm is None or llm == "":
        return None
    if not isinstance(llm, str):
        return llm
    from trace_llm import DecodingSettings, load_llm

    temperature, max_new_tokens = app_f_decoding(llm, temperature, max_new_tokens)
    settings = DecodingSettings(
        temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens, seed=seed
    )
    return load_llm(llm, settings, cache_path=llm_cache, **dict(llm_options or {}))
