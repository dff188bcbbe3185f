"""A tiny hand-written Trace data directory and predictions file, for the metric cards' examples and tests.

Four dialogues (three in the test split) over a made-up New Orleans knowledge base of 14 POIs; review texts are
invented sentences, not Yelp content. The layout is `trace_dataset.datadir`'s (hydrated: reviews.jsonl.gz
present), the records are `schema.DIALOGUE_FEATURES` shaped. `write_toy_predictions` writes the "reference
copy" system: the reference response, the gold POI ranked first, the reference citations.
"""

from __future__ import annotations

import os
from pathlib import Path

from trace_dataset.constants import (
    CORPUS_META_FILE,
    DATA_DIRNAME,
    KB_DIRNAME,
    KB_META_FILE,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEWS_FILE,
)
from trace_dataset.io import write_json, write_jsonl

TOY_KB_VERSION = "toy-kb-1"
TOY_CORPUS_VERSION = "toy-corpus-1"

# business_id: (name, latitude, longitude, price, poi_type)
_POIS: dict[str, tuple[str, float, float, int | None, str]] = {
    "r01": ("Gumbo House", 29.9584, -90.0644, 1, "restaurant"),
    "r02": ("Bayou Grill", 29.9590, -90.0650, 2, "restaurant"),
    "r03": ("Courtyard Cafe", 29.9575, -90.0630, 2, "restaurant"),
    "r04": ("Garden Bistro", 29.9285, -90.0840, 3, "restaurant"),
    "r05": ("Frenchmen Oysters", 29.9640, -90.0578, 2, "restaurant"),
    "r06": ("Levee Steaks", 29.9430, -90.0690, 4, "restaurant"),
    "r07": ("City Park Tacos", 29.9930, -90.0980, 1, "restaurant"),
    "r08": ("Magazine Sushi", 29.9250, -90.0870, None, "restaurant"),
    "r09": ("Canal Pizza", 29.9520, -90.0700, 1, "restaurant"),
    "r10": ("Esplanade Vegan", 29.9650, -90.0620, 2, "restaurant"),
    "h01": ("Quarter Inn", 29.9580, -90.0660, 3, "hotel"),
    "h02": ("River Hotel", 29.9500, -90.0630, 4, "hotel"),
    "a01": ("Jazz Museum", 29.9620, -90.0570, None, "attraction"),
    "a02": ("Botanical Garden", 29.9910, -90.1010, None, "attraction"),
}
_REVIEWS: dict[str, tuple[str, str]] = {  # review_id: (business_id, text)
    "rv01": ("r01", "The seafood gumbo was rich and smoky, and the staff were quick. Cheap and cheerful."),
    "rv02": ("r01", "Loud on weekends but the shrimp po-boy is worth it."),
    "rv03": ("r02", "Lovely outdoor seating under the oaks and a relaxed, lively crowd at night."),
    "rv04": ("r03", "A quiet courtyard with the best beignets I have had in years."),
    "rv05": ("r04", "Elegant dining room, romantic lighting, and a long wine list."),
    "rv06": ("r05", "Raw oysters were briny and fresh; the bar gets loud after nine."),
    "rv07": ("r09", "Thin crust pizza, friendly owner, and parking is easy on the side street."),
    "rv08": ("r10", "Creative vegan plates and a cozy patio with outdoor seating."),
    "rv09": ("h01", "Clean rooms, free wifi, and a short walk to everything in the Quarter."),
    "rv10": ("a01", "Great live sets every afternoon; the exhibits on early jazz are fascinating."),
}
_RESTAURANTS = [f"r{i:02d}" for i in range(1, 11)]


def _turn(turn_id, role, action, text, *, refs=(), gold=(), alt=(), cites=()):
    return {
        "turn_id": turn_id,
        "role": role,
        "action": action,
        "text": text,
        "referenced_poi_ids": list(refs),
        "referenced_review_ids": [c[1] for c in cites],
        "gold_poi_ids": list(gold),
        "acceptable_alternative_poi_ids": list(alt),
        "citations": [
            {"label": label, "review_id": rid, "business_id": _REVIEWS[rid][0]} for label, rid in cites
        ],
    }


def _spans(turns: list[dict]) -> list[dict]:
    from trace_dataset.quotes import extract_quotes, span_checksum

    out: list[dict] = []
    for t in turns:
        texts = {c["review_id"]: _REVIEWS[c["review_id"]][1] for c in t["citations"]}
        for q in extract_quotes(t["text"]):
            for rid, text in texts.items():
                start = text.find(q.text)
                if start >= 0:
                    out.append(
                        {
                            "quote_id": len(out) + 1,
                            "review_id": rid,
                            "start": start,
                            "end": start + len(q.text),
                            "checksum": span_checksum(q.text),
                        }
                    )
                    break
    return out


