"""Memory-Aug.: the decay (exactly 0.5 at 168 h), retrieval, the fixed order and clock, the turn-embedding cache
and the runner's replay of an interrupted run. The model's answers are scripted and the sentence encoder is a
stand-in here (the order, clock and replay do not depend on it); the end-to-end test runs the packaged
all-MiniLM-L6-v2."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from baselines import pipeline
from baselines.llm.memory_aug import MemoryEntry, PreferenceMemory, decay
from tests.support.llm import ScriptedLLM
from tests.support.llm_baselines import WordEncoder, ranking_reply
from trace_dataset.datadir import iter_dialogues
from trace_dataset.views import turn_rows
from trace_harness.protocols.teacher_forced.runner import run_baseline


def test_decay_half_life_is_one_week():
    assert decay(168) == 0.5  # exactly
    assert decay(0) == 1.0
    assert decay(336) == pytest.approx(0.25)
    assert decay(24, half_life_hours=24) == 0.5


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_retrieval_is_cosine_times_decay_per_persona():
    m = PreferenceMemory()
    m.add(MemoryEntry("foodie", "d1", "old and exact", 0.0), unit(1, 0))
    m.add(MemoryEntry("foodie", "d2", "recent and close", 167.0), unit(1, 1))
    m.add(MemoryEntry("foodie", "d3", "opposite", 160.0), unit(-1, 0))
    m.add(MemoryEntry("family", "d4", "other persona", 168.0), unit(1, 0))
    m.add(MemoryEntry("foodie", "d5", "current dialogue", 168.0), unit(1, 0))
    m.add(MemoryEntry("foodie", "d6", "from the future", 200.0), unit(1, 0))
    hits = m.retrieve("foodie", unit(1, 0), now_hour=168.0, k=5, exclude_dialogue="d5")
    assert [h.entry.text for h in hits] == [
        "recent and close",
        "old and exact",
    ]  # no negative, other, self, future
    assert hits[1].decay == 0.5 and hits[1].score == pytest.approx(0.5)
    assert hits[0].score == pytest.approx(0.70710678 * decay(1.0), abs=1e-6)
    assert len(m.retrieve("foodie", unit(1, 0), 168.0, k=1)) == 1
    assert m.retrieve("nobody", unit(1, 0), 168.0) == []


@pytest.fixture
def encoder(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))  # the turn-embedding cache lives there
    return WordEncoder()


def test_dialogues_read_the_memory_of_earlier_ones_in_order(kb, encoder):
    prompts = []

    def reply(conv):
        prompts.append(conv[-1]["content"])
        return ranking_reply()(conv)

    pipe = pipeline("memory_aug", kb=kb, llm=ScriptedLLM(reply), encoder=encoder)
    rows = [
        r for d in iter_dialogues(kb.root.parent) for r in turn_rows(d, "closed")
    ]  # train, validation, test
    preds = list(pipe(rows))
    assert [p["meta"]["memory"] for p in preds[:2]] == [[], []]  # the first dialogue remembers nothing
    second = preds[2]["meta"]["memory"]  # the next dialogue, one hour later, reads the first one's turns
    assert second and all(h["dialogue_id"] == "crs_yelp_00004" and h["hours_ago"] == 1.0 for h in second)
    assert preds[2]["meta"]["counts"]["memory_hits"] == len(second)
    last = preds[-1]["meta"][
        "memory"
    ]  # the test dialogue, at hour 3, says what the first validation one said
    assert len(last) == 3 and [h["score"] for h in last] == sorted((h["score"] for h in last), reverse=True)
    ago = {h["dialogue_id"]: h["hours_ago"] for h in last}
    assert ago["crs_yelp_00002"] == 2.0 and set(ago) <= {"crs_yelp_00002", "crs_yelp_00003", "crs_yelp_00004"}
    assert all(h["score"] == pytest.approx(h["cosine"] * decay(h["hours_ago"]), abs=1e-5) for h in last)
    assert (
        "Looking for cheap barbecue with a patio." in prompts[2]
    )  # the train dialogue's wish, in the prompt
    assert "(1 hours ago)" in prompts[2] or "(1 hours ago)" in prompts[3]


def test_an_interrupted_run_is_replayed_so_the_memory_is_the_same(data_dir, tmp_path, caplog, encoder):
    full = tmp_path / "full.jsonl"
    run_baseline(
        "memory_aug",
        data_dir,
        full,
        split="all",
        progress=False,
        chunk_dialogues=1,
        params={"llm": ScriptedLLM(ranking_reply()), "encoder": encoder},
    )
    calls = []

    def dies(conv):
        calls.append(1)
        if len(calls) > 4:  # after two dialogues
            raise KeyboardInterrupt
        return ranking_reply()(conv)

    cut = tmp_path / "cut.jsonl"
    with pytest.raises(KeyboardInterrupt):
        run_baseline(
            "memory_aug",
            data_dir,
            cut,
            split="all",
            progress=False,
            chunk_dialogues=1,
            params={"llm": ScriptedLLM(dies), "encoder": encoder},
        )
    assert cut.read_text().count("\n") == 4
    with caplog.at_level(logging.WARNING):
        meta = run_baseline(
            "memory_aug",
            data_dir,
            cut,
            split="all",
            progress=False,
            chunk_dialogues=1,
            num_proc=2,
            params={"llm": ScriptedLLM(ranking_reply()), "encoder": encoder},
        )
    assert "not session-isolated" in caplog.text  # one process whatever --num-proc says
    assert meta["complete"] and meta["session_isolated"] is False
    assert cut.read_bytes() == full.read_bytes()


def test_turn_embeddings_are_cached_so_a_rerun_encodes_nothing(kb, encoder):
    all_rows = [r for d in iter_dialogues(kb.root.parent) for r in turn_rows(d, "closed")]
    first = list(pipeline("memory_aug", kb=kb, llm=ScriptedLLM(ranking_reply()), encoder=encoder)(all_rows))
    encoded = encoder.calls
    assert encoded == 6  # the distinct user turns, once each
    again = list(pipeline("memory_aug", kb=kb, llm=ScriptedLLM(ranking_reply()), encoder=encoder)(all_rows))
    assert encoder.calls == encoded and again == first
    off = WordEncoder()
    list(
        pipeline("memory_aug", kb=kb, llm=ScriptedLLM(ranking_reply()), encoder=off, query_cache=False)(
            all_rows
        )
    )
    assert off.calls == encoded
