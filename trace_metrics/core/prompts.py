"""CoRE's prompts as versioned data files (`prompts/`), loaded into typed records and hashed for run metadata.

`prompts/manifest.json` names the files: the evaluator template (paper Table 2), the retry message, the debate
template (Table 4) and task (Table 33), one guideline file per factor (Tables 3, 9-19) and one role file per
debater (Tables 34-37), with each role's three factors. Every file is in the package's one prompt-file format
(`trace_llm.prompts`: `=== section ===` lines, `#` comments, `$PLACEHOLDERS`): the evaluator, retry, debate
and task files have one section named after them, a factor file the three sections `definition`,
`evaluation_standard` and `evaluation_steps`, a role file one `description`. Another folder with the same
layout can replace the packaged one (`--prompts DIR`); its SHA-256 then differs, and so does every output's
`prompts.sha256`.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from trace_dataset.io import TraceDataError, read_json
from trace_llm.prompts import Prompt, PromptFileError, parse_prompt

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
MANIFEST = "manifest.json"

# The canonical factor ids (data keys in every output), in the paper's Table 1 order.
FACTOR_IDS: tuple[str, ...] = (
    "coherence",
    "recoverability",
    "proactiveness",
    "grammatical_correctness",
    "naturalness",
    "appropriateness",
    "effectiveness",
    "novelty",
    "diversity",
    "semantic_relevance",
    "explainability",
    "groundness",
)
ROLE_IDS: tuple[str, ...] = ("common_user", "domain_expert", "linguist", "hci_expert")
SECTIONS: tuple[str, ...] = ("definition", "evaluation_standard", "evaluation_steps")
# The placeholders each template file may use (the values its caller fills in).
TEMPLATE_FIELDS: dict[str, tuple[str, ...]] = {
    "evaluator": (
        "FACTOR",
        "FACTOR_DEFINITION",
        "EVALUATION_STANDARD",
        "EVALUATION_STEP",
        "CONVERSATION_LOG",
    ),
    "retry": ("FACTOR", "PROBLEM"),
    "debate": ("ROLE_DESC", "TASK_DESC", "CONVERSATION_LOG", "FACTOR_RESULT", "CHAT_BUFFER"),
    "task": (),
}


@dataclass(frozen=True)
class Factor:
    """One of the twelve factors: its guideline text and whether its log shows the cited reviews."""

    id: str
    name: str
    short: str
    dimension: str
    definition: str
    standard: str
    steps: str
    evidence: bool


@dataclass(frozen=True)
class Role:
    """A debater: its role description and the three factors it is responsible for."""

    id: str
    name: str
    description: str
    factors: tuple[str, ...]


@dataclass(frozen=True)
class PromptSet:
    version: str
    evaluator: Prompt  # render("evaluator", FACTOR=..., ...)
    retry: Prompt  # render("retry", FACTOR=..., PROBLEM=...)
    debate: Prompt  # render("debate", ROLE_DESC=..., ...)
    task: str
    factors: tuple[Factor, ...]
    roles: tuple[Role, ...]
    sha256: str  # over the manifest and every file it names
    folder: str

    def factor(self, factor_id: str) -> Factor:
        for f in self.factors:
            if f.id == factor_id:
                return f
        raise KeyError(f"unknown factor {factor_id!r}; expected one of {FACTOR_IDS}")

    def describe(self) -> dict[str, Any]:
        """What outputs record about the prompts."""
        return {"version": self.version, "sha256": self.sha256, "packaged": self.folder == str(PROMPTS_DIR)}


def parse_factor_file(text: str, path: str | os.PathLike) -> dict[str, str]:
    """The three sections of a factor guideline file; TraceDataError naming the file when one is missing."""
    try:
        prompt = parse_prompt(text, name=str(path))
    except PromptFileError as e:
        raise TraceDataError(str(e), path=path) from None
    unknown = [s for s in prompt.sections if s not in SECTIONS]
    if unknown:
        raise TraceDataError(f"unknown section {unknown[0]!r}; expected {list(SECTIONS)}", path=path)
    found = {s: prompt.render(s) for s in prompt.sections}
    missing = [s for s in SECTIONS if not found.get(s)]
    if missing:
        raise TraceDataError(f"missing or empty section(s) {missing}; expected {list(SECTIONS)}", path=path)
    return found


def _template(text: str, key: str, path: Path) -> Prompt:
    """A template file: one section named `key`, using only the placeholders its caller fills in."""
    try:
        prompt = parse_prompt(text, name=str(path))
    except PromptFileError as e:
        raise TraceDataError(str(e), path=path) from None
    if list(prompt.sections) != [key]:
        raise TraceDataError(f"expected one section {key!r}, got {list(prompt.sections)}", path=path)
    unknown = sorted(set(prompt.placeholders(key)) - set(TEMPLATE_FIELDS[key]))
    if unknown:
        raise TraceDataError(
            f"placeholders {unknown}; expected some of {list(TEMPLATE_FIELDS[key])}", path=path
        )
    return prompt


def _template_free(text: str, key: str, path: Path) -> str:
    """The text of a file with one section `key` and no placeholders (a role's description)."""
    try:
        prompt = parse_prompt(text, name=str(path))
    except PromptFileError as e:
        raise TraceDataError(str(e), path=path) from None
    if list(prompt.sections) != [key] or prompt.placeholders(key):
        raise TraceDataError(f"expected one section {key!r} without placeholders", path=path)
    return prompt.render(key)


def _read(folder: Path, name: Any, files: dict[str, bytes]) -> str:
    if not isinstance(name, str) or not name:
        raise TraceDataError(f"a file name in {MANIFEST} is {name!r}; expected a relative path", path=folder)
    path = (folder / name).resolve()
    if folder.resolve() not in path.parents:
        raise TraceDataError(f"{name!r} is outside the prompts folder", path=folder / MANIFEST)
    if not path.is_file():
        raise TraceDataError(f"file {name!r} named in {MANIFEST} not found", path=folder)
    data = path.read_bytes()
    files[name] = data
    return data.decode("utf-8")


@lru_cache(maxsize=8)
def _load(folder: str) -> PromptSet:
    root = Path(folder)
    manifest = read_json(root / MANIFEST)
    files: dict[str, bytes] = {MANIFEST: (root / MANIFEST).read_bytes()}
    try:
        factor_entries, role_entries = manifest["factors"], manifest["roles"]
        texts = {
            k: _template(_read(root, manifest[k], files), k, root / manifest[k]) for k in TEMPLATE_FIELDS
        }
    except KeyError as e:
        raise TraceDataError(f"missing key {e}", path=root / MANIFEST) from None
    ids = tuple(f.get("id") for f in factor_entries)
    if ids != FACTOR_IDS:
        raise TraceDataError(
            f"factors {list(ids)}; expected exactly {list(FACTOR_IDS)} in that order", path=root / MANIFEST
        )
    factors = []
    for entry in factor_entries:
        sections = parse_factor_file(_read(root, entry.get("file"), files), root / entry["file"])
        factors.append(
            Factor(
                id=entry["id"],
                name=entry["name"],
                short=entry["short"],
                dimension=entry["dimension"],
                definition=sections["definition"],
                standard=sections["evaluation_standard"],
                steps=sections["evaluation_steps"],
                evidence=bool(entry.get("evidence", False)),
            )
        )
    if tuple(r.get("id") for r in role_entries) != ROLE_IDS:
        raise TraceDataError(f"roles must be exactly {list(ROLE_IDS)} in that order", path=root / MANIFEST)
    roles = []
    for entry in role_entries:
        owned = tuple(entry.get("factors") or ())
        unknown = [f for f in owned if f not in FACTOR_IDS]
        if unknown or len(owned) != 3:
            raise TraceDataError(
                f"role {entry['id']!r} factors {list(owned)}; expected three of {FACTOR_IDS}",
                path=root / MANIFEST,
            )
        text = _read(root, entry.get("file"), files)
        description = _template_free(text, "description", root / str(entry.get("file")))
        roles.append(Role(entry["id"], entry["name"], description, owned))
    covered = sorted(f for r in roles for f in r.factors)
    if covered != sorted(FACTOR_IDS):
        raise TraceDataError(
            "the four roles must share the twelve factors, each factor once", path=root / MANIFEST
        )
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode("utf-8") + b"\0" + hashlib.sha256(files[name]).digest())
    return PromptSet(
        version=str(manifest.get("version", "")),
        factors=tuple(factors),
        roles=tuple(roles),
        sha256=digest.hexdigest(),
        folder=str(root),
        evaluator=texts["evaluator"],
        retry=texts["retry"],
        debate=texts["debate"],
        task=texts["task"].render("task"),
    )


def load_prompts(folder: str | os.PathLike | None = None) -> PromptSet:
    """The prompt set in `folder` (default: the packaged `prompts/`), checked and hashed."""
    root = Path(folder).resolve() if folder is not None else PROMPTS_DIR
    if not (root / MANIFEST).is_file():
        raise TraceDataError(f"no {MANIFEST}: not a CoRE prompts folder", path=root)
    return _load(str(root))
