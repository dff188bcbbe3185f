"""Every command the product prints for a user to run works as printed, in a plain shell: no virtual environment
activated, so `trace-bench` is not on PATH (the way a new user's terminal is right after `bash scripts/demo.sh`).

The end-to-end test runs a small main job, then runs each printed command through `bash -c` exactly as printed
(a server command with `--port` added so that the tests do not collide), and checks that it does its job.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from trace_bench import shell

REPO = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent  # the environment under test (.venv here and in CI)
PLAIN_PATH = "/usr/local/bin:/usr/bin:/bin"  # a fresh terminal: no venv on PATH
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "GRADIO_ANALYTICS_ENABLED": "False",
}


def plain_env(**extra: str) -> dict[str, str]:
    return {"PATH": PLAIN_PATH, "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8", **OFFLINE, **extra}


# ---------------------------------------------------------------------------------------------------
# How the executable and paths are spelled
# ---------------------------------------------------------------------------------------------------
@pytest.fixture
def plain_shell(monkeypatch):
    monkeypatch.setenv("PATH", PLAIN_PATH)
    monkeypatch.delenv(shell.CALLER_DIR_ENV, raising=False)
    monkeypatch.setattr(sys, "argv", ["pytest"])


def test_outside_an_activated_venv_the_script_path_is_printed(plain_shell, monkeypatch, tmp_path):
    script = VENV_BIN / "trace-bench"
    assert script.is_file()
    monkeypatch.chdir(tmp_path)
    assert shell.trace_bench_executable() == str(script)  # outside the checkout: absolute
    monkeypatch.chdir(VENV_BIN.parent.parent)
    assert shell.trace_bench_executable() == os.path.relpath(script)  # `.venv/bin/trace-bench` from the repo
    assert shell.trace_bench_command("serve", "--data", Path("runs/demo/hydrated")).endswith(
        "trace-bench serve --data runs/demo/hydrated"
    )


def test_inside_an_activated_venv_the_bare_name_is_printed(plain_shell, monkeypatch):
    monkeypatch.setenv("PATH", f"{VENV_BIN}:{PLAIN_PATH}")
    assert shell.trace_bench_executable() == "trace-bench"


def test_paths_are_shown_from_the_callers_folder(plain_shell, monkeypatch, tmp_path):
    (tmp_path / "repo" / "runs").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "repo")  # scripts/*.sh cd into the repository ...
    monkeypatch.setenv(shell.CALLER_DIR_ENV, str(tmp_path / "repo"))
    assert shell.display_path(Path("runs")) == "runs"
    monkeypatch.setenv(shell.CALLER_DIR_ENV, str(tmp_path / "elsewhere"))  # ... from wherever the user was
    assert shell.display_path(Path("runs")) == str(tmp_path / "repo" / "runs")
    assert shell.trace_bench_command("x", Path("a b")).endswith(f"x '{tmp_path / 'repo' / 'a b'}'")  # quoted


def test_install_hints_name_this_environments_pip_and_the_checkout(plain_shell, monkeypatch):
    monkeypatch.chdir(REPO)
    hint = shell.pip_install_command("trace-bench[models]")
    python = os.path.relpath(sys.executable) if Path(sys.executable).is_relative_to(REPO) else sys.executable
    assert hint == f"{python} -m pip install -e '.[models]'"
    # run an install hint as printed (already satisfied: no download, nothing changes)
    hint = shell.pip_install_command("--no-deps", "PyYAML")
    done = subprocess.run(["bash", "-c", hint], cwd=REPO, env=plain_env(), capture_output=True, text=True)
    assert done.returncode == 0 and "already satisfied" in done.stdout, done.stdout + done.stderr


def test_a_missing_command_prints_a_working_install_hint(plain_shell, monkeypatch, capsys):
    from trace_bench.cli import _register_unavailable, build_parser

    monkeypatch.chdir(REPO)
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    _register_unavailable(sub, "nowhere", ImportError("No module named 'nowhere'", name="nowhere"))
    args = parser.parse_args(["nowhere"])
    assert args.func(args) == 2
    assert shell.pip_install_command("trace-bench[all]") in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------------
# The printed commands, run as printed
# ---------------------------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _printed(text: str, pattern: str) -> str:
    m = re.search(pattern, text, re.M)
    assert m, f"no line matching {pattern!r} in:\n{text}"
    return m.group(1).strip()


def _serves(command: str, cwd: Path, timeout: float = 180) -> str:
    """Run a printed `serve` command (plus --port) as printed, wait until the app answers, stop it; return
    what it printed."""
    port = _free_port()
    proc = subprocess.Popen(
        ["bash", "-c", f"{command} --port {port}"],
        cwd=cwd,
        env=plain_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as r:
                    assert r.status == 200 and "Trace leaderboard" in r.read().decode("utf-8", "replace")
                    break
            except OSError as e:
                if proc.poll() is not None or time.monotonic() > deadline:
                    out = proc.stdout.read() if proc.poll() is not None else "(still running)"
                    raise AssertionError(f"{command!r} did not serve the app:\n{out}") from e
                time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    out = proc.stdout.read()
    # what the command prints is true: where the app is, and no hint to an option trace-bench does not have
    assert f"http://127.0.0.1:{port}" in out and "share=True" not in out, out
    return out


def _run(args: list[str], cwd: Path) -> str:
    done = subprocess.run(args, cwd=cwd, env=plain_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{shlex.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_printed_commands_work_as_printed_in_a_plain_shell(tmp_path):
    exe = str(VENV_BIN / "trace-bench")
    if shutil.which("trace-bench", path=PLAIN_PATH):
        pytest.skip(
            f"a trace-bench is installed system-wide ({shutil.which('trace-bench', path=PLAIN_PATH)}): "
            "this test needs a shell where it is not on PATH"
        )

    # the main job, small: it ends by printing how to start the app
    out = _run(
        [
            exe,
            "demo",
            "--out",
            "runs/demo",
            "--n",
            "60",
            "--scale",
            "0.1",
            "--per-cell",
            "9",
            "--baselines",
            "popularity",
            "--workers",
            "1",
        ],
        tmp_path,
    )
    full = _printed(out, r"^Leaderboard app: (.+)$")
    simply = _printed(out, r"^\(or simply `(.+)`: it finds runs/demo by itself\)$")
    assert not full.startswith("trace-bench ") and not simply.startswith("trace-bench ")

    # `trace-bench run --subset` prints how to score the subset
    out = _run(
        [
            exe,
            "run",
            "popularity",
            "--data",
            "runs/demo/hydrated",
            "--out",
            "sub/popularity.jsonl",
            "--subset",
            "3",
        ],
        tmp_path,
    )
    evaluate = _printed(out, r"score it with: (.+)$")
    done = subprocess.run(
        ["bash", "-c", evaluate], cwd=tmp_path, env=plain_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "sub" / "popularity.results.json").is_file()  # named after the run, beside it

    # `trace-bench leaderboard` prints how to serve its tables
    out = _run(
        [
            exe,
            "leaderboard",
            "--data",
            "runs/demo/hydrated",
            "--runs",
            "runs/demo/runs",
            "--out",
            "lb",
            "--n-boot",
            "0",
        ],
        tmp_path,
    )
    served = _printed(out, r"\(serve them: (.+)\)$")

    for command in (full, simply, served):
        _serves(command, tmp_path)


@pytest.mark.slow
def test_reproduce_batch_commands_work_as_printed(tmp_path):
    """`trace-bench reproduce --export-batch` prints one engine command per file, the import command, then the
    next export; the last prints how to serve the leaderboard. Each runs as printed, except vLLM's run_batch
    (not installed here), which tests/support/batch_runner.py stands in for with the printed -i, -o and --model."""
    from tests.support.llm_baselines import write_data_dir
    from tests.support.reproduce import dry_run_responder, write_config
    from tests.support.stub_server import StubOpenAI

    exe = str(VENV_BIN / "trace-bench")
    data = write_data_dir(tmp_path / "data")
    write_config(
        tmp_path / "c.yaml",
        data,
        "http://127.0.0.1:9/v1",
        systems=["popularity", "llm_zero_shot"],
        closed={"split": "test"},
    )
    out = _run([exe, "reproduce", "c.yaml", "--export-batch", "--no-progress"], tmp_path)
    engine = re.findall(r"^  (python -m vllm\.entrypoints\.openai\.run_batch .+)$", out, re.M)
    assert len(engine) == 1, out
    stand_in = f"{shlex.quote(sys.executable)} -m tests.support.batch_runner"
    with StubOpenAI(dry_run_responder) as stub:
        for command in engine:
            command = command.replace("python -m vllm.entrypoints.openai.run_batch", stand_in, 1)
            done = subprocess.run(
                ["bash", "-c", f"{command} --url {stub.url.removesuffix('/v1')}"],
                cwd=tmp_path,
                env=plain_env(PYTHONPATH=str(REPO)),
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, done.stdout + done.stderr
        assert len(stub.requests) == 2  # the test split's dialogue has two system turns
    imported = subprocess.run(
        ["bash", "-c", _printed(out, r"^then import the answers:\n  (.+)$")],
        cwd=tmp_path,
        env=plain_env(),
        capture_output=True,
        text=True,
    )
    assert imported.returncode == 0 and "2 answers imported" in imported.stdout, (
        imported.stdout + imported.stderr
    )
    finish = subprocess.run(
        ["bash", "-c", _printed(imported.stdout, r"^next: (.+?)  \(the next round")],
        cwd=tmp_path,
        env=plain_env(),
        capture_output=True,
        text=True,
    )
    assert finish.returncode == 0 and "nothing left to ask" in finish.stdout, finish.stdout + finish.stderr
    _serves(_printed(finish.stdout, r"^serve it: (.+)$"), tmp_path)
