"""Versioned prompt files of the simulators (`prompts/*.txt`): `[section]` headers, `#` comment lines at the
top, `{placeholders}` filled with str.format. The file's SHA-256 goes into every run's metadata."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from trace_dataset.io import sha256_text

_SECTION_RE = re.compile(r"^\[(\w+)\]\s*$")


@dataclass(frozen=True)
class Prompt:
    name: str
    sections: dict[str, str]
    sha256: str

    def format(self, section: str, **values: Any) -> str:
        try:
            template = self.sections[section]
        except KeyError:
            raise KeyError(f"prompt {self.name}: no section [{section}]; it has {sorted(self.sections)}") from None
        try:
            return template.format(**values)
        except KeyError as e:
            raise KeyError(f"prompt {self.name} [{section}]: no value for placeholder {e}") from None

    def describe(self) -> dict[str, str]:
        return {"file": self.name, "sha256": self.sha256}


def parse_prompt(name: str, text: str) -> Prompt:
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        m = _SECTION_RE.match(line)
        if m:
            current = sections.setdefault(m.group(1), [])
            continue
        if current is None:
            if line.strip() and not line.startswith("#"):
                raise ValueError(f"prompt {name}: text before the first [section]: {line!r}")
            continue
        current.append(line)
    if not sections:
        raise ValueError(f"prompt {name}: no [section] found")
    return Prompt(name, {k: "\n".join(v).strip("\n") for k, v in sections.items()}, sha256_text(text))


def load_prompt(file: str) -> Prompt:
    """A prompt shipped in trace_harness/interactive/simulator/prompts/."""
    text = resources.files("trace_harness.interactive.simulator").joinpath("prompts", file).read_text(encoding="utf-8")
    return parse_prompt(f"trace_harness/interactive/simulator/prompts/{file}", text)
