"""Every protocol's files, pinned: a teacher-forced run (closed pool, and the open pool on a seeded subset), the
interactive `trace` protocol (closed and open pool), SnipRec's protocol and Collab-REC's benchmark write the
bytes they wrote when `pinned_outputs.json` was made (SHA-256 of each file: predictions, run metadata, dialogue
records, travellers, metrics.json; the temporary folder and the package version masked). A change to what a
run writes changes a hash on purpose: rerun with `TRACE_UPDATE_PINNED_OUTPUTS=1` to rewrite the file and say
in the commit why the outputs changed."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path

import pytest

from trace_dataset import __version__ as TRACE_VERSION
from trace_dataset.kb.catalogue import CatalogueSpec, build_catalogue
from trace_harness.protocols.collab_rec.run import run_benchmark
from trace_harness.protocols.interactive.run import run_interactive
from trace_harness.protocols.interactive.simulator.sniprec_seeds import SeedCriteria
from trace_harness.protocols.interactive.sniprec import run_sniprec
from trace_harness.protocols.teacher_forced.runner import run_baseline

PINNED = Path(__file__).with_name("pinned_outputs.json")


def digest(path: Path, masks: dict[str, str]) -> str:
    """SHA-256 of a file's bytes (gzip members read through), with the temporary folders and version masked."""
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    for text, mask in {**masks, json.dumps(TRACE_VERSION): '"<version>"'}.items():
        data = data.replace(text.encode("utf-8"), mask.encode("utf-8"))
    return hashlib.sha256(data).hexdigest()[:16]


def check(out: Path, root: Path, data: Path | None = None) -> None:
    masks = {str(root.absolute()): "<root>"}
    if data is not None:  # the data folder as given and as resolved (a run may record either)
        masks |= {str(data.resolve()): "<data>", str(data.absolute()): "<data>"}
    got = {str(p.relative_to(root)): digest(p, masks) for p in sorted(out.rglob("*")) if p.is_file()}
    expected = json.loads(PINNED.read_text(encoding="utf-8")) if PINNED.exists() else {}
    prefix = str(out.relative_to(root)) + "/"
    if os.environ.get("TRACE_UPDATE_PINNED_OUTPUTS"):
        expected = {k: v for k, v in expected.items() if not k.startswith(prefix)} | got
        PINNED.write_text(json.dumps(dict(sorted(expected.items())), indent=1) + "\n", encoding="utf-8")
    mine = {k: v for k, v in expected.items() if k.startswith(prefix)}
    assert sorted(got) == sorted(mine)
    assert [k for k in mine if got[k] != mine[k]] == []


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the runs' paths relative to it, as a user's would be
    return tmp_path


def test_teacher_forced_runs(small_corpus, root):
    out = root / "teacher_forced"
    run_baseline("tfidf", small_corpus, out / "closed" / "tfidf.jsonl", progress=False)
    run_baseline("aspect", small_corpus, out / "open" / "aspect.jsonl", pool="open", subset=3, progress=False)
    run_baseline("popularity", small_corpus, out / "all" / "popularity.jsonl", split="all", progress=False)
    check(out, root, small_corpus)


def test_interactive_trace_protocol(small_corpus, root):
    out = root / "trace"
    run_interactive("tfidf", small_corpus, out / "closed", n=3, turns=4, progress=False, n_boot=200)
    run_interactive(
        "knowledge",
        small_corpus,
        out / "open",
        n=2,
        pool="open",
        split="validation",
        progress=False,
        n_boot=200,
    )
    check(out, root, small_corpus)


def test_sniprec_protocol(small_bundle, root):
    catalogue = root / "catalogue"
    build_catalogue(
        small_bundle,
        catalogue,
        CatalogueSpec(cities=("Philadelphia",), poi_types=("restaurant",), min_reviews=3),
    )
    out = root / "sniprec"
    criteria = SeedCriteria(user_reviews=(1, 99))  # the synthetic bundle has one review per user
    run_sniprec("tfidf", catalogue, out / "tfidf", n=3, criteria=criteria, progress=False, n_boot=200)
    check(out, root)


def test_collab_rec_benchmark(collab_rec_dir, root):
    out = root / "collab_rec"
    kb, queries = collab_rec_dir / "eu-cities-database.csv", collab_rec_dir / "queries.csv"
    run_benchmark("toppop", kb, queries, out / "toppop", limit=5, progress=False)
    run_benchmark("randrec", kb, queries, out / "randrec", limit=5, progress=False)
    check(out, root, collab_rec_dir)  # the shared folder's path masked: it differs between checkouts
