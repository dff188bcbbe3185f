"""`trace-bench serve` (a real server process) and the Space's entry point (`trace-bench demo`, the main job,
is tested in tests/trace_harness/main_job)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.browser import free_port
from trace_bench.cli import main

REPO = Path(__file__).resolve().parents[2]


def _get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status, r.read().decode("utf-8", "replace")


def test_serve_command_starts_the_app(space_world, tmp_path):
    port = free_port()
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False", "TRACE_SPACE_RUNS": str(space_world["runs"])}
    cmd = [
        sys.executable,
        "-m",
        "trace_bench.cli",
        "serve",
        "--data",
        str(space_world["data"]),
        "--results",
        str(tmp_path / "results"),
        "--baselines",
        str(space_world["baselines"]),
        "--port",
        str(port),
        "--max-upload-mb",
        "3",
    ]
    proc = subprocess.Popen(
        cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                status, page = _get(f"http://127.0.0.1:{port}/")
                break
            except OSError as e:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log = proc.stdout.read() if proc.poll() is not None else ""
                    raise AssertionError(f"server did not start:\n{log}") from e
                time.sleep(0.5)
        assert status == 200 and "Trace leaderboard" in page
        _, config = _get(f"http://127.0.0.1:{port}/config")
        config = json.loads(config)
        assert config["title"] == "Trace leaderboard"
        assert config["max_file_size"] == 3 * 1024 * 1024  # the upload limit reaches the server
        text = json.dumps(config)
        assert "TF-IDF (paper)" in text and "Popularity" in text  # the initial leaderboard holds the rows
        assert (tmp_path / "results" / "results").is_dir()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_help_loads_nothing_heavy():
    assert (
        "gradio"
        not in subprocess.run(
            [sys.executable, "-c", "import sys, spaces_app.cli; print(' '.join(sys.modules))"],
            capture_output=True,
            text=True,
            cwd=REPO,
            check=True,
        ).stdout
    )


def test_space_entry_point_builds_the_app_from_the_environment(space_world, tmp_path, monkeypatch):
    """The Space runs the repository's app.py unchanged: settings come from TRACE_SPACE_* variables."""
    import runpy

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TRACE_SPACE_DATA", str(space_world["data"]))
    monkeypatch.setenv("TRACE_SPACE_BASELINES", str(space_world["baselines"]))
    monkeypatch.setenv("TRACE_SPACE_RESULTS", str(tmp_path / "store"))
    monkeypatch.setenv("TRACE_SPACE_MAX_UPLOAD_MB", "9")
    namespace = runpy.run_path(str(REPO / "app.py"))  # not as __main__: builds, does not launch
    assert namespace["settings"].max_upload_mb == 9 and namespace["settings"].data_dir == space_world["data"]
    assert namespace["demo"].title == "Trace leaderboard"
    assert (tmp_path / "store" / "results").is_dir()


@pytest.mark.parametrize("flag", ["--data", "--runs", "--baselines"])
def test_serve_refuses_a_missing_path_instead_of_serving_an_empty_board(flag, tmp_path, capsys):
    assert main(["serve", flag, str(tmp_path / "typo"), "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err
    assert f"{flag} {tmp_path / 'typo'}: no such" in err


def test_serve_on_a_taken_port_says_so_in_one_line(tmp_path, capsys):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port), "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"--port {port}: 127.0.0.1:{port} is in use" in err
    assert "--port N" in err and "Traceback" not in err


def test_output_piped_into_a_reader_that_stops_early_is_not_a_traceback():
    # `trace-bench ... | head -c 1` on a command that prints more than a pipe holds: the reader closes the pipe
    script = (
        "import sys, trace_bench.cli as c; "
        "c._main = lambda argv: print('x' * 1_000_000) or 0; sys.exit(c.main([]))"
    )
    proc = subprocess.run(
        f'"{sys.executable}" -c "{script}" | head -c 1',
        shell=True,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.stdout == "x"
    assert "Traceback" not in proc.stderr and "Broken pipe" not in proc.stderr, proc.stderr
