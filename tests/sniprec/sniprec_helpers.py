"""Small knowledge bases and dialogues for the SnipRec tests (a uniquely named module, so that
`from sniprec_helpers import ...` cannot pick up another test folder's helpers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trace_dataset.constants import (
    CORPUS_META_FILE,
    DATA_DIRNAME,
    KB_DIRNAME,
    KB_META_FILE,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEWS_FILE,
    SPLITS,
)
from trace_dataset.io import write_json, write_jsonl

CITY = "Philadelphia"


def poi(bid: str, name: str, *, categories: tuple[str, ...] = ("Restaurants",), attributes: dict | None = None,
        stars: float = 4.0, price: int | None = 2, poi_type: str = "restaurant") -> dict[str, Any]:
    return {
        "business_id": bid, "name": name, "address": "1 Main St", "city": CITY, "state": "PA",
        "latitude": 39.95, "longitude": -75.16, "categories": list(categories), "stars": stars,
        "review_count": 10, "price": price, "attributes": attributes or {}, "poi_type": poi_type, "review_ids": [],
    }


POIS = [
    poi("p_sea", "Harbor Fish House", categories=("Restaurants", "Seafood"), attributes={"noise_level": "loud"}),
    poi("p_veg", "Green Leaf Kitchen", categories=("Restaurants", "Vegan"), stars=4.5,
        attributes={"ambience": ["romantic", "quiet"], "good_for_kids": False}),
    poi("p_bbq", "Smoky Pit BBQ", categories=("Restaurants", "Barbecue"), attributes={"outdoor_seating": True}),
    poi("p_caf", "Corner Cafe", categories=("Restaurants", "Cafes"), stars=3.0, price=1),
]
REVIEWS = {
    "p_sea": [("Fresh seafood and oysters every night. The lobster roll at Harbor Fish House was perfect.", 5.0),
              ("Service was slow but the fish tacos were great. Parking is hard nearby; bring cash.", 3.0)],
    "p_veg": [("Best vegan spot in town! Quiet room, cozy tables, and lovely salads.", 5.0),
              ("Vegetarian menu with gluten-free options. A little pricey for lunch, though the reviewer loved it.", 4.0)],
    "p_bbq": [("Brisket and ribs are smoky and tender. Loud music, long lines.", 5.0),
              ("Good barbecue and cold beer.\nOutdoor seating on the patio, and the staff are friendly.", 4.0)],
    "p_caf": [("Coffee was fine. Pastries were stale though.", 2.0),
              ("A quick breakfast place near the museum, nothing special.", 3.0)],
}


def write_kb(root: Path, pois: list[dict] = POIS, reviews: dict = REVIEWS, version: str = "sniprec-test-1") -> Path:
    rows, pois = [], [dict(p) for p in pois]
    for p in pois:
        p["review_ids"] = []
        for i, (text, stars) in enumerate(reviews.get(p["business_id"], [])):
            rid = f"r_{p['business_id']}_{i}"
            p["review_ids"].append(rid)
            rows.append({"review_id": rid, "business_id": p["business_id"], "stars": stars, "date": "2020-01-01",
                         "text": text})
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(root / POIS_FILE, pois)
    write_jsonl(root / REVIEW_INDEX_FILE, [{k: r[k] for k in ("review_id", "business_id", "stars", "date")}
                                           | {"length": len(r["text"])} for r in rows])
    write_jsonl(root / REVIEWS_FILE, rows)
    write_json(root / KB_META_FILE, {"kb_version": version})
    return root


def turn(turn_id: int, role: str, action: str, text: str, refs: tuple[str, ...] = (),
         gold: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"turn_id": turn_id, "role": role, "action": action, "text": text, "referenced_poi_ids": list(refs),
            "referenced_review_ids": [], "gold_poi_ids": list(gold), "acceptable_alternative_poi_ids": [],
            "citations": []}


def dialogue(did: str, turns: list[dict], candidates: list[str], split: str = "test") -> dict[str, Any]:
    return {
        "dialogue_id": did, "split": split,
        "scenario": {"persona_type": "foodie_explorer", "persona": "a foodie", "travel_context": "first visit",
                     "city": CITY, "poi_type": "restaurant", "difficulty": "Easy"},
        "candidate_poi_ids": list(candidates), "pool_16_poi_ids": list(candidates),
        "pool_32_poi_ids": list(candidates), "open_set_poi_ids": list(candidates),
        "turns": turns, "quote_spans": [],
        "metadata": {"generator": "test", "backend": "template", "model": "", "seed": 42,
                     "kb_version": "sniprec-test-1"},
    }


CANDIDATES = ["p_sea", "p_veg", "p_bbq", "p_caf"]
OPENERS = [
    ("I'd love fresh seafood and oysters.", "Not Harbor Fish House, it is too loud. I want vegan food somewhere quiet."),
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
    write_kb(root / KB_DIRNAME)
    for split in SPLITS:
        write_jsonl(root / DATA_DIRNAME / f"{split}.jsonl.gz", [d for d in dialogues if d["split"] == split])
    write_json(root / CORPUS_META_FILE, {"versions": {"corpus_version": "sniprec-corpus-1"}})
    return root
