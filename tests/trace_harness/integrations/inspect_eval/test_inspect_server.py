"""End to end against a real server (slow): `inspect eval` itself, Inspect's OpenAI-compatible provider
(`openai-api`) pointed at the packaged SmolLM2 behind llama-cpp-python's server, on one dialogue of the small
corpus (teacher-forced) and two travellers (live); then the log's metric values against `trace-bench evaluate`
of the same replies. Prompts are kept short (one review of 80 characters per card, 64 new tokens, no repair):
the server answers one request at a time on one thread."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from trace_dataset.io import read_json

pytestmark = pytest.mark.slow
SHORT = ("-T", "reviews_per_poi=1", "-T", "review_chars=80", "-T", "json_repairs=0", "--max-tokens", "64")


def inspect_eval(server, task: str, data: Path, log_dir: Path, *args: str):
    """`inspect eval TASK --model openai-api/llamacpp/<model> --model-base-url URL` in a child process."""
    from inspect_ai.log import read_eval_log

    cmd = [
        str(Path(sys.executable).with_name("inspect")),
        "eval",
        task,
        "--model",
        f"openai-api/llamacpp/{server.model}",
        "--model-base-url",
        server.base_url,
        "-T",
        f"data={data}",
        "-T",
        "structured=json_object",  # llama-cpp-python's server refuses json_schema
        *SHORT,
        *args,
        "--log-dir",
        str(log_dir),
        "--display",
        "none",
    ]
    env = {**os.environ, "LLAMACPP_API_KEY": "unused", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1500, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    [log_file] = sorted(log_dir.glob("*.eval"))
    log = read_eval_log(str(log_file))
    assert log.status == "success", log.error
    return log, log_file


def test_inspect_eval_against_smollm2_scores_as_evaluate(llama_cpp_server, small_corpus, tmp_path, capsys):
    log, log_file = inspect_eval(
        llama_cpp_server,
        "trace_bench/trace",
        small_corpus,
        tmp_path / "logs",
        "-T",
        "subset=1",
        "-T",
        "n_boot=200",
    )
    assert log.eval.model == f"openai-api/llamacpp/{llama_cpp_server.model}"
    for sample in log.samples:
        [event] = [e for e in sample.events if e.event == "model"]  # one request per turn
        assert event.call.request["extra_body"]["response_format"]["type"] == "json_object"
    rc, text = run_cli(capsys, "inspect", "predictions", log_file, "--out", tmp_path / "run" / "zs.jsonl")
    assert rc == 0, text
    [subset] = (tmp_path / "run").glob("subset-test-n1-seed42")
    results = tmp_path / "run" / "zs.results.json"
    rc, text = run_cli(
        capsys, "evaluate", "--data", subset, "--predictions", tmp_path / "run" / "zs.jsonl", "--out", results
    )
    assert rc == 0, text
    logged = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    values = {k: v for k, v in read_json(results)["values"].items() if v is not None}
    assert values and {k: logged[k] for k in values} == values
    meta = read_json(tmp_path / "run" / "zs.jsonl.meta.json")
    assert meta["n_rows"] == len(log.samples) and meta["complete"]


def test_the_live_task_against_smollm2_on_two_travellers(llama_cpp_server, small_corpus, tmp_path):
    log, _ = inspect_eval(
        llama_cpp_server,
        "trace_bench/trace_live",
        small_corpus,
        tmp_path / "logs",
        "-T",
        "n=2",
        "-T",
        "turns=2",
    )
    assert len(log.samples) == 2
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert metrics["dialogues"] == 2 and 0.0 <= metrics["success_rate"] <= 1.0
    for sample in log.samples:
        turns = sample.store["dialogue"]["record"]["turns"]
        system = [t for t in turns if t["role"] == "system"]
        assert 1 <= len(system) <= 2 and turns[0]["role"] == "user"
        assert len([e for e in sample.events if e.event == "model"]) == len(system)
        assert [m.text for m in sample.messages] == [t["text"] for t in turns]