def _dialogue(did: str, split: str, difficulty: str, turns: list[dict], poi_type: str = "restaurant") -> dict:
    used = list(
        dict.fromkeys(p for t in turns for p in t["gold_poi_ids"] + t["acceptable_alternative_poi_ids"])
    )
    candidates = (used + [p for p in _RESTAURANTS if p not in used])[:8]
    return {
        "dialogue_id": did,
        "split": split,
        "scenario": {
            "persona_type": "food_explorer",
            "persona": "A curious eater on a short trip.",
            "travel_context": "first visit",
            "city": "New Orleans",
            "poi_type": poi_type,
            "difficulty": difficulty,
        },
        "candidate_poi_ids": candidates,
        "pool_16_poi_ids": candidates
        + [p for p in _RESTAURANTS + ["h01", "h02", "a01", "a02"] if p not in candidates],
        "pool_32_poi_ids": list(_POIS),
        "open_set_poi_ids": list(_POIS),
        "turns": turns,
        "quote_spans": _spans(turns),
        "metadata": {
            "generator": "toy",
            "backend": "template",
            "model": "",
            "seed": 42,
            "kb_version": TOY_KB_VERSION,
        },
    }


def _d1() -> list[dict]:
    """Toy dialogue 1's turns: a rejection, then an accepted recommendation (New Orleans seafood)."""
    return [
        _turn(0, "user", "greet_and_seek", "Hi! We're in New Orleans and want a cheap place for seafood."),
        _turn(1, "system", "ask_preference", "Happy to help! Do you prefer a quiet spot or a lively one?"),
        _turn(2, "user", "provide_preference", "Somewhere lively, please."),
        _turn(
            3,
            "system",
            "recommend",
            'Try Gumbo House [R1]: one reviewer says "The seafood gumbo was rich and smoky" [R1]. It is cheap.',
            refs=["r01"],
            gold=["r01"],
            alt=["r09"],
            cites=[("R1", "rv01")],
        ),
        _turn(
            4,
            "user",
            "reject_and_refine",
            "Hmm, I'd rather sit outside. Anything with outdoor seating?",
            refs=["r01"],
        ),
        _turn(
            5,
            "system",
            "recommend",
            'Bayou Grill has "Lovely outdoor seating under the oaks" [R1] and a lively crowd.',
            refs=["r02"],
            gold=["r02"],
            cites=[("R1", "rv03")],
        ),
        _turn(6, "user", "accept", "Perfect, thanks!"),
        _turn(7, "system", "farewell", "Enjoy your dinner at Bayou Grill!"),
    ]


def _d2() -> list[dict]:
    """Toy dialogue 2's turns: a compare turn, a rejection and a vegan recommendation."""
    return [
        _turn(0, "user", "greet_and_seek", "Looking for a romantic dinner, upscale is fine."),
        _turn(
            1,
            "system",
            "compare",
            'Garden Bistro offers "romantic lighting" [R1], while Courtyard Cafe is "A quiet courtyard" [R2].',
            refs=["r04", "r03"],
            gold=["r04"],
            alt=["r03"],
            cites=[("R1", "rv05"), ("R2", "rv04")],
        ),
        _turn(
            2,
            "user",
            "reject_and_refine",
            "Not Garden Bistro. Something more affordable, maybe vegan?",
            refs=["r04"],
        ),
        _turn(
            3,
            "system",
            "recommend",
            'Esplanade Vegan serves "Creative vegan plates" [R1] with a cozy patio.',
            refs=["r10"],
            gold=["r10"],
            cites=[("R1", "rv08")],
        ),
        _turn(4, "user", "accept", "Sounds great."),
        _turn(5, "system", "farewell", "Have a lovely evening!"),
    ]


def _d3() -> list[dict]:
    """Toy dialogue 3's turns: two recommendations, pizza then oysters."""
    return [
        _turn(0, "user", "greet_and_seek", "Where can I get pizza near Canal Street?"),
        _turn(
            1,
            "system",
            "recommend",
            'Canal Pizza: "Thin crust pizza, friendly owner" [R1], and parking is easy.',
            refs=["r09"],
            gold=["r09"],
            cites=[("R1", "rv07")],
        ),
        _turn(2, "user", "provide_preference", "Nice. And oysters afterwards?"),
        _turn(
            3,
            "system",
            "recommend",
            'Frenchmen Oysters: "Raw oysters were briny and fresh" [R1].',
            refs=["r05"],
            gold=["r05"],
            cites=[("R1", "rv06")],
        ),
        _turn(4, "user", "accept", "Great."),
        _turn(5, "system", "farewell", "Enjoy!"),
    ]


