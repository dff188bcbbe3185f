"""Gold, alternatives, rejections and tiers recomputed from the constraints each dialogue states."""

from __future__ import annotations

import json
import logging

import pytest

from trace_dataset.constants import REJECTIONS_PER_TIER
from trace_dataset.generate.attempts import build_context, make_dialogue_with_plan
from trace_dataset.generate.difficulty import annotate
from trace_dataset.generate.index import build_profile
from trace_dataset.generate.preferences import satisfies, satisfies_all
from trace_dataset.kb.store import KnowledgeBase

N = 80


@pytest.fixture(scope="module")
def planned(fixture_kb):
    kb = KnowledgeBase.load(fixture_kb)
    ctx = build_context(kb, N, 42)
    out = []
    for i in range(N):
        result, plan = make_dialogue_with_plan(ctx, i)
        out.append((json.loads(result.line), plan))
    keys = {}  # evidence keys per POI, from a fresh profile
    for p in kb.pois.values():
        keys[p.business_id] = build_profile(p, kb).keys
    return kb, out, keys


def test_records_follow_their_plans(planned):
    _, out, _ = planned
    for d, plan in out:
        assert [t["action"] for t in d["turns"]] == [t.action for t in plan.turns]
        for t, pt in zip(d["turns"], plan.turns, strict=True):
            assert t["referenced_poi_ids"] == list(pt.pois)
            assert t["gold_poi_ids"] == list(pt.gold)
            assert t["acceptable_alternative_poi_ids"] == list(pt.alternatives)
        assert d["candidate_poi_ids"] == plan.candidates


def test_gold_satisfies_everything_stated_and_alternatives_are_exact(planned):
    kb, out, keys = planned
    with_alt = total = 0
    for d, plan in out:
        for pt in plan.turns:
            if pt.action not in ("recommend", "compare"):
                continue
            active = list(pt.active)
            gold = pt.gold[0]
            assert satisfies_all(kb.pois[gold], active, keys[gold]), (d["dialogue_id"], pt)
            assert gold not in pt.rejected
            expected = [
                p
                for p in plan.candidates
                if p != gold and p not in pt.rejected and satisfies_all(kb.pois[p], active, keys[p])
            ]
            assert list(pt.alternatives) == expected
            total += 1
            with_alt += bool(expected)
    assert 0 < with_alt < total


def test_each_rejection_adds_a_constraint_the_rejected_poi_violates(planned):
    kb, out, keys = planned
    seen_revision = False
    for _, plan in out:
        turns = plan.turns
        for k, pt in enumerate(turns):
            if pt.action != "reject_and_refine":
                continue
            rejected = pt.pois[0]
            assert rejected == turns[k - 1].gold[0]
            added = pt.stated
            assert len(added) == 1
            assert not satisfies(kb.pois[rejected], added[0], keys[rejected])
            nxt = turns[k + 1]
            assert satisfies_all(kb.pois[nxt.gold[0]], list(nxt.active), keys[nxt.gold[0]])
            assert added[0] in nxt.active
            if pt.revised:
                seen_revision = True
                old, new = pt.revised[0]
                assert old.kind == new.kind and old != new and old not in nxt.active
    assert seen_revision


def test_tier_label_matches_content(planned):
    _, out, _ = planned
    for d, plan in out:
        tier = d["scenario"]["difficulty"]
        assert annotate(plan.rejections, len(plan.stated), plan.conflict) == tier
        lo, hi = REJECTIONS_PER_TIER[tier]
        assert lo <= plan.rejections <= hi
        assert plan.conflict == (tier == "Expert")


def test_user_turns_state_each_constraint_in_words(planned):
    """Price words come from constants.PRICE_KEYWORDS; a location constraint names its landmark."""
    _, out, _ = planned
    for d, plan in out:
        for t, pt in zip(d["turns"], plan.turns, strict=True):
            for c in pt.stated:
                if c.kind == "price":
                    assert c.value in t["text"]
                if c.kind in ("location", "category"):
                    assert c.value in t["text"]


def test_small_cells_give_one_warning_line(fixture_kb, caplog):
    """A small knowledge base (every cell under 32 POIs, as the README's `--per-cell 9`) warns once, in one
    line."""
    with caplog.at_level(logging.WARNING, logger="trace_dataset.generate.attempts"):
        build_context(KnowledgeBase.load(fixture_kb), 4, 42)
    (record,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert record.getMessage() == (
        "6 of 6 city x type cells hold fewer than 32 POIs (14 POIs): pool_16 / "
        "pool_32 are capped at the cell size"
    )
