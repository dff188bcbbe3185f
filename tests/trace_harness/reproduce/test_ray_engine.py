"""`reproduce CONFIG --engine ray`: without Ray the switch says how to install it, before any work; with Ray (a local
`ray.init` on this machine's CPUs) the rounds go through Ray Data's HTTP request processor against the packaged
SmolLM2 served by llama.cpp, and the predictions are the live run's of the same config. `--ray-processor vllm`:
without vllm it says how to install it; the mapping of a request to the vLLM engine processor (its config, each
row's sampling parameters and structured output) and of its answer back to a served chat completion, checked
without running it (no GPU, no vllm here)."""

from __future__ import annotations

import sys

import pytest

from tests.support.cli import run_cli
from tests.support.llm_baselines import write_data_dir
from tests.support.reproduce import write_config
from trace_bench.cli import main
from trace_bench.errors import UsageError
from trace_harness.reproduce.ray_engine import _output_line, vllm_answer, vllm_processor_config, vllm_row
from trace_llm import DecodingSettings
from trace_llm.batch import PARSER_URL, openai_body_parser, same_model
from trace_llm.openai_backend import OpenAILLM
from trace_llm.structured import Constraint

MODEL = "Qwen/Qwen2.5-7B-Instruct"
SCHEMA = {"type": "object", "properties": {"ranking": {"type": "array", "items": {"type": "string"}}}}
MESSAGES = [
    {"role": "system", "content": "Rank the venues."},
    {"role": "user", "content": "Quiet vegan food."},
]

DEAD = "http://127.0.0.1:9/v1"


def test_without_ray_the_switch_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError, as where it is not installed
    config = write_config(tmp_path / "c.yaml", write_data_dir(tmp_path / "data"), DEAD)
    code, text = run_cli(capsys, "reproduce", str(config), "--engine", "ray", "--no-progress")
    assert code == 2 and "--engine ray needs Ray Data's LLM processors" in text
    assert "pip install" in text and "[ray]" in text
    assert not (tmp_path / "out").exists()  # nothing was run


def test_ray_takes_no_batch_files_nor_shards(tmp_path, capsys):
    pytest.importorskip("ray.data.llm")
    config = write_config(tmp_path / "c.yaml", write_data_dir(tmp_path / "data"), DEAD)
    code, text = run_cli(capsys, "reproduce", str(config), "--engine", "ray", "--export-batch")
    assert code == 2 and "--engine ray answers the rounds itself" in text
    code, text = run_cli(capsys, "reproduce", str(config), "--engine", "ray", "--shard", "0/2")
    assert code == 2 and "drop --dry-run, --export-batch, --import-batch and --engine" in text


@pytest.mark.slow
def test_a_ray_run_ends_with_the_live_runs_predictions(llama_cpp_server, tmp_path, capsys):
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.data.llm")
    data = write_data_dir(tmp_path / "data")
    settings = {
        "systems": ["popularity", "llm_zero_shot"],
        "closed": {"split": "test"},
        "models": {"systems": {"llm": llama_cpp_server.spec, "temperature": 0.0, "max_new_tokens": 48}},
        "transport": {"timeout": 300, "concurrency": 1},  # one llama.cpp thread on a shared machine
    }
    live = write_config(tmp_path / "live" / "c.yaml", data, DEAD, **settings)
    code, text = run_cli(capsys, "reproduce", str(live), "--no-progress")
    assert code == 0, text
    by_ray = write_config(tmp_path / "ray" / "c.yaml", data, DEAD, **settings)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        # main itself: Ray's own log handler can print a logging error of its progress lines to the captured
        # stderr, which run_cli would take for a traceback of ours
        code = main(["reproduce", str(by_ray), "--engine", "ray", "--no-progress"])
    finally:
        ray.shutdown()
    assert code == 0
    for name in settings["systems"]:
        a, b = (tmp_path / d / "out" / "runs" / "closed" / f"{name}.jsonl" for d in ("live", "ray"))
        assert a.read_bytes() == b.read_bytes()
    assert list(
        (tmp_path / "ray" / "out" / "batch").glob("round-*/*.out.jsonl")
    )  # answered through Ray's files


def test_without_vllm_the_vllm_processor_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    pytest.importorskip("ray.data.llm")
    monkeypatch.setitem(sys.modules, "vllm", None)  # as where vllm is not installed (here it is not either)
    config = write_config(tmp_path / "c.yaml", write_data_dir(tmp_path / "data"), DEAD)
    code, text = run_cli(
        capsys, "reproduce", str(config), "--engine", "ray", "--ray-processor", "vllm", "--no-progress"
    )
    assert code == 2 and "--ray-processor vllm runs the model in Ray Data's vLLM engine processor" in text
    assert "pip install" in text and "ray[data,llm]" in text
    assert not (tmp_path / "out").exists()  # nothing was run


def test_the_vllm_processor_config_is_ray_datas_for_the_batch_files_model():
    llm = pytest.importorskip("ray.data.llm")
    config = llm.vLLMEngineProcessorConfig(**vllm_processor_config(MODEL, concurrency=4))
    assert (config.model_source, config.concurrency, config.batch_size) == (MODEL, 4, 64)
    assert config.engine_kwargs["task_type"] == "generate"


@pytest.mark.parametrize("dialect", ["json_schema", "json_object"])
def test_a_request_becomes_a_vllm_row_with_its_decoding_and_its_schema(dialect):
    client = OpenAILLM("http://127.0.0.1:9/v1", MODEL, cache_path=False)
    settings = DecodingSettings(temperature=0.7, top_p=0.9, max_new_tokens=600, seed=7)
    body = client._body(MESSAGES, settings, Constraint.json(SCHEMA), dialect)  # what the batch file holds
    sent = (
        body["response_format"]["json_schema"]["schema"]
        if dialect == "json_schema"
        else body["response_format"]["schema"]
    )
    assert vllm_row(body) == {
        "messages": MESSAGES,
        "sampling_params": {
            "temperature": 0.7,
            "top_p": 0.9,
            "max_tokens": 600,
            "seed": 7,
            "structured_outputs": {"json": sent},
        },
    }
    plain = vllm_row(client._body(MESSAGES, settings))
    assert "structured_outputs" not in plain["sampling_params"]
    with pytest.raises(UsageError, match="request key.s. stop have no vLLM sampling parameter"):
        vllm_row({**body, "stop": ["\n"]})


def test_a_vllm_answer_is_read_as_the_served_chat_completion():
    parse = openai_body_parser(OpenAILLM(PARSER_URL, "batch", cache_path=False))
    row = {"custom_id": "r001s000-000003-ab", "generated_text": '{"ranking": ["P2"]}', "num_input_tokens": 41}
    done = vllm_answer({**row, "num_generated_tokens": 9, "max_tokens": 600}, MODEL)
    cut = vllm_answer({**row, "num_generated_tokens": 600, "max_tokens": 600}, MODEL)
    line = _output_line(row["custom_id"], done)
    assert line["error"] is None and same_model(MODEL, line["response"]["body"]["model"])
    completion = parse(line["response"]["body"])
    assert (completion.text, completion.prompt_tokens, completion.completion_tokens) == (
        row["generated_text"],
        41,
        9,
    )
    assert (completion.finish_reason, parse(cut).finish_reason) == ("stop", "length")
