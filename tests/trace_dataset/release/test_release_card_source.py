"""The card says where the data comes from: the built-in synthetic bundle (no Yelp text, nothing to hide) or a
real Yelp bundle (the do-not-redistribute warning)."""

from __future__ import annotations

import yaml

from tests.support.tinydata import make_from_real_sample
from trace_dataset.constants import KB_DIRNAME, KB_META_FILE
from trace_dataset.io import read_json, write_json
from trace_dataset.release import hydrate_release, write_release
from trace_dataset.release.card import write_card

WARNING = "do not redistribute"


def _split(text: str) -> tuple[dict, list[str]]:
    """(front matter, the body's non-blank lines)."""
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), [line for line in body.splitlines() if line.strip()]


def test_synthetic_corpus_card_says_so_first_and_carries_no_yelp_warning(tmp_path):
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb
    from trace_dataset.yelp.synth import write_synthetic_bundle

    bundle = write_synthetic_bundle(tmp_path / "yelp", seed=7, scale=0.1)
    build_kb(bundle, tmp_path / "kb", per_cell=9)
    generate_corpus(tmp_path / "kb", tmp_path / "corpus", n=12, seed=42, workers=1, progress=False)
    text = (tmp_path / "corpus" / "README.md").read_text(encoding="utf-8")
    meta, lines = _split(text)
    assert lines[0].startswith("# Trace")
    assert lines[1].startswith("> **Synthetic data: no Yelp text.**") and "(seed 7, scale 0.1)" in lines[1]
    assert WARNING not in text.lower() and "Local data" not in text
    assert "synthetic" in meta["tags"] and "yelp" not in meta["tags"] and "license_name" not in meta
    assert meta["pretty_name"].endswith("(synthetic data)")

    # its release says the same, and hydrates from the bundle that `trace-bench yelp synth` writes again
    write_release(tmp_path / "corpus", tmp_path / "release")
    release_card = (tmp_path / "release" / "README.md").read_text(encoding="utf-8")
    assert _split(release_card)[1][1].startswith("> **Synthetic data")
    assert WARNING not in release_card.lower()
    assert "trace-bench yelp synth --out yelp-synthetic --seed 7 --scale 0.1" in release_card
    write_synthetic_bundle(tmp_path / "yelp-synthetic", seed=7, scale=0.1)
    report = hydrate_release(tmp_path / "release", tmp_path / "yelp-synthetic", tmp_path / "hydrated")
    assert report["byte_identical"] is True
    assert (tmp_path / "hydrated" / "README.md").read_bytes() == (
        tmp_path / "corpus" / "README.md"
    ).read_bytes()


def test_real_yelp_corpus_card_keeps_the_warning(yelp_sample_dir, tmp_path):
    tiny = make_from_real_sample(tmp_path, yelp_sample_dir)
    meta_file = tiny.corpus / KB_DIRNAME / KB_META_FILE
    write_json(
        meta_file, {**read_json(meta_file), "source": "yelp"}
    )  # what build_kb records for a real bundle
    text = write_card(tiny.corpus).read_text(encoding="utf-8")
    meta, lines = _split(text)
    assert WARNING in text.lower() and "Local data" in text
    assert not any("Synthetic data" in line for line in lines)
    assert "yelp" in meta["tags"] and "synthetic" not in meta["tags"]
    assert meta["license_name"] == "cc-by-4.0-for-authored-content-yelp-terms-for-yelp-content"
    assert "grounded in Yelp points of interest" in text and "download the Yelp Open Dataset" in text
