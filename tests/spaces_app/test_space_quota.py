"""Accountability: every submission counted for its owner per track and period, shown on the row, and a blind
period's quota held under concurrency: threads of the app, processes beside it, two writers of the Hub store."""

from __future__ import annotations

import html
import multiprocessing
import threading

import pytest

from spaces_app.accountability import QuotaError, count_check, owner_count, shown_count
from spaces_app.blind import load_periods
from spaces_app.owners import Owner, OwnerError
from spaces_app.settings import Settings
from spaces_app.store import Checked, HubStore, LocalStore
from tests.support.hub import FakeHub
from tests.support.space_blind import write_gold

TRACK = "blind 2026-12"


@pytest.fixture()
def quota_settings(space_settings, space_world, tmp_path):
    gold = write_gold(space_world["data"], tmp_path / "gold")
    return Settings(**{**space_settings.__dict__, "blind_dirs": (gold,), "quota": 2, "auth": "oauth"})


def _ctx(settings):
    from spaces_app.app import AppContext

    return AppContext(settings, LocalStore(settings.results_dir), periods=load_periods(settings.blind_dirs))


def _submit(ctx, path, name, user="alice", track=TRACK):
    from spaces_app.submit_tab import submit_action

    class Profile:
        username = user

    return html.unescape(submit_action(ctx, str(path), name, "", "closed", profile=Profile(), track=track))


def test_counts_on_every_row_and_the_quota_per_period(quota_settings, valid_predictions):
    ctx = _ctx(quota_settings)
    assert "submission 1 of yours" in _submit(ctx, valid_predictions, "A")
    assert "version 2, submission 2 of yours" in _submit(ctx, valid_predictions, "A")
    refused = _submit(ctx, valid_predictions, "B")  # another name does not reset the count
    assert "@alice has made 2 submissions to blind period '2026-12'; the quota is 2 per period" in refused
    assert "Scored and added" in _submit(ctx, valid_predictions, "B", user="bob")
    for _ in range(3):  # the public track has no quota; it counts too
        assert "Scored and added" in _submit(ctx, valid_predictions, "A", track="public")
    rows = ctx.all_rows()
    shown = {
        (r["system"], r.get("period"), r["owner"]["user"]): shown_count(r, rows)
        for r in rows
        if r.get("owner")
    }
    assert shown == {("A", "2026-12", "alice"): 2, ("B", "2026-12", "bob"): 1, ("A", None, "alice"): 3}
    args = ("Table 5: headline", "closed", ["submitted"], True, "", None, "best first", False)
    assert 'data-submissions="2"' in ctx.table(*args, track=TRACK)
    assert 'data-submissions="3"' in ctx.table(*args)
    assert all(shown_count(r, rows) is None for r in rows if r.get("source") != "submission")


def _waiting_put(barrier):
    put = LocalStore.put

    def waiting(self, *args, **kwargs):
        barrier.wait(timeout=300)  # every racer has scored and is at the store before any writes
        return put(self, *args, **kwargs)

    return waiting


def test_the_quota_holds_for_threads_racing(quota_settings, valid_predictions, monkeypatch):
    ctx = _ctx(quota_settings)
    names = ["T1", "T2", "T3", "T4"]
    monkeypatch.setattr(LocalStore, "put", _waiting_put(threading.Barrier(len(names))))
    statuses: dict[str, str] = {}
    threads = [
        threading.Thread(target=lambda n=n: statuses.__setitem__(n, _submit(ctx, valid_predictions, n)))
        for n in names
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert sum("Scored and added" in s for s in statuses.values()) == 2
    assert sum("the quota is 2 per period" in s for s in statuses.values()) == 2
    assert sorted(r["submissions"] for r in ctx.store.rows()) == [1, 2]


def _process_racer(ctx, path, name, barrier, out) -> None:
    LocalStore.put = _waiting_put(barrier)  # type: ignore[method-assign]
    out.put((name, _submit(ctx, path, name)))


def test_the_quota_holds_for_processes_racing(quota_settings, valid_predictions):
    fork = multiprocessing.get_context("fork")
    ctx = _ctx(quota_settings)
    ctx.rows()  # the marks computed once, inherited by every process
    names = ["P1", "P2", "P3"]
    barrier, out = fork.Barrier(len(names)), fork.Queue()
    procs = [
        fork.Process(target=_process_racer, args=(ctx, str(valid_predictions), n, barrier, out))
        for n in names
    ]
    for p in procs:
        p.start()
    statuses = dict(out.get(timeout=600) for _ in procs)
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert sum("Scored and added" in s for s in statuses.values()) == 2, statuses
    assert sum("the quota is 2 per period" in s for s in statuses.values()) == 1
    assert len(LocalStore(quota_settings.results_dir).rows()) == 2


def test_the_quota_holds_for_cli_processes_racing(quota_settings, valid_predictions, tmp_path):
    """`trace-bench submit --blind` from three processes with one token: each reaches the store after
    scoring, before any of them writes; two are stored, the third is past the quota."""
    import subprocess
    import sys

    from tests.spaces_app.test_space_submit_races import RACER
    from tests.support.submit import OFFLINE_ENV, submit_argv

    gate = tmp_path / "gate"
    gate.mkdir()
    env = {**OFFLINE_ENV, "RACE_GATE": str(gate), "RACE_N": "3", "TRACE_SPACE_QUOTA": "2"}
    more = ("--blind", str(quota_settings.blind_dirs[0]), "--token", "t" * 20)
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, *submit_argv(quota_settings, valid_predictions, name, *more)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in ("C1", "C2", "C3")
    ]
    results = [(p.returncode, out, err) for p in racers for out, err in [p.communicate(timeout=600)]]
    assert len(list(gate.iterdir())) == 3, results
    assert sorted(rc for rc, _, _ in results) == [0, 0, 2], results
    assert all("blind period 2026-12, closed pool" in out for rc, out, _ in results if rc == 0)
    [err] = [err for rc, _, err in results if rc == 2]
    assert (
        "has made 2 submissions to blind period '2026-12'; the quota is 2" in err and "Traceback" not in err
    )
    assert sorted(r["submissions"] for r in LocalStore(quota_settings.results_dir).rows()) == [1, 2]


def test_the_quota_holds_for_two_hub_writers(tmp_path):
    """Each writer counts at the head it commits on: the one overtaken fails, and submitted again it is past
    the quota."""
    hub = FakeHub(tmp_path / "repo")
    first, second = HubStore("me/results", api=hub, ttl=0), HubStore("me/results", api=hub, ttl=0)
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"x": 1}\n', encoding="utf-8")
    alice = Owner("hf", user="alice")

    def put(store, name):
        row = {"system": name, "pool": "closed", "source": "submission", "metrics": {}, "period": "p1"}
        return store.put(
            row,
            predictions,
            alice,
            check=lambda rows: Checked(fields=count_check(alice, ("blind", "p1"), 1)(rows)),
        )

    def overtaking_writer():
        hub.before_commit = None
        put(second, "Other")

    hub.before_commit = overtaking_writer
    with pytest.raises(OwnerError, match="changed while this submission was stored"):
        put(first, "Mine")
    with pytest.raises(QuotaError, match="has made 1 submissions to blind period 'p1'"):
        put(first, "Mine")
    assert [r["system"] for r in second.rows()] == ["Other"] and len(hub.commits) == 1
    assert owner_count(alice, second.rows(), ("blind", "p1")) == 1
