"""SnipRec end to end with the packaged SmolLM2 behind a real `transformers serve` (the shared fixture).

One small knowledge base (two POIs, one review between them) and two dialogues that open with the same user turn
keep the LLM calls to three: C.1 for the review (by `trace-bench sniprec build`, whose store the run then reads),
C.2 once (the shared opening turn: one query-snippet extraction serves both dialogues), C.4 once (the
ask_preference turn); small max_new_tokens and no JSON repairs (defaults stay the paper's). C.2 with known
intents runs on the rules path (test_sniprec_queries.py). SmolLM2 is weak: what it extracts is what the rows
hold (at 48 tokens its C.1 list may be cut short, which is then a counted failure); the test checks the
plumbing, the bookkeeping and the output contract, not the quality.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.support.sniprec import dialogue, poi, turn, write_kb
from trace_bench.cli import main
from trace_dataset.constants import CORPUS_META_FILE, DATA_DIRNAME, KB_DIRNAME, SPLITS
from trace_dataset.io import write_json, write_jsonl
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.leaderboard.build import build_leaderboard, short_model_name

pytestmark = pytest.mark.slow

POIS = [
    poi("p_sea", "Harbor Fish House", categories=("Restaurants", "Seafood")),
    poi("p_veg", "Green Leaf Kitchen", categories=("Restaurants", "Vegan")),
]
REVIEWS = {"p_sea": [("Harbor Fish House has fresh oysters. The room is loud.", 5.0)]}
OPENING = turn(0, "user", "greet_and_seek", "I want fresh oysters.")
DIALOGUES = [
    dialogue(
        "crs_yelp_00001",
        [
            OPENING,
            turn(1, "system", "recommend", "Try Harbor Fish House.", refs=("p_sea",), gold=("p_sea",)),
            turn(2, "user", "accept", "Great."),
            turn(3, "system", "farewell", "Bye!"),
        ],
        ["p_sea", "p_veg"],
    ),
    dialogue(
        "crs_yelp_00002",
        [
            OPENING,
            turn(1, "system", "ask_preference", "Any other wish?"),
            turn(2, "user", "provide_preference", "No, that is all."),
            turn(3, "system", "farewell", "Bye!"),
        ],
        ["p_sea", "p_veg"],
    ),
]


def test_sniprec_with_smollm2_runs_end_to_end(transformers_server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))
    data = tmp_path / "corpus"
    write_kb(data / KB_DIRNAME, POIS, REVIEWS)
    for split in SPLITS:
        write_jsonl(data / DATA_DIRNAME / f"{split}.jsonl.gz", DIALOGUES if split == "test" else [])
    write_json(data / CORPUS_META_FILE, {"versions": {"corpus_version": "sniprec-llm-1"}})
    decoding = ["--llm", transformers_server.spec, "--temperature", "0", "--max-new-tokens", "48"]
    # the build command as its help prints it (`trace-bench sniprec build --data DIR --kind llm --llm SPEC`)
    assert (
        main(["sniprec", "build", "--data", str(data), "--kind", "llm", *decoding, "--json-repairs", "0"])
        == 0
    )
    printed = capsys.readouterr().out
    assert "llm units of 2 POIs (2 extracted now" in printed
    assert re.search(r"store totals: \d+ LLM calls for 1 reviews, failed reviews [01],", printed)
    runs = tmp_path / "runs"
    out = runs / "sniprec.jsonl"
    rc = main(
        [
            "run",
            "sniprec",
            *decoding,
            "--param",
            "json_repairs=0",
            "--data",
            str(data),
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert rc == 0

    meta = json.loads(out.with_name(out.name + ".meta.json").read_text())
    assert meta["family"] == "LLM" and meta["variant"] == "LLM snippets, all-MiniLM-L6-v2, NLI off"
    params = meta["parameters"]
    assert params["snippets"] == "llm" and params["llm"]["settings"]["max_new_tokens"] == 48
    assert set(params["prompt_sha256"]) >= {"item_snippets.txt", "query_snippets.txt", "clarify.txt"}
    usage = meta["summary"]["usage"]
    assert usage["units_extracted_pois"] == 0  # the run read the store the build made (same extractor key)
    assert usage["llm_usage"]["requests"] + usage["llm_usage"]["cache_hits"] == 2  # C.2 once, C.4 once

    # the unit store: the review went to C.1 (snippets or a counted failure), units point into their review,
    # no unit names its POI
    kb = KnowledgeBase.load(data / KB_DIRNAME)
    [store_meta] = list((tmp_path / "cache" / "sniprec").glob("*/llm-*/store.json"))
    summary = json.loads(store_meta.read_text())
    totals = summary["totals"]
    assert totals["reviews"] == 1 and totals["llm_calls"] >= 1
    assert summary["n_review_units"] == totals["snippets"]
    assert summary["extractor"]["llm"]["model"] == params["llm"]["model"]
    for line in (store_meta.parent / "units.jsonl").read_text().splitlines():
        rec = json.loads(line)
        name = kb.pois[rec["poi_id"]].name
        for text, review_id, start, end in rec["units"]:
            assert name.lower() not in text.lower()
            if review_id is not None:
                assert kb.review_business[review_id] == rec["poi_id"]
                if start is not None:
                    assert 0 <= start < end <= len(kb.review_text(review_id))

    preds = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(p["dialogue_id"][-1], p["turn_id"]) for p in preds] == [("1", 1), ("1", 3), ("2", 1), ("2", 3)]
    rec, bye, ask, _ = preds
    assert ask["response"].strip() and ask["citations"] == {}
    assert sorted(rec["ranked_poi_ids"]) == ["p_sea", "p_veg"] and bye["ranked_poi_ids"] == []
    assert rec["meta"]["query_snippets"] == ask["meta"]["query_snippets"]  # one extraction, two rows
    for span, label in re.findall(r'"([^"]+)" \[(R\d+)\]', rec["response"]):
        assert span in kb.review_text(rec["citations"][label])
    assert rec["meta"]["units"] == "llm" and isinstance(rec["meta"]["query_snippets"], list)

    [row] = build_leaderboard(data, runs, n_boot=0)
    model = short_model_name(params["llm"]["model"])
    assert (
        row["system"] == f"SnipRec ({model}) [LLM snippets, all-MiniLM-L6-v2, NLI off]"
        and row["family"] == "LLM"
    )
    assert "SmolLM2" in model
