"""`inspect eval trace_bench/trace` with a scripted model (Inspect's mockllm): found through the entry point,
scored by the registry's item functions, and every metric value and interval of its log equal to what
`trace-bench evaluate` and `trace-bench leaderboard` give the same replies."""

from __future__ import annotations

import gzip
import json
import shlex

import pytest

from tests.support.cli import run_cli
from tests.support.inspect_model import invalid_first, never_json
from tests.trace_harness.integrations.inspect_eval.conftest import N_BOOT, SUBSET, run_task
from trace_dataset.io import read_json, read_jsonl
from trace_harness.integrations.inspect_eval.scores import metric_ids
from trace_harness.integrations.inspect_eval.solver import REPLIES_KEY
from trace_harness.integrations.inspect_eval.turns import load_turns


def _convert(capsys, tf_run, out):
    rc, text = run_cli(capsys, "inspect", "predictions", tf_run.log_path, "--out", out / "zs.jsonl")
    assert rc == 0, text
    subset = out / f"subset-test-n{SUBSET}-seed42"  # as `trace-bench run --subset` writes it
    assert subset.is_dir()
    printed = shlex.split(text.split("score it: ", 1)[1].splitlines()[0])
    rc, done = run_cli(capsys, *printed[printed.index("evaluate") :])  # the printed command, as printed
    assert rc == 0 and (out / "zs.results.json").exists(), done
    return subset, text


def test_the_task_is_found_through_the_entry_point(tf_run):
    log = tf_run.log
    assert log.eval.task_registry_name == "trace_bench/trace"
    assert log.eval.task_args["subset"] == SUBSET and log.eval.task_args["history"] == "messages"
    turnset = load_turns(tf_run.data, subset=SUBSET)
    assert sorted(s.id for s in log.samples) == sorted(turnset.requests)  # one sample per system turn
    config = log.plan.config
    assert (config.temperature, config.top_p, config.max_tokens, config.seed) == (0.0, 1.0, 600, 42)  # App. F


def test_every_value_and_interval_equals_evaluate_and_the_leaderboard(tf_run, tmp_path, capsys):
    subset, _ = _convert(capsys, tf_run, tmp_path)
    results = tmp_path / "zs.results.json"
    rc, text = run_cli(
        capsys, "evaluate", "--data", subset, "--predictions", tmp_path / "zs.jsonl", "--out", results
    )
    assert rc == 0, text
    logged = {name: m.value for name, m in tf_run.log.results.scores[0].metrics.items()}
    values = {k: v for k, v in read_json(results)["values"].items() if v is not None}
    assert sorted(metric_ids(list(logged))) == sorted(values)
    assert {k: logged[k] for k in values} == values  # every value, exactly
    assert logged["dialogues"] == SUBSET and logged["dialogues_incomplete"] == 0
    for key in (
        "recall@1",
        "mrr",
        "grounding_score",
        "citation_density",
        "provenance_coverage",
        "cgs",
        "tsr",
    ):
        assert key in values
    assert "rejection_recovery" in values
    board = tmp_path / "board"
    rc, text = run_cli(
        capsys, "leaderboard", "--data", subset, "--runs", tmp_path, "--out", board, "--n-boot", N_BOOT
    )
    assert rc == 0, text
    [row] = read_json(board / "leaderboard.json")["rows"]
    assert row["system"] == "LLM Zero-Shot (model) [Inspect]" and row["fallbacks"]["share"] == 0.0
    assert row["ci"] and all(
        [logged[f"{k}_ci_low"], logged[f"{k}_ci_high"]] == ci for k, ci in row["ci"].items()
    )


