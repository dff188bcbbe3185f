"""The one definition of every constant Trace shares across packages.

Numbers come from the Trace paper (arXiv 2605.07677); the section is named next to each. Anything a
metric, a baseline, the generator and the Space must agree on lives here, so that changing it changes
it everywhere.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from trace_bench import SEED as SEED  # defined once, in the kernel (the LLM layer needs it too)

# ---------------------------------------------------------------------------------------------------
# Seeds and versions
# ---------------------------------------------------------------------------------------------------
SCHEMA_VERSION = "1.0"


# ---------------------------------------------------------------------------------------------------
# Cities (§2.1, App. H): canonical name -> state and centre; aliases map Yelp's spellings.
# ---------------------------------------------------------------------------------------------------
class City(NamedTuple):
    name: str
    state: str
    latitude: float
    longitude: float


CITIES: dict[str, City] = {
    c.name: c
    for c in (
        City("Indianapolis", "IN", 39.7684, -86.1581),
        City("Nashville", "TN", 36.1627, -86.7816),
        City("New Orleans", "LA", 29.9511, -90.0715),
        City("Philadelphia", "PA", 39.9526, -75.1652),
        City("Reno", "NV", 39.5296, -119.8138),
        City("Saint Louis", "MO", 38.6270, -90.1994),
        City("Tampa", "FL", 27.9506, -82.4572),
        City("Tucson", "AZ", 32.2226, -110.9747),
    )
}
CITY_NAMES: tuple[str, ...] = tuple(CITIES)

# Lower-cased, whitespace-collapsed spelling -> canonical city. Yelp writes the same city many ways.
CITY_ALIASES: dict[str, str] = {
    **{name.lower(): name for name in CITIES},
    "st. louis": "Saint Louis",
    "st louis": "Saint Louis",
    "st.louis": "Saint Louis",
    "saint louis": "Saint Louis",
    "tampa bay": "Tampa",
    "new orleans": "New Orleans",
    "nola": "New Orleans",
    "phila": "Philadelphia",
    "philly": "Philadelphia",
    "indianapolis": "Indianapolis",
    "nashville-davidson": "Nashville",
}

# ---------------------------------------------------------------------------------------------------
# POI types (§2.1, Table 3)
# ---------------------------------------------------------------------------------------------------
PoiType = Literal["restaurant", "hotel", "attraction"]
POI_TYPES: tuple[str, ...] = ("restaurant", "hotel", "attraction")

# ---------------------------------------------------------------------------------------------------
# Knowledge base (§2.1, App. D)
# ---------------------------------------------------------------------------------------------------
KB_PER_CELL = 100  # 8 cities x 3 types x 100 = 2,400 POIs
KB_MIN_REVIEWS = 3  # App. D: "POIs were filtered to require a minimum of 3 reviews"
KB_TARGET_REVIEWS_PER_POI = 34_208 / 2_400  # Table 3: 34,208 reviews, avg. 14.3 / POI
REVIEW_MAX_CHARS = 500  # App. D: "Reviews were truncated to 500 characters"
PRICE_LEVELS = (1, 2, 3, 4)  # $ .. $$$$ (Yelp's RestaurantsPriceRange2)

# ---------------------------------------------------------------------------------------------------
# Dialogue actions (§2.2, App. G). Role of each action; the one vocabulary everything uses.
# ---------------------------------------------------------------------------------------------------
Role = Literal["user", "system"]
ROLES: tuple[str, ...] = ("user", "system")

ACTION_ROLES: dict[str, str] = {
    "greet_and_seek": "user",  # the user opens every dialogue
    "provide_preference": "user",  # the user states (more) preferences
    "reject_and_refine": "user",  # the user rejects the last recommendation and adds a constraint
    "accept": "user",  # the user accepts a recommendation
    "ask_preference": "system",  # the system elicits a preference
    "recommend": "system",  # the system recommends POI(s) with quoted evidence
    "compare": "system",  # the system compares POIs with quoted evidence
    "farewell": "system",  # the system closes every dialogue
}
ACTIONS: tuple[str, ...] = tuple(ACTION_ROLES)
USER_ACTIONS: tuple[str, ...] = tuple(a for a, r in ACTION_ROLES.items() if r == "user")
SYSTEM_ACTIONS: tuple[str, ...] = tuple(a for a, r in ACTION_ROLES.items() if r == "system")
RECOMMENDATION_ACTIONS: tuple[str, ...] = ("recommend", "compare")  # accuracy + grounding turns
REJECTION_ACTION = "reject_and_refine"
OPENING_ACTION = "greet_and_seek"
CLOSING_ACTION = "farewell"

# ---------------------------------------------------------------------------------------------------
# Dialogue shape and difficulty (§2.2, App. G, Table 3)
# ---------------------------------------------------------------------------------------------------
GENERATOR_BACKENDS: tuple[str, ...] = ("template", "llm")  # how stage 3 writes a dialogue's text (App. C)
# the llm backend: what a dialogue the model keeps failing gets (the template text of its plan, or a stop),
# and the reply budget of one answer (a whole dialogue as JSON)
LLM_FALLBACKS: tuple[str, ...] = ("template", "error")
LLM_MAX_NEW_TOKENS = 3072
MIN_TURNS, MAX_TURNS = 6, 12
MIN_DISTINCT_RECOMMENDED = 3
CANDIDATES_PER_DIALOGUE = 8
TIERS: tuple[str, ...] = ("Easy", "Medium", "Hard", "Expert")
TIER_SHARES: dict[str, float] = {"Easy": 0.248, "Medium": 0.348, "Hard": 0.306, "Expert": 0.098}
# reject_and_refine turns per tier: (min, max) inclusive
REJECTIONS_PER_TIER: dict[str, tuple[int, int]] = {
    "Easy": (1, 1),
    "Medium": (1, 2),
    "Hard": (2, 2),
    "Expert": (2, 3),
}
COPIED_WORDS_LIMIT = 6  # App. D: authored text never repeats this many consecutive words of a review
QUOTE_MATCH_THRESHOLD = 0.80  # §2.2 / App. J: per-quote rapidfuzz partial_ratio >= 80 (as a fraction)
DETAIL_MODIFIER_PROBABILITY = 0.30  # App. I

# ---------------------------------------------------------------------------------------------------
# Splits and candidate pools (§2.1, §2.2, App. P, Q)
# ---------------------------------------------------------------------------------------------------
SPLITS: tuple[str, ...] = ("train", "validation", "test")
# `--split all`: every split at once, the paper's full-corpus headline (runs, evaluation, leaderboard)
ALL_SPLITS = "all"


def resolve_splits(split: str) -> tuple[str, ...]:
    """The split files a `--split` value names: one split, or every split for "all"."""
    if split == ALL_SPLITS:
        return SPLITS
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {(*SPLITS, ALL_SPLITS)}")
    return (split,)


SPLIT_SHARES: dict[str, float] = {"train": 0.70, "validation": 0.15, "test": 0.15}
Pool = Literal["closed", "pool_16", "pool_32", "open"]
POOLS: tuple[str, ...] = ("closed", "pool_16", "pool_32", "open")
# dialogue field that holds each pool's candidate ids
POOL_FIELDS: dict[str, str] = {
    "closed": "candidate_poi_ids",
    "pool_16": "pool_16_poi_ids",
    "pool_32": "pool_32_poi_ids",
    "open": "open_set_poi_ids",
}
POOL_SIZES: dict[str, int | None] = {"closed": 8, "pool_16": 16, "pool_32": 32, "open": None}

# ---------------------------------------------------------------------------------------------------
# Personas (App. I): the 47 archetypes, alphabetical as the paper lists them.
# ---------------------------------------------------------------------------------------------------
PERSONA_TYPES: tuple[str, ...] = (
    "accessibility_needs",
    "architecture_buff",
    "brunch_enthusiast",
    "budget_traveler",
    "business",
    "celebration",
    "conference_attendee",
    "couple",
    "date_night",
    "dietary_restricted",
    "digital_nomad",
    "eco_tourist",
    "eco_traveler",
    "event_group",
    "event_planner",
    "extended_stay",
    "family",
    "fitness_traveler",
    "food_explorer",
    "foodie_explorer",
    "friends_group",
    "group_event",
    "health_conscious",
    "history_buff",
    "international_tourist",
    "late_night",
    "layover_traveler",
    "local_experience",
    "luxury_couple",
    "luxury_traveler",
    "medical_traveler",
    "music_lover",
    "nightlife_seeker",
    "pet_owner",
    "relocation",
    "remote_worker",
    "road_tripper",
    "senior",
    "solo_traveler",
    "sports_fan",
    "street_art_seeker",
    "thrill_seeker",
    "traveling_nurse",
    "urban_explorer",
    "volunteer_tourist",
    "wellness_seeker",
    "wine_enthusiast",
)
PERSONAS_PER_TYPE = 38  # App. I: "POI-type-specific persona pools (38 per type)"

# ---------------------------------------------------------------------------------------------------
# Budget words -> price ceiling (§3 "Price Alignment"). The generator states budgets with these words
# and the price-alignment metric reads them back, so both use this table.
# ---------------------------------------------------------------------------------------------------
PRICE_KEYWORDS: dict[str, int] = {
    "budget": 2,
    "cheap": 2,
    "affordable": 2,
    "moderate": 3,
    "mid-range": 3,
    "luxury": 4,
    "upscale": 4,
}

# ---------------------------------------------------------------------------------------------------
# Negation: a mention with a negator among the NEGATION_WINDOW words before it states nothing ("no kids",
# "don't need parking", "lacks a patio"); where a reader's words keep their apostrophe, any word ending in
# "n't" is a negator too. NEGATORS is the one list; what each reader adds to it is here and nowhere else.
# The additions are the words each reader was written and measured with: unifying them changes outputs (which
# POIs a generated corpus marks gold, the baselines' rows), so that is a change of its own, not a tidy-up.
# ---------------------------------------------------------------------------------------------------
NEGATION_WINDOW = 3
NEGATORS: frozenset[str] = frozenset({"no", "not", "never", "without"})
# Review evidence for the generator's constraint predicate (generate/preferences): reviewers write "lacks a
# patio", "zero atmosphere", "hardly quiet", "nothing romantic about it".
REVIEW_NEGATORS: frozenset[str] = NEGATORS | {
    "nothing",
    "none",
    "lack",
    "lacks",
    "lacking",
    "lacked",
    "hardly",
    "barely",
    "zero",
    "cannot",
}
# A user's stated wishes (baselines.toolkit.constraints): "nor", and "dont" / "t" for "don't" typed without
# its apostrophe or with a space.
WISH_NEGATORS: frozenset[str] = NEGATORS | {"nor", "dont", "t"}
# The sentiment of a clause (baselines.toolkit.aspect), over the shared tokeniser's tokens: it splits "don't"
# into "don" "t", so there is no "n't" test and "t" stands for it.
SENTIMENT_NEGATORS: frozenset[str] = NEGATORS | {
    "nothing",
    "nor",
    "neither",
    "hardly",
    "barely",
    "cannot",
    "t",
}
# A user clause that negates anything is no query snippet of SnipRec's rules extractor (baselines.sniprec).
CLAUSE_NEGATORS: frozenset[str] = NEGATORS | {
    "nothing",
    "nobody",
    "no one",
    "lack",
    "lacks",
    "lacking",
    "missing",
}

# ---------------------------------------------------------------------------------------------------
# Aspect inventory for Provenance Coverage (App. J, Algorithm 1): 41 terms in the paper's four families.
# The paper's own list is in its released code, not in the paper; this is our hand-curated list with the
# paper's named examples (seafood, vegan, breakfast / quiet, cozy, romantic / parking, wifi, outdoor seating /
# cheap, upscale, family-friendly) included.
# ---------------------------------------------------------------------------------------------------
ASPECT_FAMILIES: dict[str, tuple[str, ...]] = {
    "food_menu": (
        "seafood",
        "vegan",
        "vegetarian",
        "gluten-free",
        "breakfast",
        "brunch",
        "dessert",
        "pizza",
        "sushi",
        "tacos",
        "steak",
        "cocktails",
    ),
    "ambience_style": (
        "quiet",
        "cozy",
        "romantic",
        "lively",
        "casual",
        "elegant",
        "trendy",
        "intimate",
        "loud",
        "views",
    ),
    "logistics": (
        "parking",
        "wifi",
        "outdoor seating",
        "reservations",
        "wheelchair",
        "walkable",
        "pool",
        "gym",
        "shuttle",
        "pet-friendly",
        "late-night",
    ),
    "value_price": (
        "cheap",
        "affordable",
        "expensive",
        "upscale",
        "budget",
        "value",
        "family-friendly",
        "luxury",
    ),
}
ASPECT_TERMS: tuple[str, ...] = tuple(t for terms in ASPECT_FAMILIES.values() for t in terms)

# ---------------------------------------------------------------------------------------------------
# Canonical POI attributes (the typed subset of Yelp's `attributes` the generator, the baselines and the
# metrics use). Enumerations list the allowed string values.
# ---------------------------------------------------------------------------------------------------
NOISE_LEVELS: tuple[str, ...] = ("quiet", "average", "loud", "very_loud")
WIFI_VALUES: tuple[str, ...] = ("free", "paid", "no")
ALCOHOL_VALUES: tuple[str, ...] = ("none", "beer_and_wine", "full_bar")
ATTIRE_VALUES: tuple[str, ...] = ("casual", "dressy", "formal")
AMBIENCE_KEYS: tuple[str, ...] = (
    "romantic",
    "intimate",
    "classy",
    "hipster",
    "divey",
    "touristy",
    "trendy",
    "upscale",
    "casual",
)
PARKING_KEYS: tuple[str, ...] = ("garage", "street", "validated", "lot", "valet")
MEAL_KEYS: tuple[str, ...] = ("dessert", "latenight", "lunch", "dinner", "brunch", "breakfast")
DIETARY_KEYS: tuple[str, ...] = (
    "dairy-free",
    "gluten-free",
    "vegan",
    "kosher",
    "halal",
    "soy-free",
    "vegetarian",
)
BOOL_ATTRIBUTES: tuple[str, ...] = (
    "outdoor_seating",
    "good_for_kids",
    "good_for_groups",
    "reservations",
    "takeout",
    "delivery",
    "wheelchair_accessible",
    "dogs_allowed",
    "happy_hour",
    "has_tv",
    "bike_parking",
    "accepts_credit_cards",
)

# ---------------------------------------------------------------------------------------------------
# Yelp Open Dataset file names (the extracted bundle)
# ---------------------------------------------------------------------------------------------------
YELP_BUSINESS_FILE = "yelp_academic_dataset_business.json"
YELP_REVIEW_FILE = "yelp_academic_dataset_review.json"

# ---------------------------------------------------------------------------------------------------
# On-disk layout of a Trace data directory (a generated corpus, a release, or a hydrated release)
# ---------------------------------------------------------------------------------------------------
KB_DIRNAME = "knowledge_base"
DATA_DIRNAME = "data"
POIS_FILE = "pois.jsonl.gz"
REVIEW_INDEX_FILE = "review_index.jsonl.gz"
REVIEWS_FILE = "reviews.jsonl.gz"  # local only: never part of a release
KB_META_FILE = "kb.json"
CORPUS_META_FILE = "corpus.json"
INTERACTIVE_FILE = "interactive.jsonl.gz"  # live conversations of `trace-bench interact`, under data/
# One prediction row (a JSON line) at most: what `trace-bench submit` and the Space accept, and what a run
# checks when it writes; real rows are a few KB (a response, 3-10 POI ids, citations)
MAX_PREDICTION_LINE_BYTES = 1 << 20
OFFICIAL_HUB_DATASET = "taoist/TRACE"

# ---------------------------------------------------------------------------------------------------
# Location anchors (App. F Spatial baseline: "keyword matching for location references in dialogue,
# fallback to city centroid"). The generator names these in user turns; the Spatial baseline and the
# Itinerary baseline detect them. Coordinates are approximate public landmark locations.
# ---------------------------------------------------------------------------------------------------
CITY_LANDMARKS: dict[str, dict[str, tuple[float, float]]] = {
    "Indianapolis": {
        "Monument Circle": (39.7684, -86.1581),
        "Lucas Oil Stadium": (39.7601, -86.1639),
        "Mass Ave": (39.7747, -86.1489),
        "Fountain Square": (39.7507, -86.1400),
        "White River State Park": (39.7670, -86.1700),
    },
    "Nashville": {
        "Lower Broadway": (36.1610, -86.7770),
        "the Gulch": (36.1527, -86.7890),
        "East Nashville": (36.1780, -86.7500),
        "Music Row": (36.1490, -86.7920),
        "Vanderbilt": (36.1447, -86.8027),
    },
    "New Orleans": {
        "the French Quarter": (29.9584, -90.0644),
        "the Garden District": (29.9285, -90.0840),
        "Frenchmen Street": (29.9640, -90.0578),
        "the Warehouse District": (29.9430, -90.0690),
        "City Park": (29.9930, -90.0980),
    },
    "Philadelphia": {
        "Old City": (39.9522, -75.1440),
        "Rittenhouse Square": (39.9496, -75.1718),
        "Center City": (39.9526, -75.1652),
        "Fishtown": (39.9710, -75.1340),
        "the Art Museum": (39.9656, -75.1810),
    },
    "Reno": {
        "the Riverwalk": (39.5250, -119.8140),
        "Midtown": (39.5130, -119.8100),
        "the University of Nevada": (39.5440, -119.8150),
        "Virginia Street": (39.5280, -119.8130),
        "the Reno Arch": (39.5296, -119.8138),
    },
    "Saint Louis": {
        "the Gateway Arch": (38.6247, -90.1848),
        "Forest Park": (38.6368, -90.2850),
        "Soulard": (38.6080, -90.2080),
        "the Central West End": (38.6440, -90.2560),
        "the Delmar Loop": (38.6560, -90.3050),
    },
    "Tampa": {
        "Ybor City": (27.9600, -82.4370),
        "the Tampa Riverwalk": (27.9470, -82.4600),
        "Hyde Park": (27.9390, -82.4760),
        "Channelside": (27.9430, -82.4510),
        "Tampa International Airport": (27.9755, -82.5332),
    },
    "Tucson": {
        "the University of Arizona": (32.2319, -110.9501),
        "Fourth Avenue": (32.2270, -110.9640),
        "Congress Street": (32.2216, -110.9730),
        "Sabino Canyon": (32.3100, -110.8220),
        "Armory Park": (32.2150, -110.9680),
    },
}

# A result whose answers were not made by the system itself (fallbacks, failed agent calls, missing ratings) on
# more than this share is marked as not the system's own in every table that shows it (docs/llm.md).
NOT_OWN_SHARE = 0.10
