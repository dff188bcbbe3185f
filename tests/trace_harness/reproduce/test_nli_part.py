"""The NLI part: entailment in the leaderboard's closed rows through the NLI cache, in one process or in several
(accelerate, two CPU processes here, as it runs one per GPU), with the same values; no model, no entailment."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="NLI needs the models extra (torch, transformers)")

from tests.support.llm_baselines import write_data_dir
from tests.support.reproduce import write_config
from trace_bench.cli import main
from trace_dataset.io import read_json
from trace_harness.reproduce.config import load_config
from trace_harness.reproduce.dryrun import plan
from trace_harness.reproduce.jobs import Context
from trace_metrics.lib.entailment import NLICache
from trace_metrics.lib.tiny_nli import write_tiny_nli_model

DEAD = "http://127.0.0.1:9/v1"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("nli_part")
    return write_data_dir(root / "data"), write_tiny_nli_model(root / "nli")


def entailment(folder):
    rows = read_json(folder / "out" / "leaderboard" / "leaderboard.json")
    rows = rows["rows"] if isinstance(rows, dict) else rows
    return {r["baseline"]: r["metrics"]["entailment"] for r in rows if r["pool"] == "closed"}


def run(tmp_path, data, model, processes):
    config = write_config(
        tmp_path / "c.yaml",
        data,
        DEAD,
        systems=["popularity", "tfidf"],
        parts=["table5", "nli"],
        nli={"model": str(model), "processes": processes, "batch_size": 4},
    )
    assert main(["reproduce", str(config), "--no-progress"]) == 0
    return config


def test_nli_scores_the_closed_runs_into_the_leaderboard(world, tmp_path):
    data, model = world
    config = run(tmp_path, data, model, 1)
    scores = entailment(tmp_path)
    assert set(scores) == {"popularity", "tfidf"} and all(0.0 <= v <= 1.0 for v in scores.values())
    assert len(NLICache(tmp_path / "out" / "../cache/nli.sqlite")) > 0  # beside the LLM response cache
    manifest = read_json(tmp_path / "out" / "manifest.json")
    assert manifest["nli"]["model"] == str(model)
    ctx = Context(load_config(config))
    try:
        note = plan(ctx)["parts"]["nli"]["notes"][0]
    finally:
        ctx.close()
    assert (
        note.startswith("no LLM requests:")
        and "distinct (premise, claim) pairs in 2 complete closed run(s)" in note
    )


@pytest.mark.slow
def test_two_processes_under_accelerate_give_the_same_scores(world, tmp_path, monkeypatch):
    data, model = world
    run(tmp_path / "one", data, model, 1)
    monkeypatch.setenv("ACCELERATE_USE_CPU", "true")  # two CPU processes (gloo) stand in for two GPUs
    monkeypatch.setenv("OMP_NUM_THREADS", "1")

    def no_model_call_here(self, pairs):
        raise AssertionError(
            f"the parent process scored {len(pairs)} pairs: the launched processes should have"
        )

    monkeypatch.setattr("trace_metrics.lib.entailment.NLIScorer._forward", no_model_call_here)
    run(tmp_path / "two", data, model, 2)
    assert entailment(tmp_path / "two") == pytest.approx(entailment(tmp_path / "one"), abs=1e-6)
    a, b = (NLICache(tmp_path / d / "cache" / "nli.sqlite") for d in ("one", "two"))
    assert len(a) == len(b) > 0  # the launched processes filled the cache; the leaderboard only read it