def _d4() -> list[dict]:
    """Toy dialogue 4's turns: one recommendation without citations (the train split)."""
    return [
        _turn(0, "user", "greet_and_seek", "Any good tacos?"),
        _turn(1, "system", "recommend", "City Park Tacos is a budget favourite.", refs=["r07"], gold=["r07"]),
        _turn(2, "user", "accept", "Thanks."),
        _turn(3, "system", "farewell", "Bye!"),
    ]


def toy_dialogues() -> list[dict]:
    """The four toy dialogues (three test, one train)."""
    return [
        _dialogue("toy_00001", "test", "Easy", _d1()),
        _dialogue("toy_00002", "test", "Medium", _d2()),
        _dialogue("toy_00003", "test", "Easy", _d3()),
        _dialogue("toy_00004", "train", "Easy", _d4()),
    ]


def _poi_record(pid: str) -> dict:
    name, lat, lon, price, poi_type = _POIS[pid]
    return {
        "business_id": pid,
        "name": name,
        "address": "",
        "city": "New Orleans",
        "state": "LA",
        "latitude": lat,
        "longitude": lon,
        "categories": [poi_type.title()],
        "stars": 4.0,
        "review_count": 10,
        "price": price,
        "attributes": {},
        "poi_type": poi_type,
        "review_ids": [rid for rid, (bid, _) in _REVIEWS.items() if bid == pid],
    }


def write_toy_kb(kb_dir: str | os.PathLike, *, with_text: bool = True) -> Path:
    kb_dir = Path(kb_dir)
    write_jsonl(kb_dir / POIS_FILE, [_poi_record(p) for p in _POIS])
    index = [
        {"review_id": rid, "business_id": bid, "stars": 4.0, "date": "2020-01-01", "length": len(text)}
        for rid, (bid, text) in _REVIEWS.items()
    ]
    write_jsonl(kb_dir / REVIEW_INDEX_FILE, index)
    if with_text:
        write_jsonl(
            kb_dir / REVIEWS_FILE,
            [
                {"review_id": rid, "business_id": bid, "stars": 4.0, "date": "2020-01-01", "text": text}
                for rid, (bid, text) in _REVIEWS.items()
            ],
        )
    write_json(
        kb_dir / KB_META_FILE, {"kb_version": TOY_KB_VERSION, "pois": len(_POIS), "reviews": len(_REVIEWS)}
    )
    return kb_dir


def write_toy_data_dir(root: str | os.PathLike, *, with_text: bool = True) -> Path:
    """Write the toy data directory (data/{train,validation,test}.jsonl.gz, knowledge_base/, corpus.json)."""
    root = Path(root)
    dialogues = toy_dialogues()
    for split in ("train", "validation", "test"):
        write_jsonl(root / DATA_DIRNAME / f"{split}.jsonl.gz", [d for d in dialogues if d["split"] == split])
    write_toy_kb(root / KB_DIRNAME, with_text=with_text)
    write_json(root / CORPUS_META_FILE, {"corpus_version": TOY_CORPUS_VERSION, "dialogues": len(dialogues)})
    return root


def reference_predictions(dialogues: list[dict], pool: str = "closed") -> list[dict]:
    """The "reference copy" system: reference text and citations, gold first then the other candidates."""
    from trace_dataset.constants import POOL_FIELDS
    from trace_dataset.prediction import Prediction

    rows = []
    for d in dialogues:
        for t in d["turns"]:
            if t["role"] != "system":
                continue
            gold = list(t["gold_poi_ids"])
            ranked = gold + [p for p in d[POOL_FIELDS[pool]] if p not in gold] if gold else []
            cites = {c["label"]: c["review_id"] for c in t["citations"]}
            rows.append(Prediction(d["dialogue_id"], t["turn_id"], tuple(ranked), t["text"], cites).to_dict())
    return rows


def write_toy_predictions(path: str | os.PathLike, split: str = "test", pool: str = "closed") -> Path:
    path = Path(path)
    write_jsonl(path, reference_predictions([d for d in toy_dialogues() if d["split"] == split], pool))
    return path
