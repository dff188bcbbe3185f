"""Same inputs -> byte-identical corpus, whatever the number of workers; another seed -> another corpus."""

from __future__ import annotations

from trace_dataset.constants import SPLITS
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
