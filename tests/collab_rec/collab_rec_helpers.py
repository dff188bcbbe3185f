"""Small inputs for the Collab-REC tests, written to tmp_path: subsets of the shared city data (read in place,
never copied into the repository) and a tiny Trace data directory."""

from __future__ import annotations

import csv
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

QUERY_HEADER = ["config_id", "config", "city", "query_v"]
DEAD = "openai:http://127.0.0.1:9/v1#recorded"  # never contacted: recorded answers sit in the cache


def recorded_llm(tmp_path: Path, answers: dict[str, str]):
    """A real LLM-layer client whose response cache holds `answers` (agent prompt -> raw model text), so the
    layer's JSON extraction, validation and failure handling run on recorded outputs without a server."""
    from baselines.collab_rec.agents import AGENT_SCHEMA, load_settings
    from trace_dataset.llm import ResponseCache, load_llm
    from trace_dataset.llm.base import check_messages, with_instruction
    from trace_dataset.llm.cache import Completion, cache_key
    from trace_dataset.llm.jsonout import schema_instruction

    llm = load_llm(DEAD, load_settings().settings(), cache_path=tmp_path / "recorded.sqlite", max_retries=0)
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
CITY = "Philadelphia"


def poi(
    bid: str,
    name: str,
    lat: float,
    lon: float,
    *,
    price: int | None = 2,
    review_count: int = 10,
    categories: tuple[str, ...] = ("Restaurants",),
    noise: str | None = None,
) -> dict[str, Any]:
    return {
        "business_id": bid,
        "name": name,
        "address": "1 Main St",
        "city": CITY,
        "state": "PA",
        "latitude": lat,
        "longitude": lon,
        "categories": list(categories),
        "stars": 4.0,
        "review_count": review_count,
        "price": price,
        "attributes": {"noise_level": noise} if noise else {},
        "poi_type": "restaurant",
        "review_ids": [],
    }


POIS = [
    poi(
        "p_sea",
        "Harbor Fish House",
        39.9522,
        -75.1440,
        price=3,
        review_count=50,
        categories=("Seafood", "Restaurants"),
    ),
    poi(
        "p_veg",
        "Green Leaf Kitchen",
        39.9496,
        -75.1718,
        price=2,
        review_count=20,
        categories=("Vegan", "Restaurants"),
        noise="quiet",
    ),
    poi(
        "p_bbq",
        "Smoky Pit BBQ",
        39.9710,
        -75.1340,
        price=1,
        review_count=80,
        categories=("Barbeque", "Restaurants"),
        noise="loud",
    ),
    poi(
        "p_caf",
        "Corner Cafe",
        39.9656,
        -75.1810,
        price=1,
        review_count=5,
        categories=("Cafes", "Restaurants"),
    ),
]
REVIEWS = {
    "p_sea": [
        "Fresh seafood and oysters every night. The lobster roll was perfect.",
        "Service was slow but the fish tacos were great. Parking is hard nearby.",
    ],
    "p_veg": [
        "Best vegan spot in town! Quiet room, cozy tables, and lovely salads.",
        "Vegetarian menu with gluten-free options. A little pricey for lunch.",
    ],
    "p_bbq": [
        "Brisket and ribs are smoky and tender. Loud music, long lines.",
        "Good barbecue and cold beer. Outdoor seating on the patio.",
    ],
    "p_caf": ["Coffee was fine. Pastries were stale though.", "A quick breakfast place near the museum."],
}


def turn(
    turn_id: int, role: str, action: str, text: str, refs: tuple[str, ...] = (), gold: tuple[str, ...] = ()
) -> dict[str, Any]:
    return {
        "turn_id": turn_id,
        "role": role,
        "action": action,
        "text": text,
        "referenced_poi_ids": list(refs),
        "referenced_review_ids": [],
        "gold_poi_ids": list(gold),
        "acceptable_alternative_poi_ids": [],
        "citations": [],
    }


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
    return {
        "dialogue_id": did,
        "split": "test",
        "scenario": {
            "persona_type": "foodie_explorer",
            "persona": "a foodie",
            "travel_context": "first visit",
            "city": CITY,
            "poi_type": "restaurant",
            "difficulty": "Easy",
        },
        "candidate_poi_ids": ids,
        "pool_16_poi_ids": ids,
        "pool_32_poi_ids": ids,
        "open_set_poi_ids": ids,
        "turns": turns,
        "quote_spans": [],
        "metadata": {
            "generator": "test",
            "backend": "template",
            "model": "",
            "seed": 42,
            "kb_version": "kb-test-1",
        },
    }


def write_data_dir(root: Path, dialogues: list[dict[str, Any]] | None = None) -> Path:
    """A Trace data directory (trace_dataset/datadir.py layout) with POIS, REVIEWS and `dialogues`."""
    kb = root / KB_DIRNAME
    pois, review_rows = [dict(p) for p in POIS], []
    for p in pois:
        p["review_ids"] = [f"r_{p['business_id']}_{i}" for i in range(len(REVIEWS[p["business_id"]]))]
        review_rows += [
            {
                "review_id": rid,
                "business_id": p["business_id"],
                "stars": 4.0,
                "date": "2020-01-01",
                "text": text,
            }
            for rid, text in zip(p["review_ids"], REVIEWS[p["business_id"]], strict=True)
        ]
    kb.mkdir(parents=True, exist_ok=True)
    write_jsonl(kb / POIS_FILE, pois)
    write_jsonl(
        kb / REVIEW_INDEX_FILE,
        [
            {k: r[k] for k in ("review_id", "business_id", "stars", "date")} | {"length": len(r["text"])}
            for r in review_rows
        ],
    )
    write_jsonl(kb / REVIEWS_FILE, review_rows)
    write_json(kb / KB_META_FILE, {"kb_version": "kb-test-1"})
    dialogues = dialogues if dialogues is not None else [dialogue()]
    for split in SPLITS:
        write_jsonl(root / DATA_DIRNAME / f"{split}.jsonl.gz", [d for d in dialogues if d["split"] == split])
    write_json(root / CORPUS_META_FILE, {"versions": {"corpus_version": "corpus-test-1"}})
    return root
