"""Small knowledge bases and dialogues for the SnipRec tests (a uniquely named module, so that
`from sniprec_helpers import ...` cannot pick up another test folder's helpers); the builders are
tests/support/kb.py's."""

from __future__ import annotations

import zlib
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

import tests.support.kb as fixture_kb
from tests.support.kb import CELL_REVIEWS, turn

__all__ = [
    "CANDIDATES",
    "POIS",
    "REVIEWS",
    "dialogue",
    "poi",
    "sample_dialogues",
    "turn",
    "write_data_dir",
    "write_kb",
]

KB_VERSION = "sniprec-test-1"

poi = partial(fixture_kb.poi, lat=39.95, lon=-75.16)

POIS = [
    poi(
        "p_sea",
        "Harbor Fish House",
        categories=("Restaurants", "Seafood"),
        attributes={"noise_level": "loud"},
    ),
    poi(
        "p_veg",
        "Green Leaf Kitchen",
        categories=("Restaurants", "Vegan"),
        stars=4.5,
        attributes={"ambience": ["romantic", "quiet"], "good_for_kids": False},
    ),
    poi(
        "p_bbq", "Smoky Pit BBQ", categories=("Restaurants", "Barbecue"), attributes={"outdoor_seating": True}
    ),
    poi("p_caf", "Corner Cafe", categories=("Restaurants", "Cafes"), stars=3.0, price=1),
]
# The shared cell's reviews, four of them longer: a POI's name, a semicolon, a line break, a clause to cut.
REVIEWS = {
    **CELL_REVIEWS,
    "p_sea": [
        ("Fresh seafood and oysters every night. The lobster roll at Harbor Fish House was perfect.", 5.0),
        ("Service was slow but the fish tacos were great. Parking is hard nearby; bring cash.", 3.0),
    ],
    "p_veg": [
        CELL_REVIEWS["p_veg"][0],
        (
            "Vegetarian menu with gluten-free options. A little pricey for lunch, though the reviewer loved it.",
            4.0,
        ),
    ],
    "p_bbq": [
        CELL_REVIEWS["p_bbq"][0],
        ("Good barbecue and cold beer.\nOutdoor seating on the patio, and the staff are friendly.", 4.0),
    ],
}


def write_kb(root: Path, pois: list[dict] = POIS, reviews: dict = REVIEWS, version: str = KB_VERSION) -> Path:
    return fixture_kb.write_kb(root, pois, reviews, version=version)


def dialogue(did: str, turns: list[dict], candidates: list[str], split: str = "test") -> dict[str, Any]:
    return fixture_kb.dialogue(did, turns, candidates, split=split, kb_version=KB_VERSION)


CANDIDATES = ["p_sea", "p_veg", "p_bbq", "p_caf"]
OPENERS = [
    (
        "I'd love fresh seafood and oysters.",
        "Not Harbor Fish House, it is too loud. I want vegan food somewhere quiet.",
    ),
    ("Looking for barbecue and cold beer.", "Smoky Pit BBQ won't work for me. Something with good coffee."),
]


def sample_dialogues(n: int = 2, split: str = "test") -> list[dict]:
    """`n` dialogues with every system action, a rejection by name and one by reference."""
    out = []
    for i in range(n):
        first, reject = OPENERS[i % len(OPENERS)]
        rejected = "p_sea" if i % 2 == 0 else "p_bbq"
        turns = [
            turn(0, "user", "greet_and_seek", first),
            turn(1, "system", "ask_preference", "What matters most to you?"),
            turn(2, "user", "provide_preference", "Friendly staff, and I don't want long lines."),
            turn(3, "system", "recommend", "Try it.", refs=(rejected,), gold=(rejected,)),
            turn(4, "user", "reject_and_refine", reject, refs=(rejected,)),
            turn(5, "system", "compare", "Two options.", refs=("p_veg", "p_caf"), gold=("p_veg",)),
            turn(6, "user", "accept", "Green Leaf Kitchen it is."),
            turn(7, "system", "farewell", "Enjoy!"),
        ]
        out.append(dialogue(f"crs_yelp_{i + 1:05d}", turns, CANDIDATES, split))
    return out


def write_data_dir(root: Path, dialogues: list[dict]) -> Path:
    return fixture_kb.write_data_dir(
        root, dialogues, POIS, REVIEWS, kb_version=KB_VERSION, corpus_version="sniprec-corpus-1"
    )


DIM = 16  # the word encoder's vector size


class WordEncoder:
    """Sum of fixed per-word vectors, L2-normalised: identical texts get identical vectors."""

    def get_sentence_embedding_dimension(self) -> int:
        return DIM

    def encode(
        self, texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    ):
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().split():
                rng = np.random.default_rng(zlib.crc32(word.strip(".,!?").encode()))
                out[i] += rng.standard_normal(DIM).astype(np.float32)
            norm = np.linalg.norm(out[i])
            out[i] = out[i] / norm if norm else out[i]
        return out


class CountingEncoder(WordEncoder):
    """The word encoder that records every call (how many texts each) and can fail on a given call."""

    def __init__(self, fail_on: int | None = None):
        self.calls: list[int] = []
        self.fail_on = fail_on

    def encode(self, texts, **kwargs):
        if self.fail_on is not None and len(self.calls) == self.fail_on:
            raise KeyboardInterrupt  # an interrupted encode
        self.calls.append(len(texts))
        return super().encode(texts, **kwargs)
