"""Hand-made knowledge bases and turn rows for the Aspect, Dense, Hybrid-RRF, Knowledge-Enhanced and
Persona-Grounded tests (tests/baselines/non_llm/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tests.support.kb as fixture_kb
from tests.support.kb import INN_REVIEWS, poi, turn
from trace_dataset.constants import KB_DIRNAME
from trace_dataset.kb.store import KnowledgeBase

__all__ = ["CELL_IDS", "CELL_POIS", "CELL_REVIEWS", "load_kb", "poi", "row", "turn"]


def load_kb(
    tmp_path: Path, pois: list[dict], reviews: dict[str, list[Any]], version: str = "non-llm-test-1"
) -> KnowledgeBase:
    """reviews: business_id -> texts or (text, stars); review ids r_<bid>_<i> in list order."""
    return KnowledgeBase.load(fixture_kb.write_kb(tmp_path / KB_DIRNAME, pois, reviews, version=version))


def row(
    user_texts: list[str] | None = None,
    action: str = "recommend",
    candidates: tuple[str, ...] = (),
    rejected: tuple[str, ...] = (),
    *,
    history: list[dict] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A `turns` row (fixture_kb.turn_row). `user_texts` become alternating user/system turns."""
    if history is None:
        history = []
        for i, text in enumerate(user_texts or []):
            if i:
                history.append(turn(len(history), "system", "ask_preference", "What else matters to you?"))
            history.append(
                turn(len(history), "user", "greet_and_seek" if i == 0 else "provide_preference", text)
            )
    return fixture_kb.turn_row(history, action, candidates, rejected, **{"persona": "someone", **fields})


# A restaurant cell with distinct vocabularies and sentiments, used by the shared pipeline tests.
CELL_POIS = [
    poi(
        "p_sea",
        "Harbor Fish House",
        stars=4.0,
        review_count=50,
        price=3,
        categories=("Seafood", "Restaurants"),
        attributes={"noise_level": "average", "outdoor_seating": False, "good_for_kids": True},
    ),
    poi(
        "p_veg",
        "Green Leaf Kitchen",
        stars=4.5,
        review_count=20,
        price=2,
        categories=("Vegan", "Restaurants"),
        attributes={"noise_level": "quiet", "outdoor_seating": True, "wifi": "free"},
    ),
    poi(
        "p_bbq",
        "Smoky Pit BBQ",
        stars=4.5,
        review_count=80,
        price=2,
        categories=("Barbeque", "Restaurants"),
        attributes={"noise_level": "loud", "outdoor_seating": True, "good_for_kids": True},
    ),
    poi("p_caf", "Corner Cafe", stars=3.0, review_count=5, price=1, categories=("Cafes", "Coffee & Tea")),
    poi("p_sus", "Sushi Mori", stars=4.0, review_count=30, price=3, categories=("Sushi Bars", "Japanese")),
    poi("h_old", "Old City Inn", poi_type="hotel", categories=("Hotels",)),
]
CELL_REVIEWS = {
    **fixture_kb.CELL_REVIEWS,
    "p_sus": [
        ("The sushi was fresh and the chef friendly. Expensive but worth it.", 5.0),
        ("Nigiri and rolls, a calm and elegant room.", 4.0),
    ],
    **INN_REVIEWS,
}
CELL_IDS: tuple[str, ...] = ("p_sea", "p_veg", "p_bbq", "p_caf", "p_sus")
