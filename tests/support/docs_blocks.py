"""The tested code blocks of the documentation: a fenced block right after a line `<!-- test -->`.

What runs, and where (docs/development.md, "Tested examples"):
- Every marked block of a page runs, in page order, in one fresh temporary folder (the working directory), so a
  page can build up an example: a later block sees the files an earlier one wrote, and the `python` blocks of a
  page share one namespace.
- `python`: executed; a block holding `>>>` examples runs as a doctest instead (its outputs are checked), through
  the metric cards' own machinery (`trace_metrics._testing.run_examples`).
- `bash` / `sh`: run by `bash -e`; `console`: the `$ ` lines only. The virtual environment's bin folder comes
  first on PATH (as after `source .venv/bin/activate`), offline, and `TRACE_DATA` names a small prepared,
  hydrated Trace data directory for blocks that need one (built once per test session from the synthetic bundle;
  after the main job a user has the same with `export TRACE_DATA=runs/demo/hydrated`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MARKER = "<!-- test -->"
DATA_ENV = "TRACE_DATA"
LANGUAGES = {
    "python": "python",
    "py": "python",
    "bash": "bash",
    "sh": "bash",
    "shell": "bash",
    "console": "console",
}
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "GRADIO_ANALYTICS_ENABLED": "False",
}
_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)")
BLOCK_TIMEOUT_S = 600


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # 1-based line of the block's first code line
    language: str  # python | bash | console
    code: str

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


def marked_blocks(path: str | os.PathLike) -> list[Block]:
    """The marked blocks of one Markdown file, in order; a marker without a fenced block of a known language
    right after it is an error (a test that silently tests nothing is worse than none)."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if line.strip() != MARKER:
            continue
        m = _FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if m is None:
            raise ValueError(f"{path}:{i + 1}: {MARKER} must be followed directly by a fenced code block")
        language = LANGUAGES.get(m["lang"].lower())
        if language is None:
            raise ValueError(
                f"{path}:{i + 2}: cannot run a {m['lang'] or 'plain'!r} block; expected one of "
                f"{sorted(LANGUAGES)}"
            )
        close = re.compile(rf"^ *{re.escape(m['fence'][0])}{{{len(m['fence'])},}}\s*$")
        end = next((j for j in range(i + 2, len(lines)) if close.match(lines[j])), None)
        if end is None:
            raise ValueError(f"{path}:{i + 2}: the code block is never closed")
        indent = len(m["indent"])
        code = "\n".join(x[indent:] if x[:indent].isspace() else x for x in lines[i + 2 : end])
        blocks.append(Block(path, i + 3, language, code + "\n"))
    return blocks


def shell_env(venv_bin: Path, data_dir: Path | None) -> dict[str, str]:
    env = {**os.environ, **OFFLINE, "PATH": f"{venv_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("TRACE_CALLER_DIR", None)
    if data_dir is not None:
        env[DATA_ENV] = str(data_dir)
    return env


def run_shell(block: Block, cwd: Path, env: dict[str, str]) -> None:
    script = block.code
    if block.language == "console":
        script = "\n".join(line[2:] for line in block.code.splitlines() if line.startswith("$ ")) + "\n"
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
    )
    if done.returncode != 0:
        raise AssertionError(
            f"{block.where}: the block failed (exit {done.returncode}):\n{script}\n"
            f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
        )


def run_python(block: Block, namespace: dict) -> None:
    if ">>>" in block.code:
        from trace_metrics._testing import run_examples

        run_examples(block.code, namespace, block.path.stem, str(block.path), block.line - 1)
        return
    padded = "\n" * (block.line - 1) + block.code  # tracebacks name the page's own line numbers
    exec(compile(padded, str(block.path), "exec"), namespace)  # noqa: S102 - the docs' own code


def venv_bin() -> Path:
    return Path(sys.executable).parent
