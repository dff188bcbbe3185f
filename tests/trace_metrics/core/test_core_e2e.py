"""End to end: `trace-bench core score` with the packaged SmolLM2 served by a real `transformers serve` process,
on one toy dialogue: every output is complete, the ratings SmolLM2 fails to give are counted as missing, and a
rerun costs no request.

Small on purpose, to stay within CI's time: every CoRE prompt carries ~900-1,400 tokens of rubric, so the test
rates one factor (the shortest prompt) and runs one debate round (five model calls), with small token limits
and no retries; the defaults in the code stay the paper's. All twelve factors, retries, several rounds and
resumption run through the same LLM layer against a scripted OpenAI-compatible server in test_core_runner.py
and test_core_cli.py."""

from __future__ import annotations

import json

import pytest

from trace_bench.cli import main
from trace_dataset.io import read_json
from trace_metrics.core.factors import STATUSES
from trace_metrics.core.prompts import FACTOR_IDS
from trace_metrics.lib.toy import write_toy_data_dir, write_toy_predictions


@pytest.mark.slow
def test_core_score_with_smollm2_over_transformers_serve(transformers_server, tmp_path):
    data = write_toy_data_dir(tmp_path / "trace")
    predictions = write_toy_predictions(tmp_path / "tfidf.jsonl")
    out = tmp_path / "core"
    args = [
        "core",
        "score",
        "--data",
        str(data),
        "--predictions",
        str(predictions),
        "--out",
        str(out),
        "--ids",
        "toy_00003",
        "--factors",
        "appropriateness",
        "--llm",
        transformers_server.spec,
        "--llm-cache",
        str(tmp_path / "cache.sqlite"),
        "--max-new-tokens",
        "8",
        "--max-retries",
        "0",
        "--rounds",
        "1",
        "--max-repairs",
        "0",
        "--debate-max-new-tokens",
        "8",
        "--structured",  # transformers serve ignores response_format (docs/llm.md): by prompt, no grammar to close
        "prompt",
    ]
    assert main(args) == 0

    record = read_json(out / "dialogues" / "toy_00003+tfidf.json")
    assert record["id"] == "toy_00003:tfidf" and set(record["factors"]) == {"appropriateness"}
    for result in record["factors"].values():
        assert result["attempts"] == 1 and result["status"] in STATUSES
        assert (
            isinstance(result["rationale"], str) and result["prompt_tokens"] > 500
        )  # the real prompt was sent
        assert (result["score"] is None) == (result["status"] != "ok")
        assert result["score"] is None or 0 <= result["score"] <= 4
    assert record["n"] + record["n_missing"] == 1
    debate = record["debate"]
    assert debate["rounds"] == 1 and debate["n_messages"] == 4 and len(debate["messages"]) == 4
    assert (record["overall"] is None) == any(v is None for v in debate["agent_scores"].values())

    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    factor_rows = [r for r in rows if r["factor"] in FACTOR_IDS]
    summary = read_json(out / "summary.json")
    assert len(factor_rows) == 1 and summary["ratings"]["total"] == 1
    assert (
        summary["ratings"]["missing"] == sum(r["score"] is None for r in factor_rows) == record["n_missing"]
    )
    assert summary["overall"]["n"] + summary["overall"]["n_failed"] == 1
    usage = read_json(out / "usage.json")
    assert usage["total"]["requests"] == 5 and usage["factors"]["requests"] == 1

    assert main(args) == 0  # a rerun: the dialogue is done
    assert read_json(out / "usage.json")["total"]["requests"] == 0
    (out / "dialogues" / "toy_00003+tfidf.json").unlink()  # a run killed before writing it: the cache answers
    assert main(args) == 0
    again = read_json(out / "usage.json")
    assert again["total"]["requests"] == 0 and again["total"]["cache_hits"] == 5
    assert read_json(out / "dialogues" / "toy_00003+tfidf.json") == record
