"""Submissions that tried to impersonate a row: the issue's invisible characters through the CLI
and the app's own submission function, look-alike names submitted at the same moment by real processes (the
check repeated under the store's lock: one winner), and the Hub store's commit on top of the revision it
checked."""

from __future__ import annotations

import html
import multiprocessing
import subprocess
import sys

import pytest

from spaces_app.owners import Owner, OwnerError
from spaces_app.store import HubStore, LocalStore
from spaces_app.submissions import SubmissionError, refuse_lookalike
from tests.support.hub import FakeHub
from tests.support.names import INVISIBLE_IMPERSONATIONS, NEEDED_JOINERS
from tests.support.submit import OFFLINE_ENV, submit_argv
from trace_bench.cli import main

LOOKALIKES = ("Olga", "0lga", "OIga", "O1ga")  # the race: all four got in, 3 of 3 trials
TRIALS = 3
TOKEN = "tests-submitter-token-0123"  # the Submit tab stores rows only under a token the field holds


def _ctx(settings):
    from spaces_app.app import AppContext

    return AppContext(settings, LocalStore(settings.results_dir))


# -- invisible characters, through the CLI and the app ------------------------------------------------------
def test_invisible_characters_never_make_a_new_row_through_the_cli(space_settings, valid_predictions, capsys):
    for name in ("Alice", "Bob"):
        assert main(submit_argv(space_settings, valid_predictions, name)) == 0
    capsys.readouterr()
    for name, char, _ in INVISIBLE_IMPERSONATIONS:
        assert main(submit_argv(space_settings, valid_predictions, name)) == 2, name
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"invisible character ({char})" in err, err
    assert sorted(r["system"] for r in LocalStore(space_settings.results_dir).rows()) == ["Alice", "Bob"]
    assert (
        main(submit_argv(space_settings, valid_predictions, NEEDED_JOINERS[0])) == 0
    )  # Persian, with its ZWNJ
    assert "version 1" in capsys.readouterr().out


def test_invisible_characters_never_make_a_new_row_through_the_app(space_settings, valid_predictions):
    from spaces_app.submit_tab import submit_action

    ctx = _ctx(space_settings)
    for name in ("Alice", "Bob"):
        assert "Scored and added" in submit_action(
            ctx, str(valid_predictions), name, "", "closed", token=TOKEN
        )
    for name, char, _ in INVISIBLE_IMPERSONATIONS:
        status = html.unescape(submit_action(ctx, str(valid_predictions), name, "", "closed", token=TOKEN))
        assert "Error" in status and f"invisible character ({char})" in status, status
    assert sorted(r["system"] for r in ctx.store.rows()) == ["Alice", "Bob"]
    for name in (NEEDED_JOINERS[0], NEEDED_JOINERS[2], NEEDED_JOINERS[4]):  # Persian, Devanagari, Sinhala
        status = html.unescape(submit_action(ctx, str(valid_predictions), name, "", "closed", token=TOKEN))
        assert "Scored and added" in status and name in status, status
    assert len(ctx.store.rows()) == 5