def test_each_sample_is_scored_by_the_registrys_item_functions(tf_run, tmp_path, capsys):
    subset, _ = _convert(capsys, tf_run, tmp_path)
    results = tmp_path / "zs.results.json"
    run_cli(capsys, "evaluate", "--data", subset, "--predictions", tmp_path / "zs.jsonl", "--out", results)
    with gzip.open(tmp_path / "zs.results.per_item.json.gz", "rt", encoding="utf-8") as f:
        per_item = json.load(f)
    by_turn = {s.id: s.scores["trace_scores"] for s in tf_run.log.samples}
    for group in ("recommendation_turns", "system_turns"):
        items = per_item[group]
        for i, (did, tid) in enumerate(zip(items["dialogue_id"], items["turn_id"], strict=True)):
            score = by_turn[f"{did}/{tid}"].value
            for metric, values in items.items():
                if metric not in ("dialogue_id", "turn_id") and metric in score:
                    assert score[metric] == values[i], (did, tid, metric)
    converted_rows = list(read_jsonl(tmp_path / "zs.jsonl"))
    assert [r for r in converted_rows] == [
        by_turn[f"{r['dialogue_id']}/{r['turn_id']}"].metadata["prediction"] for r in converted_rows
    ]


def test_the_log_shows_each_turns_citations(tf_run):
    turnset = load_turns(tf_run.data, subset=SUBSET)
    cited = [s for s in tf_run.log.samples if s.scores["trace_scores"].metadata["prediction"]["citations"]]
    assert cited
    for s in cited:
        score = s.scores["trace_scores"]
        for label, review in score.metadata["prediction"]["citations"].items():
            poi = turnset.kb.pois[turnset.kb.review_business[review]].name
            assert f"[{label}] {poi}, review `{review}`" in score.explanation
        assert s.store[REPLIES_KEY] == [[s.output.completion, False]]


@pytest.mark.parametrize(
    ("structured", "expected"),
    [("schema", "response_schema"), ("json_object", "extra_body"), ("prompt", None)],
)
def test_the_structured_answer_is_asked_for_as_chosen(small_corpus, tmp_path, structured, expected):
    _, script = run_task(
        "trace_bench/trace", small_corpus, tmp_path, subset=1, structured=structured, n_boot=0
    )
    configs = [config for _, config in script.seen]
    assert configs
    for config in configs:
        if structured == "schema":
            schema = config.response_schema
            assert schema.name == "answer" and schema.strict and schema.json_schema.required
        elif structured == "json_object":
            assert config.response_schema is None
            assert config.extra_body["response_format"]["type"] == "json_object"
        else:
            assert config.response_schema is None and not config.extra_body
    assert all("JSON Schema it must satisfy" in seen[-1]["content"] for seen, _ in script.seen)
    assert expected is None or all(getattr(c, expected) for c in configs)


def test_an_invalid_reply_is_sent_back_and_an_answer_that_stays_invalid_falls_back(
    small_corpus, tmp_path, capsys
):
    log, script = run_task("trace_bench/trace", small_corpus, tmp_path / "a", subset=1, reply=invalid_first)
    for s in log.samples:
        assert [m.role for m in s.messages[-3:]] == ["assistant", "user", "assistant"]  # reply, repair, reply
        assert "not usable" in s.messages[-2].text and len(s.store[REPLIES_KEY]) == 2
        assert "fallback" not in (s.scores["trace_scores"].metadata["prediction"].get("meta") or {})
    log, _ = run_task(
        "trace_bench/trace", small_corpus, tmp_path / "b", subset=1, reply=never_json, json_repairs=1
    )
    for s in log.samples:
        meta = s.scores["trace_scores"].metadata["prediction"]["meta"]
        assert meta["fallback"] == "popularity" and len(s.store[REPLIES_KEY]) == 2
    rc, text = run_cli(capsys, "inspect", "predictions", log.location, "--out", tmp_path / "out" / "zs.jsonl")
    assert rc == 0, text
    meta = read_json(tmp_path / "out" / "zs.jsonl.meta.json")
    assert meta["summary"]["rows"]["fallback_popularity"] == meta["n_rows"] == len(log.samples)
