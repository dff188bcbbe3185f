"""The one prompt-file format and its loader, for every caller of the LLM layer (docs/llm.md, "Prompt files").

A prompt file is UTF-8 text:

    # What the prompt is for, its version and source, its placeholders: comment lines, only before the
    # first section (blank lines may sit between them).
    === system ===
    You are a travel recommender talking with a traveler who is looking for a $poi_type in $city.
    === user ===
    Candidates:
    $cards

- A line `=== name ===` starts the section `name` (letters, digits, `_ : . -`); its text runs to the next
  section line, without the line breaks that open and close it (spaces are kept). A file has at least one
  section, and no name twice.
- Placeholders are `string.Template`'s: `$name` or `${name}`; `$$` is a literal dollar sign. Braces are plain
  text, so JSON in a prompt needs no escaping. Rendering fills every placeholder in one pass (a value is never
  read as a template) and refuses a placeholder without a value: a prompt never sends an empty hole.
- The SHA-256 of the file's bytes (`Prompt.sha256`, `Prompt.describe()`) goes into the run metadata of
  whatever sends it, so a changed prompt makes a different run.
"""

from __future__ import annotations

import hashlib
import os
import re
import string
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_llm.errors import LLMConfigError, LLMError

SECTION_RE = re.compile(r"^=== ([\w:.-]+) ===[ \t]*$", re.MULTILINE)


class PromptFileError(LLMConfigError):
    """A prompt file that is not in the format (module docstring); the message names the file and line."""


class PromptRenderError(LLMError, KeyError):
    """A section the prompt does not have, or a placeholder without a value."""

    def __str__(self) -> str:  # KeyError quotes its message; this one reads as a sentence
        return str(self.args[0])


@dataclass(frozen=True)
class Prompt:
    """The sections of one prompt file; `name` is how messages and run metadata name the file."""

    name: str
    sections: dict[str, str]
    sha256: str

    def render(self, section: str, **fields: Any) -> str:
        """The section with its placeholders filled from `fields` (extra fields are ignored)."""
        if section not in self.sections:
            raise PromptRenderError(
                f"prompt {self.name}: no section {section!r}; it has {sorted(self.sections)}"
            )
        try:
            return string.Template(self.sections[section]).substitute(fields)
        except KeyError as e:
            raise PromptRenderError(
                f"prompt {self.name}, section {section!r}: no value for placeholder {e}"
            ) from None

    def placeholders(self, section: str) -> tuple[str, ...]:
        """The placeholders of a section, in order of first use."""
        return tuple(dict.fromkeys(_identifiers(self.sections[section])))

    def describe(self) -> dict[str, str]:
        """What run metadata records: the file and its SHA-256."""
        return {"file": self.name, "sha256": self.sha256}


def _identifiers(body: str) -> list[str]:
    """The placeholders of a section's text, in order; ValueError at a "$" that starts none."""
    out = []
    for m in string.Template.pattern.finditer(body):
        if m.group("invalid") is not None:
            line = body.count("\n", 0, m.start()) + 1
            raise ValueError(
                f"a '$' that starts no placeholder on its line {line} (write '$$' for a dollar sign)"
            )
        if m.group("named") or m.group("braced"):
            out.append(m.group("named") or m.group("braced"))
    return out


def parse_prompt(text: str, *, name: str) -> Prompt:
    """The sections of a prompt file's text (module docstring); `name` names it in errors and metadata."""
    matches = list(SECTION_RE.finditer(text))
    if not matches:
        raise PromptFileError(f"prompt {name}: no '=== section ===' line")
    head = text[: matches[0].start()]
    for number, line in enumerate(head.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            raise PromptFileError(
                f"prompt {name}, line {number}: text before the first section must be '#' "
                f"comments, got {line!r}"
            )
    sections: dict[str, str] = {}
    for i, m in enumerate(matches):
        if m.group(1) in sections:
            line_no = text.count("\n", 0, m.start()) + 1
            raise PromptFileError(f"prompt {name}, line {line_no}: section {m.group(1)!r} defined twice")
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        sections[m.group(1)] = text[m.end() : end].strip("\n")
    for section, body in sections.items():
        try:
            _identifiers(body)
        except ValueError as e:
            raise PromptFileError(f"prompt {name}, section {section!r}: {e}") from None
    return Prompt(name, sections, hashlib.sha256(text.encode("utf-8")).hexdigest())


def load_prompt(path: str | os.PathLike, name: str | None = None) -> Prompt:
    """The prompt file at `path` (named by its file name unless `name` says otherwise)."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise PromptFileError(f"prompt file {path} not found") from None
    except UnicodeDecodeError as e:
        raise PromptFileError(f"prompt file {path} is not UTF-8 text ({e})") from None
    return parse_prompt(text, name=name or path.name)


__all__ = ["SECTION_RE", "Prompt", "PromptFileError", "PromptRenderError", "load_prompt", "parse_prompt"]
