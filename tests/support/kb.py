"""Hand-made knowledge bases, dialogues and `turns` rows shared by the test folders' helper modules.

One definition of each builder (a POI record, the knowledge-base writer, a turn, a dialogue, a `turns` row, a
data directory) and of the restaurant cell's review texts; each folder keeps its own POI set and versions,
because its expected numbers depend on them. Importable as `fixture_kb` from every test: tests/conftest.py
puts tests/ on sys.path (pytest's default `prepend` import mode), as each folder's own directory is.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from trace_dataset.constants import (
    CORPUS_META_FILE,
    KB_META_FILE,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEWS_FILE,
    SPLITS,
)
from trace_dataset.datadir import kb_dir, split_file
from trace_dataset.io import sha256_file, write_json, write_jsonl
from trace_dataset.schema import HISTORY_TURN_FEATURES

CITY = "Philadelphia"
KB_VERSION = "kb-test-1"
CORPUS_VERSION = "corpus-test-1"
REVIEW_STARS = 4.0  # a review given as bare text

# The restaurant cell's reviews (text, stars): distinct vocabularies and sentiments per place.
CELL_REVIEWS: dict[str, list[tuple[str, float]]] = {
    "p_sea": [
        ("Fresh seafood and oysters every night. The lobster roll was perfect.", 5.0),
        ("Service was slow but the fish tacos were great. Parking is hard nearby.", 3.0),
    ],
    "p_veg": [
        ("Best vegan spot in town! Quiet room, cozy tables, and lovely salads.", 5.0),
        ("Vegetarian menu with gluten-free options. A little pricey for lunch.", 4.0),
    ],
    "p_bbq": [
        ("Brisket and ribs are smoky and tender. Loud music, long lines.", 5.0),
        ("Good barbecue and cold beer. Outdoor seating on the patio.", 4.0),
    ],
    "p_caf": [
        ("Coffee was fine. Pastries were stale though.", 2.0),
        ("A quick breakfast place near the museum, nothing special.", 3.0),
    ],
}
INN_REVIEWS = {"h_old": ["Clean rooms right by the historic district and a friendly front desk."]}


def poi(
    bid: str,
    name: str,
    *,
    lat: float = 39.9526,
    lon: float = -75.1652,
    stars: float = 4.0,
    review_count: int = 10,
    price: int | None = 2,
    poi_type: str = "restaurant",
    city: str = CITY,
    categories: tuple[str, ...] = ("Restaurants",),
    attributes: dict | None = None,
) -> dict[str, Any]:
    """A POI record (schema.POI_FEATURES); write_kb fills in its review ids."""
    return {
        "business_id": bid,
        "name": name,
        "address": "1 Main St",
        "city": city,
        "state": "PA",
        "latitude": lat,
        "longitude": lon,
        "categories": list(categories),
        "stars": stars,
        "review_count": review_count,
        "price": price,
        "attributes": attributes or {},
        "poi_type": poi_type,
        "review_ids": [],
    }


FROM_FILES = "from-files"  # write_kb's version: the SHA-256 over the three files' SHA-256s


def write_kb(
    root: Path,
    pois: list[dict],
    reviews: dict[str, list[str] | list[tuple[str, float]]] | list[dict],
    *,
    version: str | None = KB_VERSION,
    with_text: bool = True,
    max_chars: int | None = None,
    source: str | None = None,
    list_files: bool = False,
) -> Path:
    """Write a knowledge-base folder: the one writer every test's knowledge base goes through.

    `reviews`: business_id -> texts (stars REVIEW_STARS) or (text, stars), numbered r_<bid>_<i> in list order and
    listed in each POI's `review_ids`; or a list of full review records (review_id, business_id, stars, date,
    text) whose ids the POIs already list. `max_chars`: stored texts cut to that many characters (the index keeps
    the full length, as the knowledge-base builder does); `with_text=False` leaves the texts out (a release).
    kb.json: `source` and, with `list_files`, the files' SHA-256 (as the builder writes them), then `kb_version`:
    `version`, FROM_FILES for the SHA-256 over the three files' SHA-256s, or None for no kb.json at all.
    """
    pois = [dict(p) for p in pois]
    if isinstance(reviews, list):
        review_rows = [dict(r) for r in reviews]
    else:
        review_rows = []
        for p in pois:
            ids = []
            for i, item in enumerate(reviews.get(p["business_id"], [])):
                text, stars = (item, REVIEW_STARS) if isinstance(item, str) else item
                rid = f"r_{p['business_id']}_{i}"
                ids.append(rid)
                review_rows.append(
                    {
                        "review_id": rid,
                        "business_id": p["business_id"],
                        "stars": stars,
                        "date": "2020-01-01",
                        "text": text,
                    }
                )
            p["review_ids"] = ids
    root.mkdir(parents=True, exist_ok=True)
    write_jsonl(root / POIS_FILE, pois)
    write_jsonl(
        root / REVIEW_INDEX_FILE,
        [
            {k: r[k] for k in ("review_id", "business_id", "stars", "date")} | {"length": len(r["text"])}
            for r in review_rows
        ],
    )
    if with_text:
        write_jsonl(
            root / REVIEWS_FILE,
            [{**r, "text": r["text"][:max_chars]} if max_chars else r for r in review_rows],
        )
    if version is not None:
        files = {
            n: sha256_file(root / n)
            for n in (POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE)
            if (root / n).exists()
        }
        meta: dict[str, Any] = {"source": source} if source is not None else {}
        if list_files:
            meta["files"] = files
        if version == FROM_FILES:
            version = hashlib.sha256("".join(files.values()).encode()).hexdigest()
        write_json(root / KB_META_FILE, {**meta, "kb_version": version})
    return root


def turn(
    turn_id: int, role: str, action: str, text: str, refs: tuple[str, ...] = (), gold: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A dialogue turn (schema.TURN_FEATURES) without citations."""
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


