"""`datasets.Features`: the single source of truth for every Trace record.

The builder, the release writer, the hydrator, the metric input checks and the submission validator all
read these definitions; nothing else spells out a field list. `to_json_schema`-style checks elsewhere
derive from these objects.
"""

from __future__ import annotations

from datasets import Features, Sequence, Value

_str = Value("string")
_ids = Sequence(Value("string"))

# ---------------------------------------------------------------------------------------------------
# Knowledge base
# ---------------------------------------------------------------------------------------------------
ATTRIBUTE_FEATURES = {
    "noise_level": _str,  # one of constants.NOISE_LEVELS or null
    "wifi": _str,  # constants.WIFI_VALUES or null
    "alcohol": _str,  # constants.ALCOHOL_VALUES or null
    "attire": _str,  # constants.ATTIRE_VALUES or null
    "outdoor_seating": Value("bool"),
    "good_for_kids": Value("bool"),
    "good_for_groups": Value("bool"),
    "reservations": Value("bool"),
    "takeout": Value("bool"),
    "delivery": Value("bool"),
    "wheelchair_accessible": Value("bool"),
    "dogs_allowed": Value("bool"),
    "happy_hour": Value("bool"),
    "has_tv": Value("bool"),
    "bike_parking": Value("bool"),
    "accepts_credit_cards": Value("bool"),
    "ambience": _ids,  # keys of constants.AMBIENCE_KEYS that are true
    "parking": _ids,  # keys of constants.PARKING_KEYS that are true
    "good_for_meal": _ids,  # keys of constants.MEAL_KEYS that are true
    "dietary": _ids,  # keys of constants.DIETARY_KEYS that are true
}

POI_FEATURES = Features(
    {
        "business_id": _str,
        "name": _str,
        "address": _str,
        "city": _str,  # canonical, constants.CITY_NAMES
        "state": _str,
        "latitude": Value("float64"),
        "longitude": Value("float64"),
        "categories": _ids,
        "stars": Value("float64"),
        "review_count": Value("int64"),
        "price": Value("int64"),  # 1..4 or null
        "attributes": ATTRIBUTE_FEATURES,
        "poi_type": _str,  # constants.POI_TYPES
        "review_ids": _ids,  # the reviews kept in the knowledge base, in KB order
    }
)

REVIEW_INDEX_FEATURES = Features(
    {
        "review_id": _str,
        "business_id": _str,
        "stars": Value("float64"),
        "date": _str,
        "length": Value("int64"),  # characters (code points) of the ORIGINAL review text
    }
)

REVIEW_FEATURES = Features(
    {
        "review_id": _str,
        "business_id": _str,
        "stars": Value("float64"),
        "date": _str,
        "text": _str,  # truncated to constants.REVIEW_MAX_CHARS; a prefix, so offsets equal the original's
    }
)

# ---------------------------------------------------------------------------------------------------
# Dialogues
# ---------------------------------------------------------------------------------------------------
SCENARIO_FEATURES = {
    "persona_type": _str,  # constants.PERSONA_TYPES
    "persona": _str,  # the persona description shown to the user simulator
    "travel_context": _str,
    "city": _str,
    "poi_type": _str,
    "difficulty": _str,  # constants.TIERS
}

CITATION_FEATURES = {"label": _str, "review_id": _str, "business_id": _str}

TURN_FEATURES = {
    "turn_id": Value("int32"),  # 0-based position in the dialogue
    "role": _str,  # constants.ROLES
    "action": _str,  # constants.ACTIONS
    "text": _str,
    "referenced_poi_ids": _ids,
    "referenced_review_ids": _ids,
    "gold_poi_ids": _ids,  # recommend/compare turns: the POI the reference system recommends
    "acceptable_alternative_poi_ids": _ids,  # other candidates that satisfy every stated constraint
    "citations": [CITATION_FEATURES],  # label "R1".. in the order they appear in the text
}

QUOTE_SPAN_FEATURES = {
    "quote_id": Value("int32"),  # N of the [Q:N] placeholder, 1-based, in order of appearance
    "review_id": _str,
    "start": Value("int32"),  # character offsets into the ORIGINAL review text
    "end": Value("int32"),
    "checksum": _str,  # trace_dataset.quotes.span_checksum(span)
}

METADATA_FEATURES = {
    "generator": _str,
    "backend": _str,  # "template" | "llm"
    "model": _str,  # "" for the template backend
    "seed": Value("int64"),
    "kb_version": _str,
}

DIALOGUE_FEATURES = Features(
    {
        "dialogue_id": _str,  # crs_yelp_00001
        "split": _str,
        "scenario": SCENARIO_FEATURES,
        "candidate_poi_ids": _ids,
        "pool_16_poi_ids": _ids,
        "pool_32_poi_ids": _ids,
        "open_set_poi_ids": _ids,
        "turns": [TURN_FEATURES],
        "quote_spans": [QUOTE_SPAN_FEATURES],
        "metadata": METADATA_FEATURES,
    }
)

# ---------------------------------------------------------------------------------------------------
# The `turns` view: one row per system turn, what a baseline consumes.
# ---------------------------------------------------------------------------------------------------
HISTORY_TURN_FEATURES = {
    "turn_id": Value("int32"),
    "role": _str,
    "action": _str,
    "text": _str,
    "referenced_poi_ids": _ids,
}

TURN_ROW_FEATURES = Features(
    {
        "dialogue_id": _str,
        "turn_id": Value("int32"),
        "split": _str,
        "action": _str,  # the reference system action the system must perform at this turn
        "scenario": SCENARIO_FEATURES,
        "pool": _str,  # constants.POOLS
        "history": [HISTORY_TURN_FEATURES],  # every earlier turn, reference text
        "candidate_poi_ids": _ids,  # the candidate pool of `pool`
        "rejected_poi_ids": _ids,  # POIs the user rejected before this turn
        "gold_poi_ids": _ids,
        "acceptable_alternative_poi_ids": _ids,
        "reference_text": _str,  # the reference system response (text metrics)
        "reference_poi_ids": _ids,
    }
)

# ---------------------------------------------------------------------------------------------------
# Predictions: one JSON line per evaluated system turn, the record `trace_dataset.prediction.Prediction`
# (whose fields are these, in this order, then `meta`; tests/trace_dataset/test_prediction.py ties them).
#   {"dialogue_id": ..., "turn_id": 3, "ranked_poi_ids": [...], "response": "...",
#    "citations": {"R1": "<review_id>", ...}, "meta": {...optional, free-form, ignored by metrics}}
# In Features form `citations` is a list of {label, review_id} (Arrow has no free-keyed maps).
# ---------------------------------------------------------------------------------------------------
PREDICTION_FEATURES = Features(
    {
        "dialogue_id": _str,
        "turn_id": Value("int32"),
        "ranked_poi_ids": _ids,
        "response": _str,
        "citations": [{"label": _str, "review_id": _str}],
    }
)
PREDICTION_REQUIRED_FIELDS: tuple[str, ...] = tuple(PREDICTION_FEATURES)
PREDICTION_OPTIONAL_FIELDS: tuple[str, ...] = ("meta",)
