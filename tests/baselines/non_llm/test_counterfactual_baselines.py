"""The deliberately bad systems of the simulator report: Random pick and Contrary (registered, never looped)."""

from __future__ import annotations

import hashlib
import random

import pytest

from baselines import BASELINES, NON_LLM_BASELINES
from baselines.non_llm.contrary import ContraryBaseline
from baselines.non_llm.random_pick import RandomPickBaseline
from tests.support.non_llm import CELL_IDS, row

QUIET_CHEAP = ["We want somewhere quiet with outdoor seating, and cheap"]


def test_random_pick_is_the_sha256_order_of_seed_dialogue_turn_and_poi(cell_kb):
    r = row(QUIET_CHEAP, candidates=CELL_IDS)
    [pred] = RandomPickBaseline(cell_kb, seed=7)([r])

    def key(pid: str) -> int:  # recomputed here from the documented definition
        text = f"7:{r['dialogue_id']}:{r['turn_id']}:{pid}".encode()
        return int(hashlib.sha256(text).hexdigest()[:16], 16)

    assert pred["ranked_poi_ids"] == sorted(CELL_IDS, key=key, reverse=True)
    assert RandomPickBaseline(cell_kb, seed=8)([r]).__next__()["ranked_poi_ids"] != pred["ranked_poi_ids"]


def test_random_pick_is_session_isolated_and_drops_rejected(cell_kb):
    rows = [{**row(QUIET_CHEAP, candidates=CELL_IDS), "dialogue_id": f"d{i}"} for i in range(6)]
    pipe = RandomPickBaseline(cell_kb)
    alone = {p["dialogue_id"]: p["ranked_poi_ids"] for r in rows for p in pipe([r])}
    shuffled = rows[:]
    random.Random(1).shuffle(shuffled)
    together = {
        p["dialogue_id"]: p["ranked_poi_ids"] for p in RandomPickBaseline(cell_kb)(shuffled, batch_size=4)
    }
    assert alone == together
    [pred] = pipe([row(QUIET_CHEAP, candidates=CELL_IDS, rejected=("p_veg",))])
    assert "p_veg" not in pred["ranked_poi_ids"]
    with pytest.raises(ValueError, match="seed must be an integer >= 0"):
        RandomPickBaseline(cell_kb, seed=-1)


def test_contrary_ranks_first_what_the_stated_preferences_exclude(cell_kb):
    pipe = ContraryBaseline(cell_kb)
    [pred] = pipe([row(QUIET_CHEAP, candidates=CELL_IDS)])
    # Knowledge-Enh.'s shares (tests/baselines/non_llm/test_knowledge.py): p_veg 1, p_bbq 2/3, p_caf 2/3,
    # p_sea 1/3, p_sus 1/3; contrary = 1 - share, ties by the lowest TF-IDF
    scores = {
        p: s for p, (s, _) in pipe.score(pipe.preprocess(row(QUIET_CHEAP, candidates=CELL_IDS))).items()
    }
    assert scores == pytest.approx(
        {"p_veg": 0.0, "p_bbq": 1 / 3, "p_caf": 1 / 3, "p_sea": 2 / 3, "p_sus": 2 / 3}
    )
    assert set(pred["ranked_poi_ids"][:2]) == {"p_sea", "p_sus"} and pred["ranked_poi_ids"][-1] == "p_veg"


def test_registered_but_outside_every_loop():
    assert BASELINES["random_pick"] is RandomPickBaseline and BASELINES["contrary"] is ContraryBaseline
    assert not {"random_pick", "contrary"} & set(NON_LLM_BASELINES)
