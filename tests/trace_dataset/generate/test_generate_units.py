"""Small pieces: quotable spans, the copy guard, tier quotas, splits, personas, scenario assignment."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from trace_dataset.constants import PERSONA_TYPES, PERSONAS_PER_TYPE, POI_TYPES, TIERS
from trace_dataset.generate.copyguard import ReviewNgrams
from trace_dataset.generate.difficulty import annotate, tier_quota, tier_sequence
from trace_dataset.generate.index import quotable_spans
from trace_dataset.generate.personas import check_pools, personas
from trace_dataset.generate.scenario import assign, dialogue_id
from trace_dataset.generate.splits import assign_splits, split_counts


def test_quotable_spans_are_clause_sized_and_exact():
    text = (
        "We loved the rooftop pool and the staff were kind. Breakfast was fine; the coffee, however, was "
        "burnt and the eggs came out cold after a very long wait that seemed to go on forever and ever. "
        'Short one. He said "wow" loudly at the view.'
    )
    spans = quotable_spans(text)
    assert spans
    for s, e in spans:
        piece = text[s:e]
        assert 4 <= len(piece.split()) <= 20
        assert '"' not in piece and piece == piece.strip()
    assert (0, text.index(".")) in spans
    assert not any("Short one" in text[s:e] for s, e in spans)  # too short
    truncated = text[:60]
    assert all(e < len(truncated) - 1 for s, e in quotable_spans(truncated, truncated=True))


def test_copy_guard_finds_six_shared_words_outside_quotes():
    guard = ReviewNgrams(["The chef makes the best gumbo in town, honestly."])
    assert guard.copied("I hear the chef makes the best gumbo in town.") == [
        "the chef makes the best gumbo",
        "chef makes the best gumbo in",
        "makes the best gumbo in town",
    ]
    assert guard.copied('They say "the chef makes the best gumbo in town" [R1].') == []
    assert guard.copied("The chef makes great gumbo.") == []
    assert ReviewNgrams([]).copied("anything at all here in six words") == []


def test_tier_quota_matches_paper_shares():
    assert tier_quota(10000) == {"Easy": 2480, "Medium": 3480, "Hard": 3060, "Expert": 980}
    for n in (1, 7, 123, 1000, 9999):
        q = tier_quota(n)
        assert sum(q.values()) == n
        assert all(abs(q[t] - n * s) < 1 for t, s in zip(TIERS, (0.248, 0.348, 0.306, 0.098), strict=True))
    seq = tier_sequence(1000, 42)
    assert Counter(seq) == Counter(tier_quota(1000)) and seq == tier_sequence(1000, 42) != tier_sequence(
        1000, 1
    )


def test_annotate_rule():
    assert annotate(1, 3, False) == "Easy"
    assert annotate(1, 4, False) == "Medium"
    assert annotate(2, 4, False) == "Medium"
    assert annotate(2, 5, False) == "Hard"
    assert annotate(3, 6, True) == "Expert"


def test_split_counts_and_assignment():
    assert split_counts(10000) == {"train": 7000, "validation": 1500, "test": 1500}
    cells = [("A", "r")] * 100 + [("B", "h")] * 41
    splits = assign_splits(cells, 42)
    assert Counter(splits[:100]) == Counter({"train": 70, "validation": 15, "test": 15})
    assert splits == assign_splits(cells, 42) != assign_splits(cells, 43)


def test_persona_pools():
    check_pools()
    assert set(personas().archetypes) == set(PERSONA_TYPES) and len(personas().archetypes) == 47
    for t in POI_TYPES:
        assert len(personas().type_pools[t]) == PERSONAS_PER_TYPE == 38
    for a in personas().archetypes.values():
        assert a.contexts and a.intros and a.wants and a.voice in ("casual", "warm", "brisk", "formal")


def test_assignment_is_balanced_and_cycles_archetypes():
    cells = [(c, t) for c in ("Nashville", "Tampa") for t in POI_TYPES]
    a = assign(600, cells, 42)
    assert Counter((x.city, x.poi_type) for x in a) == Counter({c: 100 for c in cells})
    for t in POI_TYPES:
        seen = Counter(x.persona_type for x in a if x.poi_type == t)
        assert set(seen) == set(personas().type_pools[t]) and max(seen.values()) - min(seen.values()) <= 1
    assert a == assign(600, cells, 42)
    assert dialogue_id(0) == "crs_yelp_00001" and dialogue_id(9999) == "crs_yelp_10000"
    with pytest.raises(ValueError):
        assign(0, cells, 42)


def test_detail_modifiers_near_thirty_percent(fixture_dialogues):
    """30% of personas draw a modifier; it appears only when the dialogue states its constraint."""
    from trace_dataset.generate.personas import personas

    texts = [m.text for m in personas().modifiers]
    with_mod = sum(any(d["scenario"]["persona"].endswith(t) for t in texts) for d in fixture_dialogues)
    assert 0.05 < with_mod / len(fixture_dialogues) <= 0.4
    rng = random.Random(1)
    from trace_dataset.generate.scenario import pick_modifier

    draws = [
        pick_modifier("family", "restaurant", {m.want for m in personas().modifiers}, rng)
        for _ in range(4000)
    ]
    assert abs(sum(d is not None for d in draws) / 4000 - 0.30) < 0.03


def test_tidy_fixes_double_stops_outside_quotes_only():
    from trace_dataset.generate.template_backend import _join

    assert (
        _join(["Try Pizza Co..", 'One guest wrote "so good.." [R1].', ""])
        == 'Try Pizza Co. One guest wrote "so good.." [R1].'
    )
