"""DST: the state merge, the filters (missing attributes, relaxation), the name matching, and the pipeline's
per-turn state in `meta` (with a scripted model: the extraction answers are given, the rest is deterministic)."""

from __future__ import annotations

import json

from baselines import pipeline
from baselines.llm.dst import DELTA_SCHEMA, DSTState, filter_candidates, merge, names_matching
from baselines.toolkit.constraints import CategoryMatcher
from tests.support.llm import ScriptedLLM
from trace_llm.jsonout import validation_errors

ALL = ["p_veg", "p_sea", "p_bbq", "p_caf", "p_thai"]


def matcher(kb) -> CategoryMatcher:
    return CategoryMatcher({c for p in kb.pois.values() for c in p.categories})


def test_merge_replaces_single_slots_and_accumulates_lists():
    s = merge(
        DSTState(),
        {
            "price_max": 3,
            "cuisine_likes": [" Thai ", "Vegan"],
            "features": ["Patio"],
            "noise": "quiet",
            "location": " Old  City ",
        },
    )
    assert (s.price_max, s.cuisine_likes, s.features, s.noise, s.location) == (
        3,
        ("thai", "vegan"),
        ("patio",),
        "quiet",
        "Old City",
    )
    s = merge(
        s,
        {
            "price_max": 2,
            "cuisine_avoids": ["thai"],
            "cuisine_likes": ["vegan", "bbq"],
            "noise": None,
            "location": "",
            "features": ["wifi", "patio"],
        },
    )
    assert s.price_max == 2 and s.noise == "quiet" and s.location == "Old City"  # null / empty say nothing
    assert s.cuisine_likes == ("vegan", "bbq") and s.cuisine_avoids == ("thai",)  # thai moved to avoids
    assert s.features == ("patio", "wifi")
    s = merge(s, {"rejected": ["Corner Cafe"], "accepted": ["Lotus Thai"]})
    s = merge(s, {"accepted": ["corner cafe"]})
    assert s.rejected == () and s.accepted == ("lotus thai", "corner cafe")
    assert merge(s, {}) == s


def test_state_dict_and_prompt_text():
    s = DSTState(price_max=2, cuisine_likes=("vegan",), noise="very_loud")
    assert s.to_dict()["cuisine_likes"] == ["vegan"] and s.to_dict()["price_max"] == 2
    assert s.describe() == "price: at most $$\nwants: vegan\nnoise: very loud"
    assert DSTState().describe() == "(nothing stated yet)"


def delta(**slots):
    """A full delta (every slot is required): nothing stated but `slots`."""
    empty = {k: [] for k in DELTA_SCHEMA["properties"]} | {"price_max": None, "noise": None, "location": None}
    return {**empty, **slots}


def test_delta_schema_accepts_nulls_and_rejects_bad_values():
    assert validation_errors(delta(), DELTA_SCHEMA) == []
    assert validation_errors(
        {}, DELTA_SCHEMA
    )  # every slot required: a constrained model writes the whole delta
    assert validation_errors(delta(price_max=5), DELTA_SCHEMA)
    assert validation_errors(delta(noise="silent"), DELTA_SCHEMA)
    assert validation_errors(delta(cuisine_name="thai"), DELTA_SCHEMA)  # not a slot: sent back for repair


def test_filters_price_cuisine_noise_features_and_missing_attributes(kb):
    m = matcher(kb)
    kept, notes = filter_candidates(kb, ALL, DSTState(price_max=2), m)
    assert kept == ["p_veg", "p_bbq", "p_caf", "p_thai"]  # p_sea is $$$
    assert filter_candidates(kb, ALL, DSTState(cuisine_likes=("thai", "vegan")), m)[0] == ["p_veg", "p_thai"]
    assert filter_candidates(kb, ALL, DSTState(cuisine_avoids=("seafood",)), m)[0] == [
        "p_veg",
        "p_bbq",
        "p_caf",
        "p_thai",
    ]
    # quiet -> quiet or average; p_caf has no noise attribute and passes (unknown is not a violation)
    assert filter_candidates(kb, ALL, DSTState(noise="quiet"), m)[0] == ["p_veg", "p_caf", "p_thai"]
    # only p_bbq is known to have outdoor seating; the others do not say, so they pass too
    assert filter_candidates(kb, ALL, DSTState(features=("outdoor seating",)), m)[0] == ALL
    kept, notes = filter_candidates(kb, ALL, DSTState(cuisine_likes=("klingon",)), m)
    assert kept == ALL and notes["unmatched"] == ["klingon"]


def test_a_filter_that_would_empty_the_pool_is_relaxed(kb):
    state = DSTState(price_max=1, cuisine_likes=("vegan",), noise="quiet")
    kept, notes = filter_candidates(kb, ALL, state, matcher(kb))
    # price leaves p_bbq and p_caf; "vegan" would leave nothing, so it is skipped; quiet then drops p_bbq
    assert kept == ["p_caf"] and notes == {"kept": 1, "relaxed": ["cuisine_likes"], "unmatched": []}


def test_rejected_names_match_pool_names(kb):
    assert names_matching(["harbor fish house"], ALL, kb) == ["p_sea"]
    assert names_matching(["the smoky pit bbq place"], ALL, kb) == ["p_bbq"]  # the name inside the words
    assert names_matching(["pit stop grill"], ALL, kb) == []  # neither contains the other
    assert names_matching(["cafe"], ALL, kb) == ["p_caf"]
    assert names_matching(["a"], ALL, kb) == []  # too short to name anything
    kept, _ = filter_candidates(kb, ALL, DSTState(rejected=("corner cafe",)), matcher(kb))
    assert "p_caf" not in kept


def test_pipeline_keeps_the_state_after_every_turn(kb):
    from trace_dataset.datadir import iter_dialogues
    from trace_dataset.views import turn_rows

    deltas = {
        "I want vegan food somewhere quiet.": delta(cuisine_likes=["vegan"], noise="quiet"),
        "Not Harbor Fish House, it is too loud for us.": delta(rejected=["Harbor Fish House"]),
    }

    def reply(conv):
        content = conv[-1]["content"]
        if '"price_max"' in content:
            message = content.split("The traveler's latest message: ")[1].split("\n")[0]
            return json.dumps(deltas[message])
        return "Green Leaf Kitchen is lovely [R1]."

    llm = ScriptedLLM(reply)
    pipe = pipeline("dst", kb=kb, llm=llm)
    d = next(iter_dialogues(kb.root.parent, "test"))
    first, second = list(pipe(turn_rows(d, "closed")))
    assert (
        first["meta"]["dst_state"]["cuisine_likes"] == ["vegan"]
        and first["meta"]["dst_state"]["noise"] == "quiet"
    )
    assert first["ranked_poi_ids"][0] == "p_veg"  # the only vegan place; the others follow by TF-IDF
    assert second["meta"]["dst_delta"] == delta(rejected=["Harbor Fish House"])
    assert second["meta"]["dst_state"]["rejected"] == ["harbor fish house"]
    assert second["citations"] == {"R1": "r_p_veg_0"} and "p_sea" not in second["ranked_poi_ids"]
    extractions = [c for c in llm.seen if '"price_max"' in c[-1]["content"]]
    assert len(extractions) == 2  # the first user turn is asked once for both rows (same request, one batch)
