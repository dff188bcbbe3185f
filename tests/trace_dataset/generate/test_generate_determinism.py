"""Same inputs -> byte-identical corpus, whatever the number of workers; another seed -> another corpus."""

from __future__ import annotations

import pytest

from trace_dataset.constants import SPLITS
from trace_dataset.datadir import iter_dialogues
from trace_dataset.generate import generate_corpus

FILES = [f"data/{s}.jsonl.gz" for s in SPLITS] + ["corpus.json"]


def _bytes(root):
    return {f: (root / f).read_bytes() for f in FILES}


def test_byte_identical_reruns_and_worker_counts(fixture_kb, tmp_path):
    a = generate_corpus(fixture_kb, tmp_path / "a", n=150, seed=42, workers=1, progress=False)
    b = generate_corpus(fixture_kb, tmp_path / "b", n=150, seed=42, workers=1, progress=False)
    c = generate_corpus(fixture_kb, tmp_path / "c", n=150, seed=42, workers=2, progress=False)
    assert _bytes(tmp_path / "a") == _bytes(tmp_path / "b") == _bytes(tmp_path / "c")
    assert a == b == c
    d = generate_corpus(fixture_kb, tmp_path / "d", n=150, seed=7, workers=2, progress=False)
    assert d["versions"]["corpus_version"] != a["versions"]["corpus_version"]


def test_prefix_property_of_dialogues(fixture_kb, tmp_path):
    """A dialogue depends on (seed, index) and the corpus-wide assignment only: rerunning in place
    (overwriting) gives the same bytes, and no temp files are left behind."""
    generate_corpus(fixture_kb, tmp_path / "x", n=30, seed=42, workers=1, progress=False)
    first = _bytes(tmp_path / "x")
    generate_corpus(fixture_kb, tmp_path / "x", n=30, seed=42, workers=2, progress=False)
    assert _bytes(tmp_path / "x") == first
    assert not [p for p in (tmp_path / "x").rglob("*.tmp")]


def test_one_split_gives_the_same_dialogues(fixture_kb, tmp_path):
    """split="test" (a blind set) changes each record's split and nothing else: the same generator draws."""
    generate_corpus(fixture_kb, tmp_path / "all", n=30, seed=5, workers=1, progress=False)
    report = generate_corpus(
        fixture_kb, tmp_path / "one", n=30, seed=5, workers=1, progress=False, split="test"
    )
    ordinary = sorted(iter_dialogues(tmp_path / "all"), key=lambda d: d["dialogue_id"])
    one = list(iter_dialogues(tmp_path / "one", "test"))
    assert [{**d, "split": "test"} for d in ordinary] == one
    assert report["counts"]["splits"] == {"train": 0, "validation": 0, "test": 30}
    assert report["parameters"]["split"] == "test"
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        generate_corpus(fixture_kb, tmp_path / "x", n=3, split="dev")
    assert not (tmp_path / "x").exists()
