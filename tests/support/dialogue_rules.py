"""The structural rules of a Trace dialogue (paper §2.2, App. G), checked by code independent of the
generator's own validate.py: `check_dialogue(record, kb)` raises AssertionError naming the first broken rule."""

from __future__ import annotations

import re

from trace_dataset.constants import (
    ACTION_ROLES,
    CITY_NAMES,
    PERSONA_TYPES,
    POI_TYPES,
    REJECTIONS_PER_TIER,
    SPLITS,
    TIERS,
)
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.quotes import span_checksum
from trace_dataset.schema import DIALOGUE_FEATURES

QUOTE = re.compile(r'"([^"]+)"\s\[R(\d+)\]')
ANY_DOUBLE_QUOTE = re.compile(r'["\u201c\u201d]')


def _keys(feature) -> list[str]:
    return list(feature)


def _item(feature):
    return feature[0] if isinstance(feature, list) else feature.feature


def check_dialogue(d: dict, kb: KnowledgeBase) -> None:
    f = DIALOGUE_FEATURES
    assert list(d) == _keys(f)
    assert list(d["scenario"]) == _keys(f["scenario"])
    assert list(d["metadata"]) == _keys(f["metadata"])
    turn_keys = _keys(_item(f["turns"]))
    assert re.fullmatch(r"crs_yelp_\d{5}", d["dialogue_id"])
    sc = d["scenario"]
    assert sc["persona_type"] in PERSONA_TYPES and sc["city"] in CITY_NAMES and sc["poi_type"] in POI_TYPES
    assert sc["difficulty"] in TIERS and sc["persona"] and sc["travel_context"]
    assert d["split"] in SPLITS
    turns = d["turns"]
    assert 6 <= len(turns) <= 12
    for i, t in enumerate(turns):
        assert list(t) == turn_keys
        assert t["turn_id"] == i
        assert t["role"] == ("user" if i % 2 == 0 else "system")
        assert ACTION_ROLES[t["action"]] == t["role"]
    assert turns[0]["action"] == "greet_and_seek"
    assert turns[-1]["role"] == "system" and turns[-1]["action"] == "farewell"
    actions = [t["action"] for t in turns]
    assert actions.count("ask_preference") >= 1 and actions.count("compare") >= 1
    rec = [t for t in turns if t["action"] in ("recommend", "compare")]
    assert len({p for t in rec for p in t["referenced_poi_ids"]}) >= 3
    lo, hi = REJECTIONS_PER_TIER[sc["difficulty"]]
    assert lo <= actions.count("reject_and_refine") <= hi
    # candidates and pools
    cands = d["candidate_poi_ids"]
    assert len(cands) == 8 == len(set(cands))
    same_cell = {p.business_id for p in kb.pois_in(sc["city"], sc["poi_type"])}
    assert set(d["open_set_poi_ids"]) == same_cell and len(d["open_set_poi_ids"]) == len(same_cell)
    assert set(cands) <= set(d["pool_16_poi_ids"]) <= set(d["pool_32_poi_ids"]) <= same_cell
    assert len(d["pool_16_poi_ids"]) == min(16, len(same_cell))
    assert len(d["pool_32_poi_ids"]) == min(32, len(same_cell))
    # rejections: reject the POI just recommended, and a recommendation follows
    for i, t in enumerate(turns):
        if t["action"] == "reject_and_refine":
            assert turns[i - 1]["action"] in ("recommend", "compare")
            assert t["referenced_poi_ids"] == turns[i - 1]["gold_poi_ids"]
            assert turns[i + 1]["action"] in ("recommend", "compare")
    # gold, alternatives, citations, quotes
    spans = d["quote_spans"]
    q = 0
    for t in turns:
        if t["action"] in ("recommend", "compare"):
            assert len(t["gold_poi_ids"]) == 1 and t["gold_poi_ids"][0] in t["referenced_poi_ids"]
            assert set(t["acceptable_alternative_poi_ids"]) <= set(cands) - set(t["gold_poi_ids"])
            if t["action"] == "compare":
                assert (
                    len(t["referenced_poi_ids"]) == 2 and t["referenced_poi_ids"][0] == t["gold_poi_ids"][0]
                )
            labels = {c["label"]: c for c in t["citations"]}
            assert [c["label"] for c in t["citations"]] == [f"R{k + 1}" for k in range(len(t["citations"]))]
            assert t["referenced_review_ids"] == [c["review_id"] for c in t["citations"]]
            quotes = QUOTE.findall(t["text"])
            assert quotes, t["text"]
            assert len(ANY_DOUBLE_QUOTE.findall(t["text"])) == 2 * len(quotes)  # no stray double quotes
            backed = set()
            for text, n in quotes:
                cit = labels[f"R{n}"]
                review = kb.reviews[cit["review_id"]]
                assert review.business_id == cit["business_id"]
                assert cit["business_id"] in t["referenced_poi_ids"]
                span = spans[q]
                assert span["quote_id"] == q + 1 and span["review_id"] == cit["review_id"]
                assert review.text[span["start"] : span["end"]] == text  # verbatim, at the stored offsets
                assert span["checksum"] == span_checksum(text)
                assert 4 <= len(text.split()) <= 20
                backed.add(cit["business_id"])
                q += 1
            assert backed == set(t["referenced_poi_ids"])  # every POI the turn names is quoted
        else:
            assert not t["gold_poi_ids"] and not t["acceptable_alternative_poi_ids"] and not t["citations"]
            assert not ANY_DOUBLE_QUOTE.search(t["text"])
    assert q == len(spans)
    assert d["metadata"]["backend"] == "template" and d["metadata"]["model"] == ""
    assert d["metadata"]["seed"] == 42 and d["metadata"]["kb_version"] == kb.version
