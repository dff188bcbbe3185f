"""Small hand-made knowledge bases, turn rows and data directories for the baseline tests (tmp_path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trace_dataset.constants import KB_DIRNAME, KB_META_FILE, POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE
from trace_dataset.io import write_json, write_jsonl

CITY = "Philadelphia"


def poi(bid: str, name: str, *, lat: float = 39.9526, lon: float = -75.1652, stars: float = 4.0,
        review_count: int = 10, price: int | None = 2, poi_type: str = "restaurant", city: str = CITY,
        categories: tuple[str, ...] = ("Restaurants",), attributes: dict | None = None) -> dict[str, Any]:
    return {
        "business_id": bid, "name": name, "address": "1 Main St", "city": city, "state": "PA",
        "latitude": lat, "longitude": lon, "categories": list(categories), "stars": stars,
        "review_count": review_count, "price": price, "attributes": attributes or {}, "poi_type": poi_type,
        "review_ids": [],
    }


def write_kb(root: Path, pois: list[dict], reviews: dict[str, list[str] | list[tuple[str, float]]],
             *, with_text: bool = True, version: str = "kb-test-1") -> Path:
    """Write a knowledge base folder. `reviews`: business_id -> texts (or (text, stars)); ids r_<bid>_<i>."""
    review_rows = []
    pois = [dict(p) for p in pois]
    for p in pois:
        ids = []
        for i, item in enumerate(reviews.get(p["business_id"], [])):
            text, stars = (item, 4.0) if isinstance(item, str) else item
            rid = f"r_{p['business_id']}_{i}"
            ids.append(rid)
            review_rows.append({"review_id": rid, "business_id": p["business_id"], "stars": stars,
                                "date": "2020-01-01", "text": text})
        p["review_ids"] = ids
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(root / POIS_FILE, pois)
    write_jsonl(root / REVIEW_INDEX_FILE, [{k: r[k] for k in ("review_id", "business_id", "stars", "date")}
                                           | {"length": len(r["text"])} for r in review_rows])
    if with_text:
        write_jsonl(root / REVIEWS_FILE, review_rows)
    write_json(root / KB_META_FILE, {"kb_version": version})
    return root


def turn(turn_id: int, role: str, action: str, text: str, refs: tuple[str, ...] = (),
         gold: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"turn_id": turn_id, "role": role, "action": action, "text": text, "referenced_poi_ids": list(refs),
            "referenced_review_ids": [], "gold_poi_ids": list(gold), "acceptable_alternative_poi_ids": [],
            "citations": []}


def dialogue(did: str, turns: list[dict], candidates: list[str], *, city: str = CITY, poi_type: str = "restaurant",
             split: str = "test", pool_16: list[str] | None = None, pool_32: list[str] | None = None,
             open_set: list[str] | None = None) -> dict[str, Any]:
    return {
        "dialogue_id": did, "split": split,
        "scenario": {"persona_type": "foodie_explorer", "persona": "a foodie", "travel_context": "first visit",
                     "city": city, "poi_type": poi_type, "difficulty": "Easy"},
        "candidate_poi_ids": list(candidates),
        "pool_16_poi_ids": list(pool_16 or candidates), "pool_32_poi_ids": list(pool_32 or candidates),
        "open_set_poi_ids": list(open_set or candidates),
        "turns": turns, "quote_spans": [],
        "metadata": {"generator": "test", "backend": "template", "model": "", "seed": 42, "kb_version": "kb-test-1"},
    }


# ---------------------------------------------------------------------------------------------------
# A small restaurant cell with distinct vocabularies, plus a hotel and an attraction near one of them.
# ---------------------------------------------------------------------------------------------------
SMALL_POIS = [
    poi("p_sea", "Harbor Fish House", stars=4.0, review_count=50, lat=39.9522, lon=-75.1440),  # Old City
    poi("p_veg", "Green Leaf Kitchen", stars=4.5, review_count=20, lat=39.9496, lon=-75.1718),  # Rittenhouse
    poi("p_bbq", "Smoky Pit BBQ", stars=4.5, review_count=80, lat=39.9710, lon=-75.1340),  # Fishtown
    poi("p_caf", "Corner Cafe", stars=3.0, review_count=5, lat=39.9656, lon=-75.1810),  # Art Museum
    poi("h_old", "Old City Inn", poi_type="hotel", lat=39.9530, lon=-75.1450, categories=("Hotels",)),
    poi("a_old", "Liberty Museum", poi_type="attraction", lat=39.9515, lon=-75.1460, categories=("Museums",)),
]
SMALL_REVIEWS = {
    "p_sea": [("Fresh seafood and oysters every night. The lobster roll was perfect.", 5.0),
              ("Service was slow but the fish tacos were great. Parking is hard nearby.", 3.0)],
    "p_veg": [("Best vegan spot in town! Quiet room, cozy tables, and lovely salads.", 5.0),
              ("Vegetarian menu with gluten-free options. A little pricey for lunch.", 4.0)],
    "p_bbq": [("Brisket and ribs are smoky and tender. Loud music, long lines.", 5.0),
              ("Good barbecue and cold beer. Outdoor seating on the patio.", 4.0)],
    "p_caf": [("Coffee was fine. Pastries were stale though.", 2.0),
              ("A quick breakfast place near the museum, nothing special.", 3.0)],
    "h_old": ["Clean rooms right by the historic district and a friendly front desk."],
    "a_old": ["A small museum with fascinating colonial history exhibits and kind guides."],
}



def row(history: list[dict], action: str = "recommend", candidates: tuple[str, ...] = ("p_sea", "p_veg", "p_bbq", "p_caf"),
        rejected: tuple[str, ...] = (), *, did: str = "d1", turn_id: int | None = None, city: str = CITY,
        poi_type: str = "restaurant", pool: str = "closed") -> dict[str, Any]:
    """A `turns` row built by hand (schema.TURN_ROW_FEATURES)."""
    return {
        "dialogue_id": did, "turn_id": len(history) if turn_id is None else turn_id, "split": "test",
        "action": action,
        "scenario": {"persona_type": "foodie_explorer", "persona": "a foodie", "travel_context": "first visit",
                     "city": city, "poi_type": poi_type, "difficulty": "Easy"},
        "pool": pool,
        "history": [{k: t[k] for k in ("turn_id", "role", "action", "text", "referenced_poi_ids")} for t in history],
        "candidate_poi_ids": list(candidates), "rejected_poi_ids": list(rejected), "gold_poi_ids": [],
        "acceptable_alternative_poi_ids": [], "reference_text": "", "reference_poi_ids": [],
    }


def write_data_dir(root: Path, dialogues: list[dict], pois: list[dict] = SMALL_POIS,
                   reviews: dict = SMALL_REVIEWS, corpus: dict | None = None) -> Path:
    """A Trace data directory (trace_dataset/datadir.py layout) with the given dialogues."""
    from trace_dataset.constants import CORPUS_META_FILE, DATA_DIRNAME, SPLITS

    write_kb(root / KB_DIRNAME, pois, reviews)
    for split in SPLITS:
        write_jsonl(root / DATA_DIRNAME / f"{split}.jsonl.gz", [d for d in dialogues if d["split"] == split])
    write_json(root / CORPUS_META_FILE, corpus or {"versions": {"corpus_version": "corpus-test-1"}})
    return root


REST = ("p_sea", "p_veg", "p_bbq", "p_caf")


def sample_dialogues(n: int = 6, split: str = "test") -> list[dict]:
    """`n` small dialogues exercising every system action, rejections and pools."""
    texts = [
        ("I'd love fresh seafood near Old City.", "Not Harbor Fish House, I want vegan food somewhere quiet."),
        ("Looking for barbecue and cold beer, something cheap.", "Smoky Pit BBQ is too loud, anything cozy?"),
        ("We want breakfast and coffee near the Art Museum.", "No, not that one. Something with salads."),
    ]
    out = []
    for i in range(n):
        first, reject = texts[i % len(texts)]
        turns = [
            turn(0, "user", "greet_and_seek", first),
            turn(1, "system", "ask_preference", "What is your budget?"),
            turn(2, "user", "provide_preference", "Moderate prices, and good service."),
            turn(3, "system", "recommend", "Try Harbor Fish House.", refs=("p_sea",), gold=("p_sea",)),
            turn(4, "user", "reject_and_refine", reject, refs=("p_sea",) if i % 2 == 0 else ()),
            turn(5, "system", "compare", "Green Leaf Kitchen or Corner Cafe?", refs=("p_veg", "p_caf"),
                 gold=("p_veg",)),
            turn(6, "user", "accept", "Green Leaf Kitchen it is."),
            turn(7, "system", "farewell", "Enjoy!"),
        ]
        out.append(dialogue(f"crs_yelp_{i + 1:05d}", turns, list(REST[:3]) if i % 3 == 2 else list(REST),
                            split=split, pool_16=list(REST), open_set=list(REST)))
    return out
