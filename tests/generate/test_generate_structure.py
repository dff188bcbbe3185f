"""Every structural rule of issue 3 checked on generated corpora, with code independent of validate.py."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from trace_dataset.constants import (
    ACTION_ROLES,
    CITY_NAMES,
    PERSONA_TYPES,
    POI_TYPES,
    REJECTIONS_PER_TIER,
    SPLITS,
    TIERS,
)
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.quotes import span_checksum
from trace_dataset.schema import DIALOGUE_FEATURES

QUOTE = re.compile(r'"([^"]+)"\s\[R(\d+)\]')
ANY_DOUBLE_QUOTE = re.compile(r'["\u201c\u201d]')


def _keys(feature) -> list[str]:
    return list(feature)


def _item(feature):
    return feature[0] if isinstance(feature, list) else feature.feature


def check_dialogue(d: dict, kb: KnowledgeBase) -> None:
    f = DIALOGUE_FEATURES
    assert list(d) == _keys(f)
    assert list(d["scenario"]) == _keys(f["scenario"])
    assert list(d["metadata"]) == _keys(f["metadata"])
    turn_keys = _keys(_item(f["turns"]))
    assert re.fullmatch(r"crs_yelp_\d{5}", d["dialogue_id"])
    sc = d["scenario"]
    assert sc["persona_type"] in PERSONA_TYPES and sc["city"] in CITY_NAMES and sc["poi_type"] in POI_TYPES
    assert sc["difficulty"] in TIERS and sc["persona"] and sc["travel_context"]
    assert d["split"] in SPLITS
    turns = d["turns"]
    assert 6 <= len(turns) <= 12
    for i, t in enumerate(turns):
        assert list(t) == turn_keys
        assert t["turn_id"] == i
        assert t["role"] == ("user" if i % 2 == 0 else "system")
        assert ACTION_ROLES[t["action"]] == t["role"]
    assert turns[0]["action"] == "greet_and_seek"
    assert turns[-1]["role"] == "system" and turns[-1]["action"] == "farewell"
    actions = [t["action"] for t in turns]
    assert actions.count("ask_preference") >= 1 and actions.count("compare") >= 1
    rec = [t for t in turns if t["action"] in ("recommend", "compare")]
    assert len({p for t in rec for p in t["referenced_poi_ids"]}) >= 3
    lo, hi = REJECTIONS_PER_TIER[sc["difficulty"]]
    assert lo <= actions.count("reject_and_refine") <= hi
    # candidates and pools
    cands = d["candidate_poi_ids"]
    assert len(cands) == 8 == len(set(cands))
    same_cell = {p.business_id for p in kb.pois_in(sc["city"], sc["poi_type"])}
    assert set(d["open_set_poi_ids"]) == same_cell and len(d["open_set_poi_ids"]) == len(same_cell)
    assert set(cands) <= set(d["pool_16_poi_ids"]) <= set(d["pool_32_poi_ids"]) <= same_cell
    assert len(d["pool_16_poi_ids"]) == min(16, len(same_cell))
    assert len(d["pool_32_poi_ids"]) == min(32, len(same_cell))
    # rejections: reject the POI just recommended, and a recommendation follows
    for i, t in enumerate(turns):
        if t["action"] == "reject_and_refine":
            assert turns[i - 1]["action"] in ("recommend", "compare")
            assert t["referenced_poi_ids"] == turns[i - 1]["gold_poi_ids"]
            assert turns[i + 1]["action"] in ("recommend", "compare")
    # gold, alternatives, citations, quotes
    spans = d["quote_spans"]
    q = 0
    for t in turns:
        if t["action"] in ("recommend", "compare"):
            assert len(t["gold_poi_ids"]) == 1 and t["gold_poi_ids"][0] in t["referenced_poi_ids"]
            assert set(t["acceptable_alternative_poi_ids"]) <= set(cands) - set(t["gold_poi_ids"])
            if t["action"] == "compare":
                assert len(t["referenced_poi_ids"]) == 2 and t["referenced_poi_ids"][0] == t["gold_poi_ids"][0]
            labels = {c["label"]: c for c in t["citations"]}
            assert [c["label"] for c in t["citations"]] == [f"R{k + 1}" for k in range(len(t["citations"]))]
            assert t["referenced_review_ids"] == [c["review_id"] for c in t["citations"]]
            quotes = QUOTE.findall(t["text"])
            assert quotes, t["text"]
            assert len(ANY_DOUBLE_QUOTE.findall(t["text"])) == 2 * len(quotes)  # no stray double quotes
            backed = set()
            for text, n in quotes:
                cit = labels[f"R{n}"]
                review = kb.reviews[cit["review_id"]]
                assert review.business_id == cit["business_id"]
                assert cit["business_id"] in t["referenced_poi_ids"]
                span = spans[q]
                assert span["quote_id"] == q + 1 and span["review_id"] == cit["review_id"]
                assert review.text[span["start"] : span["end"]] == text  # verbatim, at the stored offsets
                assert span["checksum"] == span_checksum(text)
                assert 4 <= len(text.split()) <= 20
                backed.add(cit["business_id"])
                q += 1
            assert backed == set(t["referenced_poi_ids"])  # every POI the turn names is quoted
        else:
            assert not t["gold_poi_ids"] and not t["acceptable_alternative_poi_ids"] and not t["citations"]
            assert not ANY_DOUBLE_QUOTE.search(t["text"])
    assert q == len(spans)
    assert d["metadata"]["backend"] == "template" and d["metadata"]["model"] == ""
    assert d["metadata"]["seed"] == 42 and d["metadata"]["kb_version"] == kb.version


def test_fixture_corpus_rules(fixture_corpus, fixture_dialogues, fixture_kb):
    kb = KnowledgeBase.load(fixture_kb)
    assert len(fixture_dialogues) == fixture_corpus[1]["counts"]["dialogues"] == 120
    for d in fixture_dialogues:
        check_dialogue(d, kb)
    ids = sorted(d["dialogue_id"] for d in fixture_dialogues)
    assert ids == [f"crs_yelp_{i:05d}" for i in range(1, 121)]


def test_records_encode_with_the_features(fixture_dialogues):
    for d in fixture_dialogues[:20]:
        encoded = DIALOGUE_FEATURES.encode_example(d)
        assert encoded["dialogue_id"] == d["dialogue_id"]


def test_splits_are_70_15_15_within_every_cell(fixture_dialogues):
    per_cell: dict[tuple[str, str], Counter] = {}
    for d in fixture_dialogues:
        per_cell.setdefault((d["scenario"]["city"], d["scenario"]["poi_type"]), Counter())[d["split"]] += 1
    for cell, counts in per_cell.items():
        n = sum(counts.values())
        for split, share in (("train", 0.70), ("validation", 0.15), ("test", 0.15)):
            assert abs(counts[split] - n * share) < 1, (cell, counts)
    total = Counter(d["split"] for d in fixture_dialogues)
    assert total["train"] == 84 and total["validation"] + total["test"] == 36


def test_corpus_directory_layout_and_report(fixture_corpus, fixture_kb):
    from trace_dataset.io import read_json, sha256_file

    out, report = fixture_corpus
    for split in SPLITS:
        assert (out / "data" / f"{split}.jsonl.gz").exists()
    for name in ("pois.jsonl.gz", "review_index.jsonl.gz", "reviews.jsonl.gz", "kb.json"):
        assert (out / "knowledge_base" / name).read_bytes() == (fixture_kb / name).read_bytes()
    assert read_json(out / "corpus.json") == report
    assert report["versions"]["kb_version"] == KnowledgeBase.load(fixture_kb).version
    for rel, sha in report["files"].items():
        assert sha256_file(out / rel) == sha
    assert len(report["versions"]["corpus_version"]) == 64
    assert sum(report["counts"]["tiers"].values()) == 120
    assert report["parameters"] == {"n": 120, "seed": 42, "backend": "template", "max_attempts": 50, "llm": None,
                                    "llm_attempts": None, "llm_json_repairs": None, "llm_fallback": None}


def test_texts_vary(fixture_dialogues):
    """Paraphrase grammar: recommendation openings and user greetings are not a handful of fixed strings."""
    recs = [t["text"] for d in fixture_dialogues for t in d["turns"] if t["action"] == "recommend"]
    greets = [d["turns"][0]["text"] for d in fixture_dialogues]
    assert len(set(recs)) == len(recs)
    assert len({g.split(".")[0] for g in greets}) >= 10
    words = Counter(w for t in recs for w in re.findall(r"[a-z']+", t.lower()))
    assert len(words) > 300


@pytest.mark.parametrize("which", ["fixture", "synthetic"])
def test_no_six_words_of_a_review_outside_quotes(which, request):
    """The release guard's rule: record strings with quotes removed share no six-word run with any review."""
    if which == "fixture":
        out = request.getfixturevalue("fixture_corpus")[0]
    else:
        out = request.getfixturevalue("synthetic_corpus")[0]
    from trace_dataset.datadir import iter_dialogues

    kb = KnowledgeBase.load(out / "knowledge_base")
    grams = set()
    for r in kb.reviews.values():
        w = re.findall(r"\w+", (r.text or "").lower())
        grams.update(tuple(w[i : i + 6]) for i in range(len(w) - 5))

    def strings(v):
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            for x in v.values():
                yield from strings(x)
        elif isinstance(v, list):
            for x in v:
                yield from strings(x)

    for d in iter_dialogues(out):
        text = re.sub(r'"[^"]*"', " [Q] ", " ".join(strings(d)))
        w = re.findall(r"\w+", text.lower())
        hits = [w[i : i + 6] for i in range(len(w) - 5) if tuple(w[i : i + 6]) in grams]
        assert not hits, (d["dialogue_id"], hits[:2])
