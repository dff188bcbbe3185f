"""Hand-made knowledge bases, goals and small Yelp bundles for the interactive tests (written to tmp_path)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tests.support.kb as fixture_kb
from tests.support.kb import CITY
from trace_dataset.generate.preferences.constraints import Constraint
from trace_harness.protocols.interactive.reply import System, SystemReply, check_reply
from trace_harness.protocols.interactive.simulator.goal import TravelerGoal


def poi(
    bid: str,
    name: str,
    *,
    stars: float = 4.0,
    price: int | None = 2,
    noise: str | None = None,
    outdoor: bool | None = None,
    lat: float = 39.9526,
    lon: float = -75.1652,
    categories: tuple[str, ...] = ("Restaurants", "Italian"),
) -> dict[str, Any]:
    return fixture_kb.poi(
        bid,
        name,
        stars=stars,
        price=price,
        lat=lat,
        lon=lon,
        categories=categories,
        review_count=20,
        attributes={"noise_level": noise, "outdoor_seating": outdoor},
    )


def write_kb(root: Path, pois: list[dict], reviews: dict[str, list[str]]) -> Path:
    return fixture_kb.write_kb(root, pois, reviews, version="kb-interactive-test")


# Eight restaurants whose attributes decide the three preferences below (r8's price only by its reviews).
HAND_POIS = [
    poi("r1", "Copper Spoon", price=1, noise="quiet", outdoor=True, categories=("Restaurants", "Italian")),
    poi("r2", "Blue Table", price=2, noise="quiet", outdoor=True, categories=("Restaurants", "Thai")),
    poi("r3", "Golden Bistro", price=1, noise="quiet", outdoor=False, categories=("Restaurants", "French")),
    poi("r4", "Maple Grill", price=1, noise="loud", outdoor=True, categories=("Restaurants", "Steakhouses")),
    poi("r5", "Iron Cantina", price=3, noise="quiet", outdoor=True, categories=("Restaurants", "Mexican")),
    poi("r6", "Cedar Tavern", price=4, noise="very_loud", outdoor=False, categories=("Restaurants", "Pubs")),
    poi(
        "r7", "Willow Kitchen", price=2, noise="average", outdoor=True, categories=("Restaurants", "Italian")
    ),
    poi(
        "r8",
        "Juniper Noodle House",
        price=None,
        noise="quiet",
        outdoor=True,
        categories=("Restaurants", "Thai"),
    ),
]
HAND_REVIEWS = {
    "r1": ["Lovely pasta and a friendly waiter who knew the wine list well."],
    "r2": ["The green curry was great and the staff were kind to us."],
    "r3": ["Butter croissants and a steady hand with the sauces."],
    "r4": ["Huge steaks, cold beer and a crowd that cheers for the game."],
    "r5": ["Tacos al pastor worth the trip, and the salsa bar is generous."],
    "r6": ["A pub with darts, pints and a long list of ales."],
    "r7": ["Homemade gnocchi and a small terrace on the side street."],
    "r8": ["Cheap and cheerful noodles, great value for the portion."],
}
HELD = (Constraint("noise", "quiet"), Constraint("amenity", "outdoor_seating"), Constraint("price", "cheap"))
SATISFYING = {"r1", "r2", "r8"}  # decided by hand from the attributes above (r8: review evidence of value)
VIOLATED = {
    "r3": {"amenity:outdoor_seating"},
    "r4": {"noise:quiet"},
    "r5": {"price:cheap"},
    "r6": {"noise:quiet", "amenity:outdoor_seating", "price:cheap"},
    "r7": {"noise:quiet"},
}


def hand_goal(
    dialogue_id: str = "hand_1", opening: int = 1, asks: int = 1, constraints: tuple[Constraint, ...] = HELD
) -> TravelerGoal:
    ids = tuple(p["business_id"] for p in HAND_POIS)
    return TravelerGoal(
        dialogue_id=dialogue_id,
        split="test",
        scenario={
            "persona_type": "couple",
            "persona": "Ana, 34, a couple on a long weekend in Philadelphia",
            "travel_context": "a long weekend",
            "city": CITY,
            "poi_type": "restaurant",
            "difficulty": "Easy",
        },
        persona_name="Ana",
        constraints=constraints,
        opening=opening,
        asks=asks,
        pools={"closed": ids, "pool_16": ids, "pool_32": ids, "open": ids},
    )


# ---------------------------------------------------------------------------------------------------
# A tiny Yelp bundle (two files in a folder) for the catalogue and SnipRec seeding tests
# ---------------------------------------------------------------------------------------------------
def business(
    bid: str,
    name: str,
    city: str,
    categories: str,
    review_count: int = 12,
    stars: float = 4.0,
    price: str | None = "2",
) -> dict[str, Any]:
    attrs = {"RestaurantsPriceRange2": price} if price else {}
    return {
        "business_id": bid,
        "name": name,
        "address": "1 Main St",
        "city": city,
        "state": "PA",
        "postal_code": "19103",
        "latitude": 39.95,
        "longitude": -75.16,
        "stars": stars,
        "review_count": review_count,
        "is_open": 1,
        "attributes": attrs,
        "categories": categories,
        "hours": None,
    }


def review(rid: str, bid: str, user: str, stars: float, useful: int, text: str = "") -> dict[str, Any]:
    return {
        "review_id": rid,
        "user_id": user,
        "business_id": bid,
        "stars": stars,
        "useful": useful,
        "funny": 0,
        "cool": 0,
        "text": text or f"Review {rid} of {bid}: good food, kind staff and a fair bill.",
        "date": f"2020-01-{(abs(hash(rid)) % 27) + 1:02d} 10:00:00",
    }


def write_bundle(root: Path, businesses: list[dict], reviews: list[dict]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "yelp_academic_dataset_business.json", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(b, separators=(",", ":")) + "\n" for b in businesses)
    with open(root / "yelp_academic_dataset_review.json", "w", encoding="utf-8") as f:
        f.writelines(json.dumps(r, separators=(",", ":")) + "\n" for r in reviews)
    return root


# ---------------------------------------------------------------------------------------------------
# A scripted system (it stands in for a system under test, not for an LLM)
# ---------------------------------------------------------------------------------------------------
class Scripted(System):
    """Answers each requested action from a script of rankings (recommend turns) and records the rows."""

    name = "scripted"

    def __init__(self, rankings: list[list[str]]):
        self.rankings = list(rankings)
        self.rows: list[dict[str, Any]] = []

    def respond(self, rows: Sequence[dict[str, Any]]) -> list[SystemReply]:
        out = []
        for row in rows:
            self.rows.append(row)
            if row["action"] == "recommend":
                ranked = self.rankings.pop(0)
                out.append(
                    check_reply(row, SystemReply("recommend", ranked, f"I recommend {ranked[0]}.", {}))
                )
            elif row["action"] == "farewell":
                out.append(SystemReply("farewell", [], "Enjoy!", {}))
            else:
                out.append(
                    SystemReply(row["action"], list(row["candidate_poi_ids"]), "What is your budget?", {})
                )
        return out
