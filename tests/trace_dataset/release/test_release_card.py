"""The dataset card: YAML configs and features derived from the schema, datasheet, licence, determinism."""

from __future__ import annotations

import yaml
from datasets import Features

from trace_bench.citation import TRACE_CITATION
from trace_dataset.release import hydrate_release
from trace_dataset.release.card import FIELD_DESCRIPTIONS, collect_stats, render_card, write_card
from trace_dataset.schema import DIALOGUE_FEATURES, POI_FEATURES, REVIEW_FEATURES, REVIEW_INDEX_FEATURES


def _front(path) -> dict:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n", 2)[1])


def test_release_card_configs_and_features(release_dir):
    meta = _front(release_dir / "README.md")
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert list(configs) == ["dialogues", "knowledge_base", "review_index"]  # no review text in a release
    assert configs["dialogues"]["default"] is True
    assert configs["dialogues"]["data_files"] == [
        {"split": s, "path": f"data/{s}.jsonl.gz"} for s in ("train", "validation", "test")
    ]
    assert configs["knowledge_base"]["data_files"] == [
        {"split": "pois", "path": "knowledge_base/pois.jsonl.gz"}
    ]
    infos = {i["config_name"]: i for i in meta["dataset_info"]}
    assert Features._from_yaml_list(infos["dialogues"]["features"]) == DIALOGUE_FEATURES
    assert Features._from_yaml_list(infos["knowledge_base"]["features"]) == POI_FEATURES
    assert Features._from_yaml_list(infos["review_index"]["features"]) == REVIEW_INDEX_FEATURES
    assert [(s["name"], s["num_examples"]) for s in infos["dialogues"]["splits"]] == [
        ("train", 6),
        ("validation", 3),
        ("test", 3),
    ]
    assert infos["review_index"]["splits"][0]["num_examples"] == 60
    assert meta["license"] == "cc-by-4.0"


def test_hydrated_card_adds_reviews_and_equals_the_corpus_card(tiny, release_dir, tmp_path):
    hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")
    meta = _front(tmp_path / "hyd" / "README.md")
    infos = {i["config_name"]: i for i in meta["dataset_info"]}
    assert Features._from_yaml_list(infos["reviews"]["features"]) == REVIEW_FEATURES
    assert infos["reviews"]["splits"][0]["num_examples"] == 60
    # the card depends only on data + knowledge base: the corpus gets the same bytes
    write_card(tiny.corpus)
    assert (tiny.corpus / "README.md").read_bytes() == (tmp_path / "hyd" / "README.md").read_bytes()
    assert "do not redistribute" in (tmp_path / "hyd" / "README.md").read_text()


def test_card_text(release_dir):
    text = (release_dir / "README.md").read_text()
    for heading in (
        "## Loading",
        "## Hydration",
        "## Licence",
        "## Datasheet",
        "**Motivation.**",
        "**Composition.**",
        "**Collection process.**",
        "**Uses.**",
        "**Distribution.**",
        "**Maintenance.**",
    ):
        assert heading in text
    assert "CC BY 4.0" in text and "never redistributed" in text
    assert "trace-bench corpus hydrate --release" in text and "--allow-partial" in text
    assert "## Evaluation" in text and "inspect eval trace_bench/trace --model MODEL" in text
    assert "`eval.yaml`" in text and "`open:recall@1`" in text  # the eval.yaml's leaderboards, by id
    assert "Release (no review text)" in text
    assert "| statistic | value |\n|---|---|\n| Dialogues | 12 (train 6 / validation 3 / test 3) |" in text
    assert "| | |" not in text  # no table with an empty header row
    assert f"```bibtex\n{TRACE_CITATION}```" in text  # the one citation (trace_bench.citation)
    assert "| Tampa | 12 | 0 | 0 |" in text


def test_field_table_covers_the_schema():
    assert list(FIELD_DESCRIPTIONS) == list(DIALOGUE_FEATURES)


def test_card_is_deterministic(release_dir):
    stats = collect_stats(release_dir)
    assert render_card(stats) == render_card(collect_stats(release_dir))
    assert render_card(stats) == (release_dir / "README.md").read_text(encoding="utf-8")
