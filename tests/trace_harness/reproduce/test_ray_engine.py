"""`reproduce CONFIG --engine ray`: without Ray the switch says how to install it, before any work; with Ray (a local
`ray.init` on this machine's CPUs) the rounds go through Ray Data's HTTP request processor against the packaged
SmolLM2 served by llama.cpp, and the predictions are the live run's of the same config."""

from __future__ import annotations

import sys

import pytest

from tests.support.cli import run_cli
from tests.support.llm_baselines import write_data_dir
from tests.support.reproduce import write_config
from trace_bench.cli import main

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
        "models": {"systems": {"llm": llama_cpp_server.spec, "temperature": 0.0, "max_new_tokens": 16}},
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
