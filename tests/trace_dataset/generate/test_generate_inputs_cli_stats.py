"""Bad inputs give clear errors; the `trace-bench corpus` commands; the Table 3 statistics."""

from __future__ import annotations

import json

import pytest

from tests.support.gen_kb import write_fixture_kb
from trace_bench.cli import main
from trace_dataset.constants import GENERATOR_BACKENDS, POIS_FILE, REVIEWS_FILE
from trace_dataset.generate import generate_corpus
from trace_dataset.generate.stats import dialogue_stats, format_stats
from trace_dataset.io import TraceDataError


def test_missing_kb_dir(tmp_path):
    with pytest.raises(TraceDataError, match="knowledge base folder not found"):
        generate_corpus(tmp_path / "nope", tmp_path / "out", n=5)


def test_folder_without_pois(tmp_path):
    (tmp_path / "kb").mkdir()
    with pytest.raises(TraceDataError, match=f"missing {POIS_FILE}"):
        generate_corpus(tmp_path / "kb", tmp_path / "out", n=5)


def test_cell_too_small_for_8_candidates(tmp_path):
    kb = write_fixture_kb(tmp_path / "kb", cities=("Tampa",), types=("hotel", "attraction"), per_cell=7)
    with pytest.raises(TraceDataError, match=r"at least 8 POIs.*Tampa x attraction': 7"):
        generate_corpus(kb, tmp_path / "out", n=5)
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_kb_without_review_text(tmp_path):
    kb = write_fixture_kb(tmp_path / "kb", cities=("Tampa",), types=("hotel",), per_cell=9)
    (kb / REVIEWS_FILE).unlink()
    with pytest.raises(TraceDataError, match="no review text"):
        generate_corpus(kb, tmp_path / "out", n=5)


def test_bad_arguments(fixture_kb, tmp_path):
    with pytest.raises(ValueError, match="unknown backend 'gpt'"):
        generate_corpus(fixture_kb, tmp_path / "o", n=5, backend="gpt")
    with pytest.raises(ValueError, match="positive integer"):
        generate_corpus(fixture_kb, tmp_path / "o", n=0)
    with pytest.raises(ValueError, match="workers must be >= 1"):
        generate_corpus(fixture_kb, tmp_path / "o", n=5, workers=0)
    with pytest.raises(TraceDataError, match="must differ"):
        generate_corpus(fixture_kb, fixture_kb, n=5)


def test_cli_generate_and_stats(fixture_kb, tmp_path, capsys):
    assert GENERATOR_BACKENDS == ("template", "llm")
    out = tmp_path / "c"
    rc = main(
        [
            "corpus",
            "generate",
            "--kb",
            str(fixture_kb),
            "--out",
            str(out),
            "--n",
            "24",
            "--workers",
            "1",
            "--no-progress",
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "wrote 24 dialogues" in printed and "corpus_version" in printed
    assert main(["corpus", "stats", str(out)]) == 0
    table = capsys.readouterr().out
    assert (
        "Avg. turns / dialogue" in table
        and "Rejection rate" in table
        and "Rec. turns with alternatives" in table
    )
    assert main(["corpus", "stats", str(out), "--json", "--split", "train"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["dialogues"] == stats["splits"]["train"] < 24
    assert main(["corpus", "generate", "--kb", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert "knowledge base folder not found" in capsys.readouterr().err
    assert main(["corpus", "stats", str(tmp_path / "missing")]) == 2


def _turn(i, role, action, pois=(), gold=(), alts=()):
    return {
        "turn_id": i,
        "role": role,
        "action": action,
        "text": "x",
        "referenced_poi_ids": list(pois),
        "referenced_review_ids": [],
        "gold_poi_ids": list(gold),
        "acceptable_alternative_poi_ids": list(alts),
        "citations": [],
    }


def test_stats_definitions():
    turns = [
        _turn(0, "user", "greet_and_seek"),
        _turn(1, "system", "ask_preference"),
        _turn(2, "user", "provide_preference"),
        _turn(3, "system", "recommend", ["a"], ["a"], ["b"]),
        _turn(4, "user", "reject_and_refine", ["a"]),
        _turn(5, "system", "compare", ["b", "c"], ["b"]),
        _turn(6, "user", "accept", ["b"]),
        _turn(7, "system", "farewell", ["b"]),
    ]
    d = {
        "dialogue_id": "crs_yelp_00001",
        "split": "train",
        "candidate_poi_ids": list("abcdefgh"),
        "scenario": {"persona_type": "family", "city": "Tampa", "poi_type": "hotel", "difficulty": "Easy"},
        "turns": turns,
        "metadata": {"backend": "template"},
    }
    s = dialogue_stats([d, dict(d, split="test")])
    assert s["turns_mean"] == 8 and s["turns_sd"] == 0
    assert s["pois_recommended_mean"] == 3
    assert s["rejection_rate"] == 0.25  # 1 of 4 user turns
    assert s["rejection_share_of_all_turns"] == 0.125
    assert s["recommendation_turns"] == 4 and s["recommendation_turns_with_alternatives"] == 0.5
    assert s["tiers"]["Easy"] == 2 and s["persona_archetypes"] == 1
    assert "29.4%" in format_stats(s)


def test_corpus_group_has_its_four_commands():
    """`corpus` holds generate and stats, and release and hydrate from trace_dataset.release.cli."""
    import argparse

    from trace_dataset.generate.cli import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    commands = {
        "generate": ["--kb", "kb", "--out", "out"],
        "stats": ["somewhere"],
        "release": ["--corpus", "corpus", "--out", "out"],
        "hydrate": ["--release", "release", "--yelp", "yelp", "--out", "out"],
    }
    funcs = {
        name: parser.parse_args(["corpus", name, *argv]).func.__name__ for name, argv in commands.items()
    }
    assert funcs == {
        "generate": "run_generate",
        "stats": "run_stats",
        "release": "run_release",
        "hydrate": "run_hydrate",
    }
    with pytest.raises(SystemExit):
        parser.parse_args(["corpus", "publish"])
