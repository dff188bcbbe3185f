"""Commands the product prints for a user to run, spelled so that they work as printed in the user's shell.

`trace-bench` is on PATH only where the virtual environment it lives in is activated (or installed
system-wide). In a plain shell after `bash scripts/demo.sh`, a bare `trace-bench serve ...` is "command not
found", so every printed command names the executable the way the user's shell can find it: `trace-bench`
when PATH already leads to this very installation, else the path of the script (`.venv/bin/trace-bench`).
Paths in a printed command are relative to the directory the user called from when they lie inside it (the
scripts/*.sh wrappers `cd` to the repository and pass the caller's directory in TRACE_CALLER_DIR), else
absolute. Install hints name this interpreter's pip and, for an editable checkout, the checkout itself
(trace-bench is not on a package index).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

CALLER_DIR_ENV = "TRACE_CALLER_DIR"
EXECUTABLE = "trace-bench"
_ROOT = Path(__file__).resolve().parents[1]  # the checkout, for an editable install


def caller_dir() -> Path:
    """The directory the user typed the command in (TRACE_CALLER_DIR, else the current directory)."""
    given = os.environ.get(CALLER_DIR_ENV)
    return Path(os.path.abspath(given)) if given else Path.cwd()


def display_path(path: str | os.PathLike) -> str:
    """`path` (relative to this process's working directory) as the user's shell reaches it."""
    absolute = os.path.abspath(path)  # no symlink resolution: a venv's bin/python is a link
    base = str(caller_dir())
    rel = os.path.relpath(absolute, base)
    return absolute if rel == ".." or rel.startswith(".." + os.sep) else rel


def _same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _runnable(path: str) -> str:
    """A path the shell runs as a file, never looks up on PATH (`trace-bench` -> `./trace-bench`)."""
    return path if os.sep in path or path in (".", "..") else f".{os.sep}{path}"


def script_executable(name: str) -> str | None:
    """A console script of this environment (`trace-bench`, `hf`, `mkdocs`) as the user's shell reaches it:
    its bare name where PATH finds this very script, else its path; None where this environment has none."""
    candidates = [Path(sys.executable).parent / name]  # the script installed beside this interpreter
    if Path(sys.argv[0]).name == name:  # how this process was started (may be a link to the above)
        candidates.insert(0, Path(sys.argv[0]))
    scripts = [c for c in candidates if c.is_file() and os.access(c, os.X_OK)]
    on_path = shutil.which(name)
    if on_path and any(_same_file(on_path, s) for s in scripts):
        return name
    return shlex.quote(_runnable(display_path(scripts[0]))) if scripts else None


def trace_bench_executable() -> str:
    """`trace-bench` where the user's PATH finds this installation's script, else that script's path, else
    this interpreter with `-m trace_bench.cli`."""
    python = shlex.quote(_runnable(display_path(sys.executable)))
    return script_executable(EXECUTABLE) or f"{python} -m trace_bench.cli"


def _arg(part: str | os.PathLike) -> str:
    return shlex.quote(display_path(part) if isinstance(part, os.PathLike) else str(part))


def trace_bench_command(*args: str | os.PathLike) -> str:
    """A `trace-bench ...` command line to print; Path arguments are shown as the user's shell reaches them."""
    return " ".join([trace_bench_executable(), *(_arg(a) for a in args)])


def pip_install_command(*requirements: str) -> str:
    """How to install `requirements` into this environment; `trace-bench[EXTRA]` becomes the editable
    checkout (`-e '.[EXTRA]'`) when this package runs from one."""
    python = shlex.quote(_runnable(display_path(sys.executable)))
    editable = (_ROOT / "pyproject.toml").is_file()
    parts = []
    for req in requirements:
        if editable and req.startswith("trace-bench["):
            parts += ["-e", shlex.quote(_runnable(display_path(_ROOT)) + req[len("trace-bench") :])]
        else:
            parts.append(shlex.quote(req))
    return " ".join([python, "-m", "pip", "install", *parts])
