"""`trace-bench submit` and its new submitter token: shown (and written to --token-file) in one piece before
anything is stored, and refused (exit 2, nothing stored, one line wherever a stream is still open) when it
cannot be, whatever happens to stdout or stderr: `>&-`, both streams closed, a reader gone before the token
(`| head -0`, `2>&1 | head -0`) or right after it (`2>&1 | head -1`: shown, so stored)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from spaces_app.owners import Owner, owns
from spaces_app.store import LocalStore
from tests.support.submit import OFFLINE_ENV, submit_argv
from trace_bench.cli import main


def _shell(settings, predictions, name: str, redirect: str) -> subprocess.CompletedProcess:
    """`trace-bench submit ... <redirect>` in bash, its exit code the command's own (not the pipe's end)."""
    command = f'"$@" {redirect}; exit ${{PIPESTATUS[0]}}'
    argv = [sys.executable, "-m", "trace_bench.cli", *submit_argv(settings, predictions, name)]
    return subprocess.run(
        ["bash", "-c", command, "submit", *argv], capture_output=True, text=True, env=OFFLINE_ENV, timeout=600
    )


@pytest.mark.parametrize(
    ("redirect", "message_on"),
    [
        (">&-", "stderr"),  # stdout closed: the token has nowhere to go
        (">&- 2>&-", None),  # both closed: no line can be shown, the exit code still says it
        ("2>&1 | head -0", None),  # the reader gone before the token: stdout and stderr both broken
        ("| head -0", "stderr"),  # stdout's reader gone, stderr open
    ],
)
def test_submit_refuses_when_the_token_cannot_be_shown(
    space_settings, valid_predictions, redirect, message_on
):
    done = _shell(space_settings, valid_predictions, "Lost token", redirect)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert LocalStore(space_settings.results_dir).rows() == []
    if message_on == "stderr":
        assert done.stderr.count("\n") == 1 and "could not be shown" in done.stderr
        assert "nothing was stored" in done.stderr and "Traceback" not in done.stderr
    else:
        assert done.stderr == "" and done.stdout == ""


def test_submit_into_head_stores_exactly_when_the_token_was_shown(space_settings, valid_predictions):
    """`submit ... 2>&1 | head -1`: the first line is the token, written whole in one piece; when it was shown,
    the row is stored under it and the exit code is 0 (the later lines meet a closed pipe)."""
    for i in range(2):
        done = _shell(space_settings, valid_predictions, f"Headed {i}", "2>&1 | head -1")
        rows = {r["system"]: r for r in LocalStore(space_settings.results_dir).rows()}
        assert done.stdout.startswith("submitter token: ") and done.stdout.count("\n") == 1, done.stdout
        token = done.stdout.split(": ", 1)[1].strip()
        assert done.returncode == 0 and owns(Owner("token", token=token), rows[f"Headed {i}"]["owner"])


def test_a_token_file_that_cannot_be_written_stores_nothing(
    space_settings, valid_predictions, tmp_path, capsys
):
    missing = tmp_path / "absent" / "token.txt"
    assert main(submit_argv(space_settings, valid_predictions, "Filed", "--token-file", str(missing))) == 2
    captured = capsys.readouterr()
    assert "could not be shown" in captured.err and "submitter token: " not in captured.out
    assert LocalStore(space_settings.results_dir).rows() == []


def test_a_given_token_needs_no_stdout(space_settings, valid_predictions):
    """With --token nothing new must be shown: a closed stdout stores the row (exit 0)."""
    token = "chosen-token-0123456789"
    done = _shell(space_settings, valid_predictions, "Chosen", f"--token {token} >&-")
    rows = LocalStore(space_settings.results_dir).rows()
    assert done.returncode == 0 and [r["system"] for r in rows] == ["Chosen"]
    assert owns(Owner("token", token=token), rows[0]["owner"])


def test_the_error_line_falls_back_to_stdout_when_stderr_is_closed(space_settings, tmp_path):
    bad = Path(tmp_path / "bad.jsonl")
    bad.write_text("not json\n", encoding="utf-8")
    done = _shell(space_settings, bad, "Bad file", "2>&-")
    assert done.returncode == 2 and done.stdout.startswith(
        "trace-bench: error: submission refused: bad.jsonl"
    )
