"""A tiny Trace data directory for the LLM baseline tests, and scripted replies for the parts that are not the
model (the scripted model itself is tests/support/llm.py).

Knowledge base: five Philadelphia restaurants with short made-up reviews (each review has a sentence of ten or
more words, for RAG-Citation's quote check), and a hotel and an attraction within 500 m of the first one (for
Itinerary-LLM's proximity graph). Dialogues: one in the test split, two in validation, one in train, all of the
same persona type (for Memory-Aug.'s memory); each has two system turns (recommend, compare) after a greeting
and a rejection. The first validation dialogue says what the test dialogue says (its requests are the test
dialogue's, served by the response cache). Pools: the closed pool and the open set are the same four
restaurants (so the open runs of the slow tests reuse the closed runs' answers where the prompt is the same);
pool_16 / pool_32 hold all five restaurants. The model-heavy tests stay small because this machine is shared.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import tests.support.kb as fixture_kb
from tests.support.kb import poi, turn

KB_VERSION = "kb-llm-test-1"

POIS = [
    poi(
        "p_veg",
        "Green Leaf Kitchen",
        lat=39.9496,
        lon=-75.1718,
        stars=4.5,
        categories=("Vegan", "Restaurants"),
        attributes={"noise_level": "quiet"},
    ),
    poi(
        "p_sea",
        "Harbor Fish House",
        lat=39.9522,
        lon=-75.1440,
        price=3,
        categories=("Seafood", "Restaurants"),
        attributes={"noise_level": "loud"},
    ),
    poi(
        "p_bbq",
        "Smoky Pit BBQ",
        lat=39.9710,
        lon=-75.1340,
        stars=4.5,
        price=1,
        categories=("Barbeque", "Restaurants"),
        attributes={"noise_level": "very_loud", "outdoor_seating": True},
    ),
    poi(
        "p_caf",
        "Corner Cafe",
        lat=39.9656,
        lon=-75.1810,
        stars=3.0,
        price=1,
        categories=("Cafes", "Restaurants"),
    ),
    poi(
        "p_thai",
        "Lotus Thai",
        lat=39.9480,
        lon=-75.1600,
        stars=4.0,
        categories=("Thai", "Restaurants"),
        attributes={"noise_level": "average"},
    ),
    poi("h_inn", "Rittenhouse Inn", lat=39.9500, lon=-75.1722, poi_type="hotel", categories=("Hotels",)),
    poi("a_mus", "Square Museum", lat=39.9490, lon=-75.1710, poi_type="attraction", categories=("Museums",)),
]
REVIEWS = {
    "p_veg": [("The vegan bowls are fresh and the quiet back room is perfect for a long talk.", 5.0)],
    "p_sea": [("Fresh oysters every night but the dining room gets very loud after eight o'clock.", 4.0)],
    "p_bbq": [("Smoky brisket and cold beer on a big patio with loud music every single weekend.", 4.0)],
    "p_caf": [("A small cafe with decent coffee and pastries that were a little stale this morning.", 3.0)],
    "p_thai": [
        ("Spicy green curry and friendly staff make this thai place a calm dinner spot downtown.", 4.0)
    ],
    "h_inn": [("Clean rooms near the square and a helpful front desk that booked our dinner table.", 4.0)],
    "a_mus": [
        ("A quiet museum with colonial history rooms and very kind volunteer guides on weekends.", 5.0)
    ],
}
CLOSED = ["p_veg", "p_sea", "p_bbq", "p_caf"]
WIDE = ["p_veg", "p_sea", "p_bbq", "p_caf", "p_thai"]

WISHES = [
    ("I want vegan food somewhere quiet.", "Not Harbor Fish House, it is too loud for us."),
    ("I want vegan food somewhere quiet.", "Not Harbor Fish House, it is too loud for us."),
    ("A calm dinner spot with spicy food, please.", "No, Smoky Pit BBQ is far too loud."),
    ("Looking for cheap barbecue with a patio.", "Corner Cafe is not it, we want smoky meat."),
]


def dialogue(i: int, split: str) -> dict[str, Any]:
    first, reject = WISHES[i % len(WISHES)]
    turns = [
        turn(0, "user", "greet_and_seek", first),
        turn(1, "system", "recommend", "Try Harbor Fish House.", refs=("p_sea",), gold=("p_veg",)),
        turn(2, "user", "reject_and_refine", reject, refs=("p_sea",)),
        turn(
            3,
            "system",
            "compare",
            "Green Leaf Kitchen or Corner Cafe?",
            refs=("p_veg", "p_caf"),
            gold=("p_veg",),
        ),
    ]
    return fixture_kb.dialogue(
        f"crs_yelp_{i + 1:05d}",
        turns,
        CLOSED,
        split=split,
        pool_16=WIDE,
        pool_32=WIDE,
        open_set=CLOSED,
        kb_version=KB_VERSION,
    )


def write_data_dir(root: Path) -> Path:
    """test: 1 dialogue; validation: 2; train: 1."""
    layout = {"train": [3], "validation": [1, 2], "test": [0]}
    dialogues = [dialogue(i, split) for split, ids in layout.items() for i in ids]
    return fixture_kb.write_data_dir(
        root, dialogues, POIS, REVIEWS, kb_version=KB_VERSION, corpus_version="corpus-llm-test-1"
    )


def ranking_reply(labels: tuple[str, ...] = ("P2", "P1"), response: str = "I suggest P2.") -> Callable:
    """A reply that ranks `labels` on ranking requests and otherwise answers `response` (JSON or text)."""

    def reply(conv: list[dict[str, str]]) -> str:
        last = conv[-1]["content"]
        if '"ranked_ids"' in last:
            return json.dumps({"ranked_ids": list(labels), "response": response})
        if '"response"' in last:
            return json.dumps({"response": response})
        if '"price_max"' in last:  # a DST delta stating nothing (every slot is required)
            return json.dumps(
                {
                    "price_max": None,
                    "cuisine_likes": [],
                    "cuisine_avoids": [],
                    "ambience": [],
                    "noise": None,
                    "features": [],
                    "location": None,
                    "rejected": [],
                    "accepted": [],
                }
            )
        return response

    return reply


class WordEncoder:
    """A stand-in sentence encoder (presence of a few words), for plumbing tests that need no real embedding
    model; `calls` counts the texts it encoded. Memory-Aug.'s real one is the packaged all-MiniLM-L6-v2."""

    WORDS = (
        "vegan",
        "quiet",
        "oysters",
        "brisket",
        "barbecue",
        "patio",
        "coffee",
        "curry",
        "spicy",
        "loud",
        "fresh",
        "calm",
        "cheap",
    )

    def __init__(self) -> None:
        self.calls = 0

    def get_sentence_embedding_dimension(self) -> int:
        return len(self.WORDS)

    def encode(self, texts, **kwargs):
        self.calls += len(texts)
        out = np.array([[float(w in t.lower()) for w in self.WORDS] for t in texts], dtype=np.float32) + 1e-3
        return out / np.linalg.norm(out, axis=1, keepdims=True)
