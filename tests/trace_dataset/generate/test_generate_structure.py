"""Every structural rule of a Trace dialogue checked on generated corpora, with code independent of validate.py."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from tests.support.dialogue_rules import check_dialogue
from trace_dataset.constants import (
    SPLITS,
)
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.schema import DIALOGUE_FEATURES


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
    assert report["parameters"] == {
        "n": 120,
        "seed": 42,
        "backend": "template",
        "max_attempts": 50,
        "llm": None,
        "llm_attempts": None,
        "llm_json_repairs": None,
        "llm_fallback": None,
    }


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
