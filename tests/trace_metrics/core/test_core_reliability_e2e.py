"""End to end: the reliability reports with the packaged SmolLM2 behind a real `transformers serve` process, on
one toy dialogue (smallest sizes, as test_core_e2e.py): a CoRE run of one factor and one debate round, then
`core reliability` with k = 2; the judge's report on the same dialogue's two recommendation turns. Whatever the model answers, every
figure is a number in range or None with its count, and a verdict is one of the three or not measured."""

from __future__ import annotations

import pytest

from trace_bench.cli import main
from trace_dataset.io import read_json
from trace_metrics.lib.reliability import VERDICTS
from trace_metrics.lib.toy import write_toy_data_dir, write_toy_predictions

TINY = ["--max-retries", "0", "--rounds", "1", "--max-repairs", "0", "--debate-max-new-tokens", "8"]
# `transformers serve` ignores response_format and has no grammar field (docs/llm.md): the requests ask by prompt,
# so no constrained reply has to close in TINY's budgets (trace_llm.budget)
BY_PROMPT = ["--structured", "prompt"]


def _check(report, keys):
    assert set(report["keys"]) == set(keys) and report["k"] == 2
    for entry in report["keys"].values():
        repeat, order = entry["repeat"], entry["order"]
        assert repeat["n_items"] + repeat["n_incomplete"] == report["n_items"]
        assert order["n_pairs"] + order["n_incomplete"] == report["n_items"]
        assert repeat["icc"] is None or -1.0 <= repeat["icc"] <= 1.0
        assert order["flip_rate"] is None or 0.0 <= order["flip_rate"] <= 1.0
        assert entry["verdict"] is None or entry["verdict"] in VERDICTS
    assert report["self_preference"]["judge_family"] == "smollm"


@pytest.mark.slow
def test_core_reliability_with_smollm2_over_transformers_serve(transformers_server, tmp_path):
    data = write_toy_data_dir(tmp_path / "trace")
    predictions = write_toy_predictions(tmp_path / "tfidf.jsonl")
    llm = ["--llm", transformers_server.spec, "--llm-cache", str(tmp_path / "cache.sqlite"), *BY_PROMPT]
    run = tmp_path / "core"
    inputs = ["--data", str(data), "--predictions", str(predictions)]
    score = [
        "core",
        "score",
        *inputs,
        "--out",
        str(run),
        "--ids",
        "toy_00003",
        "--factors",
        "appropriateness",
    ]
    assert main([*score, *llm, "--max-new-tokens", "8", *TINY]) == 0
    assert main(["core", "reliability", "--run", str(run), "--k", "2", *llm]) == 0
    report = read_json(run / "reliability" / "reliability.json")
    _check(report, ["appropriateness", "factor_mean", "overall"])
    assert report["n_items"] == 1 and (run / "reliability" / "reliability.png").stat().st_size > 0


@pytest.mark.slow
def test_judge_reliability_with_smollm2_over_transformers_serve(transformers_server, tmp_path):
    data = write_toy_data_dir(tmp_path / "trace")
    predictions = write_toy_predictions(tmp_path / "tfidf.jsonl")
    llm = ["--llm", transformers_server.spec, "--llm-cache", str(tmp_path / "cache.sqlite"), *BY_PROMPT]
    inputs = ["--data", str(data), "--predictions", str(predictions)]
    out = tmp_path / "judge"
    judge = ["core", "reliability", "--kind", "judge", *inputs, "--limit", "1", "--k", "2", "--out", str(out)]
    assert main([*judge, *llm, "--max-new-tokens", "16"]) == 0
    report = read_json(out / "reliability.json")
    _check(
        report,
        ["judge_relevance", "judge_informativeness", "judge_grounding", "judge_flow", "judge_justification"],
    )
