"""SnipRec's protocol end to end with the rules seeker, on a catalogue of the synthetic bundle (the offline
stand-in for Yelp Philadelphia restaurants): the fixed first question, five ranked turns, the per-turn table."""

from __future__ import annotations

import pytest

from trace_dataset.io import read_json, read_jsonl
from trace_dataset.kb.catalogue import CatalogueSpec, build_catalogue
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.simulator.sniprec_seeds import SeedCriteria
from trace_harness.protocols.interactive.sniprec import FIRST_QUESTION, run_sniprec
from trace_metrics.lib.predictions import validate_predictions

RELAXED = SeedCriteria(user_reviews=(1, 99))  # the synthetic bundle has one review per user


@pytest.fixture(scope="module")
def catalogue(small_bundle, tmp_path_factory):
    out = tmp_path_factory.mktemp("ia_cat") / "catalogue"
    build_catalogue(
        small_bundle, out, CatalogueSpec(cities=("Philadelphia",), poi_types=("restaurant",), min_reviews=3)
    )
    return out


def test_sniprec_protocol_with_the_rules_seeker(catalogue, tmp_path):
    kb = KnowledgeBase.load(catalogue)
    m = run_sniprec("tfidf", catalogue, tmp_path / "out", n=4, criteria=RELAXED, progress=False, n_boot=100)
    assert [r["turn"] for r in m["per_turn"]] == [0, 1, 2, 3, 4]
    assert all(r["n"] == 4 and 1 <= r["avg_position"] <= len(kb.pois) for r in m["per_turn"])
    assert m["protocol"] == "sniprec" and "trace" not in m
    records = list(read_jsonl(tmp_path / "out" / "data" / "interactive.jsonl.gz"))
    preds = list(read_jsonl(tmp_path / "out" / "predictions.jsonl"))
    validate_predictions(preds, records, pool="open", split="test", known_poi_ids=kb.pois, check_pool=False)
    travelers = list(read_jsonl(tmp_path / "out" / "travelers.jsonl.gz"))
    for r, tr in zip(records, travelers, strict=True):
        turns = r["turns"]
        assert turns[0]["role"] == "system" and turns[0]["text"] == FIRST_QUESTION
        assert [t["role"] for t in turns] == ["system", "user"] * 5 + ["system"]
        target = tr["context"]["seed"]["business_id"]
        assert all(t["gold_poi_ids"] == [target] for t in turns[2::2])
        # the first answer is the venue's category; the seeker only states facts of its venue
        assert tr["turns"][0]["stated"][0].startswith("category:")
        assert set(k for t in tr["turns"] for k in t["stated"]) <= set(tr["goal"]["constraints"])
        assert kb.pois[target].name.lower() not in " ".join(
            t["text"].lower() for t in turns if t["role"] == "user"
        )
    meta = read_json(tmp_path / "out" / "predictions.jsonl.meta.json")
    assert meta["n_candidates"] == len(kb.pois) and meta["catalogue_source"] == "synthetic"


def test_sniprec_protocol_from_the_cli(catalogue, tmp_path, capsys):
    from trace_bench.cli import main

    rc = main(
        [
            "-q",
            "interact",
            "--protocol",
            "sniprec",
            "--system",
            "popularity",
            "--data",
            str(catalogue),
            "--out",
            str(tmp_path / "cli"),
            "--n",
            "3",
            "--user-reviews",
            "1-99",
            "--no-progress",
            "--bootstrap",
            "50",
        ]
    )
    assert rc == 0
    out = capsys.readouterr().out
    assert "(sniprec protocol): 3 dialogues" in out and "| 4 |" in out
    assert (
        main(
            [
                "-q",
                "interact",
                "--protocol",
                "sniprec",
                "--system",
                "popularity",
                "--data",
                str(catalogue),
                "--out",
                str(tmp_path / "x"),
                "--pool",
                "open",
            ]
        )
        == 2
    )
    # SnipRec's own seeding criteria find nobody in the synthetic bundle (one review per user): a clear error
    assert (
        main(
            [
                "-q",
                "interact",
                "--protocol",
                "sniprec",
                "--system",
                "popularity",
                "--data",
                str(catalogue),
                "--out",
                str(tmp_path / "y"),
                "--n",
                "2",
            ]
        )
        == 2
    )
    assert "no (user, venue) seed pair" in capsys.readouterr().err


def test_a_turn_where_the_system_ranks_nothing_is_unranked_not_a_chance_position(catalogue, tmp_path):
    """The LLM baselines rank nothing when they ask (every venue would tie, the target's place be chance): such a
    turn has no position and is counted apart, in no mean."""
    from trace_harness.protocols.interactive.reply import System, SystemReply
    from trace_harness.protocols.interactive.report import turn_table_markdown

    class AsksOnSomeTurns(System):
        name = "asks_on_some_turns"

        def respond(self, rows):
            return [
                SystemReply(
                    row["action"],
                    list(row["candidate_poi_ids"]) if int(row["turn_id"]) % 4 == 0 else [],
                    "What else matters to you?",
                    {},
                )
                for row in rows
            ]

    m = run_sniprec(
        AsksOnSomeTurns(), catalogue, tmp_path / "out", n=3, criteria=RELAXED, progress=False, n_boot=50
    )
    rows = m["per_turn"]
    assert all(r["n"] + r["n_unranked"] == 3 and r["n_undefined"] == 0 for r in rows)
    unranked = [r for r in rows if r["n_unranked"]]
    assert unranked and all(r["n"] == 0 and r["avg_position"] is None for r in unranked)
    assert any(r["n"] == 3 and r["avg_position"] is not None for r in rows)
    preds = list(read_jsonl(tmp_path / "out" / "predictions.jsonl"))
    asked = [p["meta"]["interactive"] for p in preds if p["meta"]["interactive"].get("unranked")]
    assert asked and all(i["target_position"] is None for i in asked)
    assert "| unranked |" in turn_table_markdown(rows).replace("|unranked|", "| unranked |")
