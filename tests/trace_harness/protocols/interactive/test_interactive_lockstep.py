"""Lockstep: the dialogues of a chunk take turn t in one system call; the output is byte-identical to the
sequential loop (chunks of one dialogue) for every chunk size, resumes across chunk sizes, and a system that
is not session-isolated runs its dialogues one at a time, in order."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from baselines import pipeline
from trace_dataset.constants import DATA_DIRNAME, INTERACTIVE_FILE
from trace_dataset.datadir import kb_dir
from trace_dataset.io import read_json
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.output import META_FILE, PREDICTIONS_FILE, PROGRESS_FILE
from trace_harness.protocols.interactive.reply import SystemReply
from trace_harness.protocols.interactive.run import run_interactive
from trace_harness.protocols.interactive.systems import PipelineSystem

N = 5


@pytest.fixture(scope="module")
def kb(small_corpus):
    return KnowledgeBase.load(kb_dir(small_corpus))


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


class Recording(PipelineSystem):
    """A registered pipeline that records the dialogue ids of every system call (row order kept)."""

    def __init__(self, pipe, session_isolated: bool | None = None):
        super().__init__(pipe)
        if session_isolated is not None:
            self.session_isolated = session_isolated
        self.calls: list[list[str]] = []

    def respond(self, rows: Sequence[dict[str, Any]]) -> list[SystemReply]:
        self.calls.append([r["dialogue_id"] for r in rows])
        return super().respond(rows)


@pytest.mark.parametrize("name", ["popularity", "tfidf"])
def test_lockstep_output_equals_the_sequential_loop_for_any_chunk_size(small_corpus, kb, tmp_path, name):
    outs = {}
    for chunk in (1, 2, 64):
        system = Recording(pipeline(name, kb=kb))
        outs[chunk] = tmp_path / f"c{chunk}"
        run_interactive(
            system, small_corpus, outs[chunk], n=N, progress=False, n_boot=100, kb=kb, batch_dialogues=chunk
        )
        assert max(len(c) for c in system.calls) == min(chunk, N)  # lockstep really batches
        if (
            chunk == 64
        ):  # turn t of every live dialogue in one call: as many calls as the longest dialogue's turns
            assert len(system.calls) <= 8 and len(system.calls[0]) == N
    assert _files(outs[1]) == _files(outs[2]) == _files(outs[64])


def test_resume_across_chunk_sizes(small_corpus, kb, tmp_path):
    full, part = tmp_path / "full", tmp_path / "part"
    run_interactive("tfidf", small_corpus, full, n=N, progress=False, n_boot=100, kb=kb, batch_dialogues=1)

    class Interrupt(Exception):
        pass

    class Failing(Recording):
        def respond(self, rows):
            if any(r["dialogue_id"] == self.stop_at for r in rows):
                raise Interrupt
            return super().respond(rows)

    failing = Failing(pipeline("tfidf", kb=kb))
    failing.stop_at = _ids(small_corpus)[3]  # the second chunk of 3
    with pytest.raises(Interrupt):
        run_interactive(
            failing, small_corpus, part, n=N, progress=False, n_boot=100, kb=kb, batch_dialogues=3
        )
    assert (part / PROGRESS_FILE).exists() and not read_json(part / META_FILE)["complete"]
    again = Recording(pipeline("tfidf", kb=kb))
    run_interactive(again, small_corpus, part, n=N, progress=False, n_boot=100, kb=kb, batch_dialogues=64)
    assert {d for call in again.calls for d in call} == {failing.stop_at} | set(_ids(small_corpus)[4:N])
    assert _files(part) == _files(full)


def _ids(corpus: Path) -> list[str]:
    from trace_dataset.datadir import iter_dialogues

    return [d["dialogue_id"] for d in iter_dialogues(corpus, "test")][:N]


def test_a_system_that_is_not_session_isolated_talks_one_dialogue_at_a_time(small_corpus, kb, tmp_path):
    stateful = Recording(pipeline("tfidf", kb=kb), session_isolated=False)
    run_interactive(
        stateful, small_corpus, tmp_path / "s", n=N, progress=False, n_boot=100, kb=kb, batch_dialogues=64
    )
    assert all(len(c) == 1 for c in stateful.calls)
    order, ids = [c[0] for c in stateful.calls], _ids(small_corpus)
    assert order == sorted(order, key=ids.index) and set(order) == set(ids)  # one dialogue after the other
    # tf-idf keeps no state, so the sequential conversations are the lockstep ones
    isolated = tmp_path / "i"
    run_interactive(
        "tfidf", small_corpus, isolated, n=N, progress=False, n_boot=100, kb=kb, batch_dialogues=64
    )
    for f in (PREDICTIONS_FILE, f"{DATA_DIRNAME}/{INTERACTIVE_FILE}"):
        assert (tmp_path / "s" / f).read_bytes() == (isolated / f).read_bytes()


def test_sniprec_protocol_also_runs_a_stateful_system_one_dialogue_at_a_time(small_bundle, tmp_path):
    from trace_dataset.kb.catalogue import CatalogueSpec, build_catalogue
    from trace_harness.protocols.interactive.simulator.sniprec_seeds import SeedCriteria
    from trace_harness.protocols.interactive.sniprec import run_sniprec

    cat = tmp_path / "catalogue"
    build_catalogue(
        small_bundle, cat, CatalogueSpec(cities=("Philadelphia",), poi_types=("restaurant",), min_reviews=3)
    )
    kb = KnowledgeBase.load(cat)
    relaxed = SeedCriteria(user_reviews=(1, 99))
    outs = {}
    for label, isolated in (("lockstep", None), ("sequential", False)):
        system = Recording(pipeline("tfidf", kb=kb), session_isolated=isolated)
        outs[label] = tmp_path / label
        run_sniprec(system, cat, outs[label], n=3, criteria=relaxed, progress=False, n_boot=100)
        assert max(len(c) for c in system.calls) == (3 if isolated is None else 1)
    for f in (PREDICTIONS_FILE, f"{DATA_DIRNAME}/{INTERACTIVE_FILE}"):
        assert (outs["lockstep"] / f).read_bytes() == (outs["sequential"] / f).read_bytes()
