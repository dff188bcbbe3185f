"""Small hand-made knowledge bases, turn rows and data directories for the baseline tests (tmp_path); the
builders are tests/support/kb.py's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tests.support.kb as fixture_kb
from tests.support.kb import CELL_REVIEWS, CITY, INN_REVIEWS, dialogue, poi, turn, write_kb

__all__ = [
    "CITY",
    "REST",
    "SMALL_POIS",
    "SMALL_REVIEWS",
    "poi",
    "row",
    "sample_dialogues",
    "turn",
    "write_data_dir",
    "write_kb",
]

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
    **CELL_REVIEWS,
    **INN_REVIEWS,
    "a_old": ["A small museum with fascinating colonial history exhibits and kind guides."],
}
REST = ("p_sea", "p_veg", "p_bbq", "p_caf")


def row(
    history: list[dict],
    action: str = "recommend",
    candidates: tuple[str, ...] = REST,
    rejected: tuple[str, ...] = (),
    **fields: Any,
) -> dict[str, Any]:
    """A `turns` row over the small cell's restaurants (fixture_kb.turn_row)."""
    return fixture_kb.turn_row(history, action, candidates, rejected, **fields)


def write_data_dir(
    root: Path, dialogues: list[dict], pois: list[dict] = SMALL_POIS, reviews: dict = SMALL_REVIEWS
) -> Path:
    """A Trace data directory (trace_dataset/datadir.py layout) with the given dialogues."""
    return fixture_kb.write_data_dir(root, dialogues, pois, reviews)


def sample_dialogues(n: int = 6, split: str = "test") -> list[dict]:
    """`n` small dialogues exercising every system action, rejections and pools."""
    texts = [
        (
            "I'd love fresh seafood near Old City.",
            "Not Harbor Fish House, I want vegan food somewhere quiet.",
        ),
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
            turn(
                5,
                "system",
                "compare",
                "Green Leaf Kitchen or Corner Cafe?",
                refs=("p_veg", "p_caf"),
                gold=("p_veg",),
            ),
            turn(6, "user", "accept", "Green Leaf Kitchen it is."),
            turn(7, "system", "farewell", "Enjoy!"),
        ]
        out.append(
            dialogue(
                f"crs_yelp_{i + 1:05d}",
                turns,
                list(REST[:3]) if i % 3 == 2 else list(REST),
                split=split,
                pool_16=list(REST),
                open_set=list(REST),
            )
        )
    return out
