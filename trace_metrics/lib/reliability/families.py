"""The model family of a model id (`families.json`, a data file), for the self-preference check: judges prefer
their own family's text (Panickssery et al. 2024, "LLM evaluators recognize and favor their own generations")."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

FAMILIES_FILE = Path(__file__).with_name("families.json")


@cache
def _families() -> tuple[tuple[str, tuple[str, ...]], ...]:
    data = json.loads(FAMILIES_FILE.read_text(encoding="utf-8"))
    return tuple((f["family"], tuple(p.lower() for p in f["patterns"])) for f in data["families"])


def family_of(model: str | None) -> str | None:
    """The family of `model` (its id, a path or a spec: the file name part is read too); None when unknown."""
    if not model:
        return None
    text = str(model).lower()
    for family, patterns in _families():
        if any(p in text for p in patterns):
            return family
    return None
