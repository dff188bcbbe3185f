"""Seeding travelers from a generated corpus: the generator's plans are rebuilt exactly, and a record the
generator did not make is refused."""

from __future__ import annotations

import copy
import shutil

import pytest

from trace_dataset.constants import CORPUS_META_FILE, RECOMMENDATION_ACTIONS
from trace_dataset.datadir import iter_dialogues, kb_dir
from trace_dataset.io import TraceDataError
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.simulator.goal import TravelerGoal
from trace_harness.protocols.interactive.simulator.seeding import CorpusSeeder


@pytest.fixture(scope="module")
def seeded(small_corpus):
    kb = KnowledgeBase.load(kb_dir(small_corpus))
    seeder = CorpusSeeder(small_corpus, kb)
    records = list(iter_dialogues(small_corpus))
    return seeder, records, [seeder.goal(r) for r in records]


def test_every_dialogue_of_the_corpus_gets_its_goal(seeded):
    seeder, records, goals = seeded
    assert len(goals) == len(records) == 48
    for record, goal in zip(records, goals, strict=True):
        assert goal.dialogue_id == record["dialogue_id"] and goal.scenario == record["scenario"]
        assert goal.constraints and 0 <= goal.opening <= len(goal.constraints) and goal.asks >= 1
        rec_turns = [t for t in record["turns"] if t["action"] in RECOMMENDATION_ACTIONS]
        accepted = next(t for t in record["turns"] if t["action"] == "accept")["referenced_poi_ids"][0]
        # the POI the seeding dialogue's user accepted satisfies every preference the traveler holds
        assert seeder.world.acceptable(goal, accepted)
        assert accepted in seeder.world.targets(goal, goal.pool("closed"))
        # the last recommendation's gold and alternatives are exactly the targets among the candidates
        last = rec_turns[-1]
        assert set(seeder.world.targets(goal, goal.pool("closed"))) >= set(last["gold_poi_ids"])
        assert TravelerGoal.from_dict(goal.to_dict()) == goal
    assert sum(seeder.attempts.values()) == 48


def test_a_record_the_generator_did_not_make_is_refused(seeded):
    seeder, records, _ = seeded
    tampered = copy.deepcopy(records[0])
    tampered["candidate_poi_ids"] = list(reversed(tampered["candidate_poi_ids"]))
    with pytest.raises(TraceDataError, match="no generator plan matches"):
        seeder.goal(tampered)
    moved = copy.deepcopy(records[0])
    moved["scenario"]["persona_type"] = (
        "pet_owner" if moved["scenario"]["persona_type"] != "pet_owner" else "senior"
    )
    with pytest.raises(TraceDataError, match="generator assigns"):
        seeder.goal(moved)
    with pytest.raises(TraceDataError, match="not a generator id"):
        seeder.goal({**records[0], "dialogue_id": "my-dialogue"})


def test_a_corpus_without_its_generation_parameters_is_refused(small_corpus, tmp_path):
    copy_dir = tmp_path / "corpus"
    shutil.copytree(small_corpus, copy_dir)
    (copy_dir / CORPUS_META_FILE).unlink()
    with pytest.raises(TraceDataError, match="corpus.json"):
        CorpusSeeder(copy_dir, KnowledgeBase.load(kb_dir(copy_dir)))