# -- look-alikes at the same moment: real processes -----------------------------------------------------------
RACER = """
import os, sys, time
from pathlib import Path
from spaces_app.store import LocalStore

_put = LocalStore.put


def put(self, *args, **kwargs):  # every racer reaches the store before any of them writes
    gate, n = Path(os.environ["RACE_GATE"]), int(os.environ["RACE_N"])
    (gate / str(os.getpid())).touch()
    deadline = time.monotonic() + 300
    while len(list(gate.iterdir())) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    return _put(self, *args, **kwargs)


LocalStore.put = put
from trace_bench.cli import main

sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("names", [LOOKALIKES, LOOKALIKES[2:], LOOKALIKES[3:] + LOOKALIKES[:1]])
def test_lookalikes_racing_through_the_cli_have_one_winner(
    space_settings, valid_predictions, tmp_path, names
):
    """Three trials (the issue's four names at once, then two pairs): the racers pass the early check together
    (the store is empty for each of them while it scores), then meet at the store: only the first to take the
    lock stores, the others see its row."""
    gate = tmp_path / "gate"
    gate.mkdir()
    env = {**OFFLINE_ENV, "RACE_GATE": str(gate), "RACE_N": str(len(names))}
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, *submit_argv(space_settings, valid_predictions, name)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in names
    ]
    results = [(p.returncode, out, err) for p in racers for out, err in [p.communicate(timeout=600)]]
    assert len(list(gate.iterdir())) == len(names)  # each racer reached the store before any wrote
    rows = LocalStore(space_settings.results_dir).rows()
    assert len(rows) == 1, [r["system"] for r in rows]
    assert sorted(rc for rc, _, _ in results) == [0] + [2] * (len(names) - 1)
    for rc, _, err in results:
        if rc == 2:
            assert f"looks like the existing row {rows[0]['system']!r}" in err and "Traceback" not in err


def _app_racer(ctx, path: str, name: str, barrier, out) -> None:
    from spaces_app.submit_tab import submit_action

    put = LocalStore.put

    def waiting_put(self, *args, **kwargs):
        barrier.wait(timeout=300)  # both processes are at the store before either writes
        return put(self, *args, **kwargs)

    LocalStore.put = waiting_put  # type: ignore[method-assign]
    out.put((name, html.unescape(submit_action(ctx, path, name, "", "closed", token=TOKEN))))


@pytest.mark.parametrize("trial", range(TRIALS))
def test_lookalikes_racing_through_the_app_have_one_winner(space_settings, valid_predictions, trial):
    """Two processes each running the app's submission function (the Submit tab's handler)."""
    fork = multiprocessing.get_context("fork")
    ctx = _ctx(space_settings)
    ctx.rows()  # the best-row marks of the rows now, computed once and inherited by both processes
    barrier, out = fork.Barrier(2), fork.Queue()
    names = LOOKALIKES[trial % 2 :][:2]
    procs = [
        fork.Process(target=_app_racer, args=(ctx, str(valid_predictions), n, barrier, out)) for n in names
    ]
    for p in procs:
        p.start()
    statuses = dict(out.get(timeout=600) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    rows = LocalStore(space_settings.results_dir).rows()
    assert len(rows) == 1
    winner = rows[0]["system"]
    assert "Scored and added" in statuses.pop(winner)
    (loser,) = statuses.values()
    assert f"looks like the existing row {winner!r}" in loser


def test_lookalikes_racing_through_the_hub_store_have_one_winner(tmp_path):
    """Two writers (two HubStore objects, as two processes or two Spaces would hold) on one repository: each
    checks the rows at the head it read and commits on top of it, so the one overtaken is refused."""
    hub = FakeHub(tmp_path / "repo")
    first, second = HubStore("me/results", api=hub, ttl=0), HubStore("me/results", api=hub, ttl=0)
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"x": 1}\n', encoding="utf-8")

    def row(name: str) -> dict:
        return {
            "system": name,
            "pool": "closed",
            "source": "submission",
            "family": "submitted",
            "metrics": {},
        }

    def put(store: HubStore, name: str, user: str) -> dict:
        return store.put(
            row(name), predictions, Owner("hf", user=user), check=lambda rows: refuse_lookalike(name, rows)
        )

    def overtaking_writer():  # between the first writer's check and its commit, the second stores a look-alike
        hub.before_commit = None
        put(second, "0lga", "bob")

    hub.before_commit = overtaking_writer
    with pytest.raises(OwnerError, match="changed while this submission was stored"):
        put(first, "Olga", "alice")
    assert [r["system"] for r in second.rows()] == ["0lga"] and len(hub.commits) == 1
    with pytest.raises(SubmissionError, match="looks like the existing row '0lga'"):
        put(first, "Olga", "alice")  # submitted again: the check at the new head sees the row
    assert len(hub.commits) == 1
