"""Hand-made knowledge bases and turn rows for the Aspect, Dense, Hybrid-RRF, Knowledge and Persona tests
(a uniquely named module, so that `from g2_helpers import ...` cannot pick up another folder's conftest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trace_dataset.constants import KB_DIRNAME, KB_META_FILE, POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE
from trace_dataset.io import write_json, write_jsonl
from trace_dataset.kb.store import KnowledgeBase

CITY = "Philadelphia"


def poi(bid: str, name: str, *, stars: float = 4.0, review_count: int = 10, price: int | None = 2,
        poi_type: str = "restaurant", city: str = CITY, categories: tuple[str, ...] = ("Restaurants",),
        attributes: dict | None = None, lat: float = 39.9526, lon: float = -75.1652) -> dict[str, Any]:
    return {
        "business_id": bid, "name": name, "address": "1 Main St", "city": city, "state": "PA",
        "latitude": lat, "longitude": lon, "categories": list(categories), "stars": stars,
        "review_count": review_count, "price": price, "attributes": attributes or {}, "poi_type": poi_type,
        "review_ids": [],
    }


def write_kb(root: Path, pois: list[dict], reviews: dict[str, list[Any]], version: str = "g2-test-1") -> Path:
    """reviews: business_id -> texts or (text, stars); review ids r_<bid>_<i> in list order."""
    rows = []
    pois = [dict(p) for p in pois]
    for p in pois:
        ids = []
        for i, item in enumerate(reviews.get(p["business_id"], [])):
            text, stars = (item, 4.0) if isinstance(item, str) else item
            rid = f"r_{p['business_id']}_{i}"
            ids.append(rid)
            rows.append({"review_id": rid, "business_id": p["business_id"], "stars": stars, "date": "2020-01-01",
                         "text": text})
        p["review_ids"] = ids
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(root / POIS_FILE, pois)
    write_jsonl(root / REVIEW_INDEX_FILE, [{k: r[k] for k in ("review_id", "business_id", "stars", "date")}
                                           | {"length": len(r["text"])} for r in rows])
    write_jsonl(root / REVIEWS_FILE, rows)
    write_json(root / KB_META_FILE, {"kb_version": version})
    return root


def load_kb(tmp_path: Path, pois: list[dict], reviews: dict[str, list[Any]], version: str = "g2-test-1"
            ) -> KnowledgeBase:
    return KnowledgeBase.load(write_kb(tmp_path / KB_DIRNAME, pois, reviews, version))


def turn(turn_id: int, role: str, action: str, text: str, refs: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"turn_id": turn_id, "role": role, "action": action, "text": text, "referenced_poi_ids": list(refs)}


def row(user_texts: list[str] | None = None, action: str = "recommend", candidates: tuple[str, ...] = (),
        rejected: tuple[str, ...] = (), *, history: list[dict] | None = None, did: str = "d1",
        turn_id: int | None = None, persona_type: str = "foodie_explorer", city: str = CITY,
        poi_type: str = "restaurant", pool: str = "closed") -> dict[str, Any]:
    """A `turns` row (schema.TURN_ROW_FEATURES). `user_texts` become alternating user/system turns."""
    if history is None:
        history = []
        for i, text in enumerate(user_texts or []):
            if i:
                history.append(turn(len(history), "system", "ask_preference", "What else matters to you?"))
            history.append(turn(len(history), "user", "greet_and_seek" if i == 0 else "provide_preference", text))
    return {
        "dialogue_id": did, "turn_id": len(history) if turn_id is None else turn_id, "split": "test",
        "action": action,
        "scenario": {"persona_type": persona_type, "persona": "someone", "travel_context": "first visit",
                     "city": city, "poi_type": poi_type, "difficulty": "Easy"},
        "pool": pool, "history": history, "candidate_poi_ids": list(candidates),
        "rejected_poi_ids": list(rejected), "gold_poi_ids": [], "acceptable_alternative_poi_ids": [],
        "reference_text": "", "reference_poi_ids": [],
    }


# A restaurant cell with distinct vocabularies and sentiments, used by the shared pipeline tests.
CELL_POIS = [
    poi("p_sea", "Harbor Fish House", stars=4.0, review_count=50, price=3, categories=("Seafood", "Restaurants"),
        attributes={"noise_level": "average", "outdoor_seating": False, "good_for_kids": True}),
    poi("p_veg", "Green Leaf Kitchen", stars=4.5, review_count=20, price=2, categories=("Vegan", "Restaurants"),
        attributes={"noise_level": "quiet", "outdoor_seating": True, "wifi": "free"}),
    poi("p_bbq", "Smoky Pit BBQ", stars=4.5, review_count=80, price=2, categories=("Barbeque", "Restaurants"),
        attributes={"noise_level": "loud", "outdoor_seating": True, "good_for_kids": True}),
    poi("p_caf", "Corner Cafe", stars=3.0, review_count=5, price=1, categories=("Cafes", "Coffee & Tea")),
    poi("p_sus", "Sushi Mori", stars=4.0, review_count=30, price=3, categories=("Sushi Bars", "Japanese")),
    poi("h_old", "Old City Inn", poi_type="hotel", categories=("Hotels",)),
]
CELL_REVIEWS = {
    "p_sea": [("Fresh seafood and oysters every night. The lobster roll was perfect.", 5.0),
              ("Service was slow but the fish tacos were great. Parking is hard nearby.", 3.0)],
    "p_veg": [("Best vegan spot in town! Quiet room, cozy tables, and lovely salads.", 5.0),
              ("Vegetarian menu with gluten-free options. A little pricey for lunch.", 4.0)],
    "p_bbq": [("Brisket and ribs are smoky and tender. Loud music, long lines.", 5.0),
              ("Good barbecue and cold beer. Outdoor seating on the patio.", 4.0)],
    "p_caf": [("Coffee was fine. Pastries were stale though.", 2.0),
              ("A quick breakfast place near the museum, nothing special.", 3.0)],
    "p_sus": [("The sushi was fresh and the chef friendly. Expensive but worth it.", 5.0),
              ("Nigiri and rolls, a calm and elegant room.", 4.0)],
    "h_old": ["Clean rooms right by the historic district and a friendly front desk."],
}
CELL_IDS: tuple[str, ...] = ("p_sea", "p_veg", "p_bbq", "p_caf", "p_sus")
