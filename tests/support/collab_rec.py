"""Small inputs for the Collab-REC tests, written to tmp_path: subsets of the shared city data (read in place,
never copied into the repository) and a tiny Trace data directory."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import tests.support.kb as fixture_kb
from tests.support.kb import CELL_REVIEWS, poi, turn

QUERY_HEADER = ["config_id", "config", "city", "query_v"]
DEAD = "openai:http://127.0.0.1:9/v1#recorded"  # never contacted: recorded answers sit in the cache


def recorded_llm(tmp_path: Path, answers: dict[str, str]):
    """A real LLM-layer client whose response cache holds `answers` (agent prompt -> raw model text), so the
    layer's JSON extraction, validation and failure handling run on recorded outputs without a server."""
    from baselines.collab_rec.agents import AGENT_SCHEMA, load_settings
    from trace_llm import ResponseCache, load_llm
    from trace_llm.base import check_messages, with_instruction
    from trace_llm.cache import Completion, cache_key
    from trace_llm.jsonout import schema_instruction

    # recorded free-form outputs: the prompt dialect (their cache keys carry no constraint)
    llm = load_llm(
        DEAD,
        load_settings().settings(),
        cache_path=tmp_path / "recorded.sqlite",
        max_retries=0,
        structured="prompt",
    )
    cache = ResponseCache(tmp_path / "recorded.sqlite")
    settings = llm.settings.to_dict()
    for prompt, text in answers.items():
        conv = with_instruction(
            check_messages([{"role": "user", "content": prompt}]), schema_instruction(AGENT_SCHEMA)
        )
        cache.put(
            cache_key("openai", llm.cache_model, settings, conv),
            "openai",
            llm.cache_model,
            settings,
            Completion(text, 100, 20, "stop"),
        )
    cache.close()
    return llm


def subset_kb(src: Path, dst: Path, cities: set[str]) -> Path:
    """The shared knowledge base's rows of `cities` only (a smaller catalogue keeps prompts short)."""
    with open(src / "eu-cities-database.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    with open(dst, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(rows[0])
        w.writerows(r for r in rows[1:] if r[0] in cities)
    return dst


def subset_queries(src: Path, dst: Path, ids: list[str]) -> Path:
    with open(src / "queries.csv", encoding="utf-8", newline="") as f:
        rows = {r["config_id"]: r for r in csv.DictReader(f)}
    with open(dst, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, QUERY_HEADER)
        w.writeheader()
        w.writerows(rows[i] for i in ids)
    return dst


def write_queries(dst: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    with open(dst, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(QUERY_HEADER)
        w.writerows(rows)
    return dst


# ---- a tiny Trace data directory: one restaurant cell in Philadelphia, one dialogue ------------------------
POIS = [
    poi(
        "p_sea",
        "Harbor Fish House",
        lat=39.9522,
        lon=-75.1440,
        price=3,
        review_count=50,
        categories=("Seafood", "Restaurants"),
    ),
    poi(
        "p_veg",
        "Green Leaf Kitchen",
        lat=39.9496,
        lon=-75.1718,
        price=2,
        review_count=20,
        categories=("Vegan", "Restaurants"),
        attributes={"noise_level": "quiet"},
    ),
    poi(
        "p_bbq",
        "Smoky Pit BBQ",
        lat=39.9710,
        lon=-75.1340,
        price=1,
        review_count=80,
        categories=("Barbeque", "Restaurants"),
        attributes={"noise_level": "loud"},
    ),
    poi(
        "p_caf",
        "Corner Cafe",
        lat=39.9656,
        lon=-75.1810,
        price=1,
        review_count=5,
        categories=("Cafes", "Restaurants"),
    ),
]
# The shared cell's review texts, every review at fixture_kb.REVIEW_STARS (the Corner Cafe's second one shorter).
REVIEWS = {bid: [text for text, _ in CELL_REVIEWS[bid]] for bid in CELL_REVIEWS}
REVIEWS["p_caf"][1] = "A quick breakfast place near the museum."


def dialogue(did: str = "crs_yelp_00001") -> dict[str, Any]:
    ids = [p["business_id"] for p in POIS]
    turns = [
        turn(0, "user", "greet_and_seek", "A quiet vegan place, something cheap, a hidden gem please."),
        turn(1, "system", "recommend", "Try Green Leaf Kitchen.", refs=("p_veg",), gold=("p_veg",)),
        turn(
            2, "user", "reject_and_refine", "Not that one, anything within walking distance?", refs=("p_veg",)
        ),
        turn(
            3, "system", "compare", "Corner Cafe or Smoky Pit BBQ?", refs=("p_caf", "p_bbq"), gold=("p_caf",)
        ),
        turn(4, "user", "accept", "Corner Cafe it is."),
        turn(5, "system", "farewell", "Enjoy!"),
    ]
    return fixture_kb.dialogue(did, turns, ids)


def write_data_dir(root: Path, dialogues: list[dict[str, Any]] | None = None) -> Path:
    """A Trace data directory (trace_dataset/datadir.py layout) with POIS, REVIEWS and `dialogues`."""
    return fixture_kb.write_data_dir(root, [dialogue()] if dialogues is None else dialogues, POIS, REVIEWS)