def scenario(
    *,
    city: str = CITY,
    poi_type: str = "restaurant",
    persona_type: str = "foodie_explorer",
    persona: str = "a foodie",
) -> dict[str, str]:
    return {
        "persona_type": persona_type,
        "persona": persona,
        "travel_context": "first visit",
        "city": city,
        "poi_type": poi_type,
        "difficulty": "Easy",
    }


def dialogue(
    did: str,
    turns: list[dict],
    candidates: list[str],
    *,
    split: str = "test",
    city: str = CITY,
    poi_type: str = "restaurant",
    pool_16: list[str] | None = None,
    pool_32: list[str] | None = None,
    open_set: list[str] | None = None,
    kb_version: str = KB_VERSION,
) -> dict[str, Any]:
    """A dialogue record (schema.DIALOGUE_FEATURES); the pools default to the candidates."""
    return {
        "dialogue_id": did,
        "split": split,
        "scenario": scenario(city=city, poi_type=poi_type),
        "candidate_poi_ids": list(candidates),
        "pool_16_poi_ids": list(pool_16 or candidates),
        "pool_32_poi_ids": list(pool_32 or candidates),
        "open_set_poi_ids": list(open_set or candidates),
        "turns": turns,
        "quote_spans": [],
        "metadata": {
            "generator": "test",
            "backend": "template",
            "model": "",
            "seed": 42,
            "kb_version": kb_version,
        },
    }


def turn_row(
    history: list[dict],
    action: str = "recommend",
    candidates: tuple[str, ...] = (),
    rejected: tuple[str, ...] = (),
    *,
    did: str = "d1",
    turn_id: int | None = None,
    persona_type: str = "foodie_explorer",
    persona: str = "a foodie",
    city: str = CITY,
    poi_type: str = "restaurant",
    pool: str = "closed",
) -> dict[str, Any]:
    """A `turns` row built by hand (schema.TURN_ROW_FEATURES); `history` turns keep the history fields."""
    return {
        "dialogue_id": did,
        "turn_id": len(history) if turn_id is None else turn_id,
        "split": "test",
        "action": action,
        "scenario": scenario(city=city, poi_type=poi_type, persona_type=persona_type, persona=persona),
        "pool": pool,
        "history": [{k: t[k] for k in HISTORY_TURN_FEATURES} for t in history],
        "candidate_poi_ids": list(candidates),
        "rejected_poi_ids": list(rejected),
        "gold_poi_ids": [],
        "acceptable_alternative_poi_ids": [],
        "reference_text": "",
        "reference_poi_ids": [],
    }


def write_data_dir(
    root: Path,
    dialogues: list[dict],
    pois: list[dict],
    reviews: dict,
    *,
    kb_version: str = KB_VERSION,
    corpus_version: str = CORPUS_VERSION,
) -> Path:
    """A Trace data directory (trace_dataset/datadir.py layout): the knowledge base and each split's dialogues."""
    write_kb(kb_dir(root), pois, reviews, version=kb_version)
    for split in SPLITS:
        write_jsonl(split_file(root, split), [d for d in dialogues if d["split"] == split])
    write_json(root / CORPUS_META_FILE, {"versions": {"corpus_version": corpus_version}})
    return root
