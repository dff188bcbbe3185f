"""Helpers of the command-line tests: run the CLI in-process or in a child process, list temporaries."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from trace_bench.cli import main

TRACEBACK = "Traceback (most recent call last)"


@dataclass(frozen=True)
class World:
    root: Path
    bundle: Path
    kb: Path
    corpus: Path
    release: Path
    predictions: Path
    runs: Path


def run_cli(capsys, *argv: str) -> tuple[int, str]:
    """`trace-bench ARGV` in this process: (exit code, stdout + stderr). An exception escaping main fails."""
    capsys.readouterr()
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert TRACEBACK not in text, text
    return rc, text


def run_subprocess(*argv: str, code: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """`trace-bench ARGV` in a child process (or `python -c CODE ARGV`), offline."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    cmd = (
        [sys.executable, "-c", code, *map(str, argv)]
        if code
        else [sys.executable, "-m", "trace_bench.cli", *map(str, argv)]
    )
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def temporaries(folder: Path) -> list[str]:
    """Hidden temporaries (`.NAME.*.tmp` / `.old`) anywhere under `folder`."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob(".*") if p.name.endswith((".tmp", ".old")))
