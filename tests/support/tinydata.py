"""Hand-made tiny Trace data for the release and builder tests: a Yelp bundle, the knowledge base built from
it and a small corpus whose dialogues follow schema.DIALOGUE_FEATURES exactly (every quote is a verbatim
span review_text[start:end], listed in quote_spans in order of appearance). All text is made up here.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tests.support.kb as fixture_kb
from trace_dataset.constants import (
    KB_DIRNAME,
    KB_META_FILE,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEW_MAX_CHARS,
    REVIEWS_FILE,
    SPLITS,
    YELP_BUSINESS_FILE,
    YELP_REVIEW_FILE,
)
from trace_dataset.datadir import split_file
from trace_dataset.io import read_jsonl, write_json, write_jsonl
from trace_dataset.quotes import span_checksum
from trace_dataset.schema import ATTRIBUTE_FEATURES, DIALOGUE_FEATURES, TURN_FEATURES

# Review vocabulary (made up); the dialogue templates below use other words, so that no six-word run of
# authored text can coincide with a review.
_ADJ = [
    "crispy",
    "smoky",
    "tangy",
    "silky",
    "zesty",
    "buttery",
    "briny",
    "toasty",
    "velvety",
    "peppery",
    "charred",
    "mellow",
    "fluffy",
    "sticky",
    "flaky",
    "juicy",
]
_NOUN = [
    "gumbo",
    "brisket",
    "oysters",
    "biscuits",
    "tamales",
    "pierogi",
    "ramen",
    "pho",
    "crepes",
    "falafel",
    "dumplings",
    "churros",
    "beignets",
    "shakshuka",
    "paella",
    "kimchi",
]
_VERB = ["arrived", "lingered", "sparkled", "wobbled", "crackled", "simmered", "glistened", "tumbled"]
_PLACE = ["patio", "counter", "booth", "terrace", "courtyard", "mezzanine", "veranda", "bar"]


def _rid(prefix: str, i: int) -> str:
    raw = hashlib.sha256(f"{prefix}{i}".encode()).digest()
    return base64.urlsafe_b64encode(raw).decode()[:22]


def _sentence(rng: random.Random) -> str:
    return (
        f"The {rng.choice(_ADJ)} {rng.choice(_NOUN)} {rng.choice(_VERB)} near the {rng.choice(_ADJ)} "
        f"{rng.choice(_PLACE)} with {rng.choice(_ADJ)} {rng.choice(_NOUN)} and {rng.choice(_NOUN)}."
    )


def review_text(rng: random.Random, i: int) -> str:
    n = 3 + i % 5
    text = " ".join(_sentence(rng) for _ in range(n))
    if i % 7 == 0:  # Yelp texts carry paragraph breaks, non-ASCII and embedded double quotes
        text = text.replace(". ", ".\n\n", 1) + ' Café crème ☕ was “fine”, the so-called "famous" flan too.'
    if i % 11 == 0:
        text = text + " " + " ".join(_sentence(rng) for _ in range(12))  # longer than REVIEW_MAX_CHARS
    return text


@dataclass
class Tiny:
    yelp: Path
    kb: Path
    corpus: Path
    businesses: list[dict[str, Any]]
    reviews: list[dict[str, Any]]  # Yelp review lines


def yelp_business(i: int, city: str) -> dict[str, Any]:
    return {
        "business_id": _rid("biz", i),
        "name": f"Harbor Spot {i}",
        "address": f"{100 + i} Main St",
        "city": city,
        "state": "FL",
        "postal_code": "33602",
        "latitude": 27.95 + i / 1000,
        "longitude": -82.45 - i / 1000,
        "stars": 3.5 + (i % 3) / 2,
        "review_count": 10 + i,
        "is_open": 1,
        "attributes": {"RestaurantsPriceRange2": str(1 + i % 4), "WiFi": "u'free'"},
        "categories": "Restaurants, Seafood",
        "hours": None,
    }


def yelp_review(i: int, business_id: str, rng: random.Random) -> dict[str, Any]:
    return {
        "review_id": _rid("rev", i),
        "user_id": _rid("usr", i),
        "business_id": business_id,
        "stars": float(1 + i % 5),
        "useful": i % 3,
        "funny": 0,
        "cool": 1,
        "text": review_text(rng, i),
        "date": f"2019-0{1 + i % 9}-1{i % 10} 12:00:00",
    }


def write_yelp(folder: Path, businesses: list[dict], reviews: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, records in ((YELP_BUSINESS_FILE, businesses), (YELP_REVIEW_FILE, reviews)):
        with open(folder / name, "w", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r, separators=(",", ":")) + "\n")  # the dump's compact layout
    return folder


def write_kb(folder: Path, businesses: list[dict], reviews: list[dict]) -> Path:
    """The knowledge-base files in the builder's format (schema field order, text truncated, files listed), from
    Yelp-like records, through the one test KB writer (tests/support/kb.py)."""
    by_biz: dict[str, list[dict]] = {}
    for r in reviews:
        by_biz.setdefault(r["business_id"], []).append(r)
    pois, rows = [], []
    for b in businesses:
        revs = by_biz.get(b["business_id"], [])
        attributes = {k: None for k in ATTRIBUTE_FEATURES}
        attributes.update({"wifi": "free", "ambience": [], "parking": [], "good_for_meal": [], "dietary": []})
        pois.append(
            {
                "business_id": b["business_id"],
                "name": b["name"],
                "address": b["address"],
                "city": "Tampa",
                "state": b["state"],
                "latitude": b["latitude"],
                "longitude": b["longitude"],
                "categories": ["Restaurants", "Seafood"],
                "stars": b["stars"],
                "review_count": b["review_count"],
                "price": int(b["attributes"]["RestaurantsPriceRange2"]),
                "attributes": attributes,
                "poi_type": "restaurant",
                "review_ids": [r["review_id"] for r in revs],
            }
        )
        rows.extend({k: r[k] for k in ("review_id", "business_id", "stars", "date", "text")} for r in revs)
    return fixture_kb.write_kb(
        folder,
        pois,
        rows,
        version="tiny-kb-1",
        max_chars=REVIEW_MAX_CHARS,
        source="hand-made test data",
        list_files=True,
    )


_WORD = re.compile(r"[A-Za-z]+")


def pick_span(text: str, rng: random.Random, n_words: int = 4) -> tuple[int, int]:
    """Offsets of `n_words` consecutive plain words inside the first REVIEW_MAX_CHARS characters."""
    head = text[:REVIEW_MAX_CHARS]
    words = list(_WORD.finditer(head))
    while True:
        i = rng.randrange(0, len(words) - n_words)
        start, end = words[i].start(), words[i + n_words - 1].end()
        if not any(c in head[start:end] for c in '"\n\u201c\u201d'):
            return start, end


def _turn(turn_id: int, role: str, action: str, text: str, **fields: Any) -> dict[str, Any]:
    t = {
        "turn_id": turn_id,
        "role": role,
        "action": action,
        "text": text,
        "referenced_poi_ids": [],
        "referenced_review_ids": [],
        "gold_poi_ids": [],
        "acceptable_alternative_poi_ids": [],
        "citations": [],
    }
    t.update(fields)
    assert list(t) == list(TURN_FEATURES)
    return t


def _quoted(
    poi: dict,
    curly: bool,
    reviews: dict[str, dict],
    rng: random.Random,
    spans: list[dict[str, Any]],
    quotes_per_turn: int,
) -> tuple[str, list[str], list[dict]]:
    """A recommendation's quotes from `poi`'s reviews: the text, the review ids and the citations; each quote's
    span is appended to `spans` (the dialogue's quote_spans)."""
    parts, rids, cites = [], [], []
    for k in range(quotes_per_turn):
        rid = rng.choice(poi["review_ids"])
        start, end = pick_span(reviews[rid]["text"], rng, n_words=6 + k)  # >= 6 words: the corpus
        # itself holds six-word review runs, so the release's leak check has something to remove
        span = reviews[rid]["text"][start:end]
        spans.append(
            {
                "quote_id": len(spans) + 1,
                "review_id": rid,
                "start": start,
                "end": end,
                "checksum": span_checksum(span),
            }
        )
        label = f"R{k + 1}"
        mark = ("\u201c", "\u201d") if curly and k == 1 else ('"', '"')
        parts.append(f"{mark[0]}{span}{mark[1]} [{label}]")
        rids.append(rid)
        cites.append({"label": label, "review_id": rid, "business_id": poi["business_id"]})
    return " and ".join(parts), rids, cites


def _dialogue_turns(
    first: dict,
    second: dict,
    candidates: list[str],
    quoted_first: tuple[str, list[str], list[dict]],
    quoted_second: tuple[str, list[str], list[dict]],
) -> list[dict[str, Any]]:
    """The eight turns: greet, ask, prefer, recommend `first` (quotes), reject, recommend `second` (quotes),
    accept, farewell."""
    q1, r1, c1 = quoted_first
    q2, r2, c2 = quoted_second
    return [
        _turn(0, "user", "greet_and_seek", "Hi! We land tomorrow and want somewhere to eat tonight."),
        _turn(1, "system", "ask_preference", "Happy to help. What budget are you thinking about?"),
        _turn(2, "user", "provide_preference", "Something affordable, please, close to downtown."),
        _turn(
            3,
            "system",
            "recommend",
            f"Try {first['name']}: visitors mention {q1}.",
            referenced_poi_ids=[first["business_id"]],
            referenced_review_ids=r1,
            gold_poi_ids=[first["business_id"]],
            acceptable_alternative_poi_ids=candidates[1:3],
            citations=c1,
        ),
        _turn(
            4,
            "user",
            "reject_and_refine",
            f"Hmm, not {first['name']}. Is there a quieter option?",
            referenced_poi_ids=[first["business_id"]],
        ),
        _turn(
            5,
            "system",
            "recommend",
            f"Then consider {second['name']}, where guests say {q2}.",
            referenced_poi_ids=[second["business_id"]],
            referenced_review_ids=r2,
            gold_poi_ids=[second["business_id"]],
            citations=c2,
        ),
        _turn(6, "user", "accept", "Perfect, booking that one."),
        _turn(7, "system", "farewell", "Enjoy your evening!"),
    ]


def make_dialogue(
    i: int,
    split: str,
    pois: list[dict],
    reviews: dict[str, dict],
    rng: random.Random,
    quotes_per_turn: int = 2,
) -> dict[str, Any]:
    """One dialogue: greet, ask, prefer, recommend (quotes), reject, recommend (quotes), accept, farewell."""
    candidates = [p["business_id"] for p in pois[:8]]
    spans: list[dict[str, Any]] = []
    first, second = pois[i % 4], pois[4 + i % 4]
    quoted_first = _quoted(first, False, reviews, rng, spans, quotes_per_turn)
    quoted_second = _quoted(second, True, reviews, rng, spans, quotes_per_turn)
    d = {
        "dialogue_id": f"crs_yelp_{i:05d}",
        "split": split,
        "scenario": {
            "persona_type": "foodie_explorer",
            "persona": "A curious eater on a short trip.",
            "travel_context": "weekend",
            "city": "Tampa",
            "poi_type": "restaurant",
            "difficulty": ("Easy", "Medium", "Hard", "Expert")[i % 4],
        },
        "candidate_poi_ids": candidates,
        "pool_16_poi_ids": [p["business_id"] for p in pois[:10]],
        "pool_32_poi_ids": [p["business_id"] for p in pois[:10]],
        "open_set_poi_ids": [p["business_id"] for p in pois],
        "turns": _dialogue_turns(first, second, candidates, quoted_first, quoted_second),
        "quote_spans": spans,
        "metadata": {
            "generator": "tinydata",
            "backend": "template",
            "model": "",
            "seed": 42,
            "kb_version": "tiny-kb-1",
        },
    }
    assert list(d) == list(DIALOGUE_FEATURES)
    return d


def write_corpus(root: Path, kb: Path, n: int = 12, seed: int = 42) -> Path:
    """A generated-corpus layout: data/{split}.jsonl.gz + a copy of the knowledge base + corpus.json."""
    rng = random.Random(seed)
    import shutil

    shutil.copytree(kb, root / KB_DIRNAME)
    pois = [json.loads(line) for line in _gz_lines(kb / POIS_FILE)]
    pois = [
        p for p in pois if (p["city"], p["poi_type"]) == (pois[0]["city"], pois[0]["poi_type"])
    ]  # one cell
    reviews = {r["review_id"]: r for r in (json.loads(line) for line in _gz_lines(kb / REVIEWS_FILE))}
    by_split: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for i in range(1, n + 1):
        split = SPLITS[0] if i % 4 in (1, 2) else SPLITS[1 + i % 2]
        by_split[split].append(make_dialogue(i, split, pois, reviews, rng))
    for split in SPLITS:
        write_jsonl(split_file(root, split), by_split[split])
    write_json(root / "corpus.json", {"generator": "tinydata", "n": n, "seed": seed})
    return root


def _gz_lines(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line for line in f if line.strip()]


def make_tiny(tmp: Path, n_dialogues: int = 12, seed: int = 42) -> Tiny:
    rng = random.Random(seed)
    businesses = [yelp_business(i, "Tampa") for i in range(10)]
    reviews = [yelp_review(i, businesses[i % 10]["business_id"], rng) for i in range(60)]
    # the bundle also holds reviews the knowledge base never kept (hydration must skip them)
    noise = [yelp_review(1000 + i, businesses[i % 10]["business_id"], rng) for i in range(30)]
    yelp = write_yelp(tmp / "yelp", businesses, noise[:15] + reviews + noise[15:])
    kb = write_kb(tmp / "kb", businesses, reviews)
    corpus = write_corpus(tmp / "corpus", kb, n=n_dialogues, seed=seed)
    return Tiny(yelp, kb, corpus, businesses, reviews)


def make_from_real_sample(tmp: Path, yelp_dir: Path, n_dialogues: int = 8, seed: int = 42) -> Tiny:
    """The same shapes over real Yelp lines (read in place from `yelp_dir`, written only under `tmp`):
    the 8 sample businesses with the most sample reviews become the knowledge base."""
    from trace_dataset.yelp.reader import iter_businesses, iter_reviews

    businesses = {b.business_id: b for b in iter_businesses(yelp_dir)}
    by_biz: dict[str, list[dict]] = {}
    for r in iter_reviews(yelp_dir):
        if r.business_id in businesses:
            by_biz.setdefault(r.business_id, []).append(
                {
                    "review_id": r.review_id,
                    "business_id": r.business_id,
                    "stars": r.stars,
                    "date": r.date,
                    "text": r.text,
                }
            )
    top = sorted(by_biz, key=lambda b: (-len(by_biz[b]), b))[:8]
    chosen = [
        {
            "business_id": b,
            "name": businesses[b].name,
            "address": businesses[b].address,
            "state": businesses[b].state,
            "latitude": businesses[b].latitude,
            "longitude": businesses[b].longitude,
            "stars": businesses[b].stars,
            "review_count": businesses[b].review_count,
            "attributes": {"RestaurantsPriceRange2": str(businesses[b].price or 2)},
        }
        for b in top
    ]
    reviews = [r for b in top for r in by_biz[b]]
    kb = write_kb(tmp / "kb", chosen, reviews)
    corpus = write_corpus(tmp / "corpus", kb, n=n_dialogues, seed=seed)
    return Tiny(yelp_dir, kb, corpus, chosen, reviews)


# ---------------------------------------------------------------------------------------------------
# Checks shared by the tests
# ---------------------------------------------------------------------------------------------------
KB_FILES = (POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE, KB_META_FILE)


def assert_same_corpus(hydrated: Path, corpus: Path) -> None:
    for split in SPLITS:
        assert split_file(hydrated, split).read_bytes() == split_file(corpus, split).read_bytes(), split
    for name in KB_FILES:
        assert (hydrated / KB_DIRNAME / name).read_bytes() == (corpus / KB_DIRNAME / name).read_bytes(), name


# Six consecutive words, with a tokeniser of its own (independent of trace_dataset.release.leaks).
_W = re.compile(r"\w+")


def _strings(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from _strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from _strings(x)


def _file_texts(path: Path) -> list[str]:
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    text = raw.decode("utf-8")
    if path.name.endswith((".jsonl", ".jsonl.gz")):
        return [" ".join(_strings(json.loads(line))) for line in text.splitlines() if line.strip()]
    if path.suffix == ".json":
        return [" ".join(_strings(json.loads(text)))]
    return [text]


def _sixgrams(text: str) -> set[tuple[str, ...]]:
    w = _W.findall(text.lower())
    return {tuple(w[i : i + 6]) for i in range(len(w) - 5)}


def review_sixgrams(kb: Path) -> set[tuple[str, ...]]:
    grams: set[tuple[str, ...]] = set()
    for r in read_jsonl(kb / REVIEWS_FILE):
        grams |= _sixgrams(r["text"])
    return grams


def overlap(root: Path, review_grams) -> list[str]:
    hits = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        for text in _file_texts(path):
            if _sixgrams(text) & review_grams:
                hits.append(str(path.relative_to(root)))
    return hits
