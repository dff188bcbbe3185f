"""End to end with the packaged SmolLM2 behind a real `transformers serve` process (slow).

Small on purpose (this machine is shared): one test dialogue of two system turns, 8 new tokens, no JSON
repairs, about twenty requests in all. `transformers serve` ignores `response_format` (docs/llm.md), so the
requests ask for their JSON by prompt (`structured: prompt`: no grammar to close, so no least budget).
SmolLM2-135M does not write valid JSON in 8 tokens, so its ranked turns
fall back to Popularity; that is its row, counted in the run summary, not something these tests hide. The open
runs reuse the closed runs' cached answers where the prompt is the same (the tiny corpus's open set is its
closed pool); Zero-Shot's prefilter is cut to 3 so that its open prompts differ.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest

from baselines import LLM_BASELINES
from trace_dataset.io import read_json
from trace_harness.protocols.teacher_forced.runner import meta_path, run_all, run_baseline
from trace_metrics.lib.suite import evaluate_run

pytestmark = pytest.mark.slow

MAX_NEW_TOKENS = 8


def params(spec: str, cache: Path, **extra) -> dict:
    return {
        "llm": spec,
        "max_new_tokens": MAX_NEW_TOKENS,
        "json_repairs": 0,
        "llm_cache": str(cache),
        "llm_options": {"structured": "prompt"},
        **extra,
    }


@pytest.fixture(scope="module")
def runs(transformers_server, tmp_path_factory):
    from tests.support.llm_baselines import write_data_dir

    root = tmp_path_factory.mktemp("llm-e2e")
    data = write_data_dir(root / "data")
    cache = root / "llm.sqlite"
    spec = transformers_server.spec
    from baselines.toolkit.dense import load_encoder

    encoder = load_encoder()  # Memory-Aug.'s all-MiniLM-L6-v2, loaded once for both runs

    def per_name(pool: str) -> dict:
        extra = {
            "memory_aug": {"encoder": encoder, "query_cache": False},  # leave the user's cache folder alone
            "llm_zero_shot": {"prefilter_k": 3} if pool == "open" else {},
        }
        return {n: params(spec, cache, **extra.get(n, {})) for n in LLM_BASELINES}

    closed = run_all(
        data,
        root / "closed",
        names=list(LLM_BASELINES),
        split="test",
        pool="closed",
        progress=False,
        per_name_params=per_name("closed"),
    )
    opened = run_all(
        data,
        root / "open",
        names=list(LLM_BASELINES),
        split="test",
        pool="open",
        progress=False,
        per_name_params=per_name("open"),
    )
    return {"root": root, "data": data, "cache": cache, "spec": spec, "closed": closed, "open": opened}


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_baseline_closed_and_open_is_scored_by_evaluate(runs):
    from trace_dataset.datadir import kb_dir
    from trace_dataset.kb.store import KnowledgeBase

    kb = KnowledgeBase.load(kb_dir(runs["data"]))
    for pool, results in (("closed", runs["closed"]), ("open", runs["open"])):
        for name, meta in results.items():
            assert isinstance(meta, dict), f"{name} ({pool}) failed: {meta}"
            assert meta["complete"] and meta["family"] == "LLM"
            assert meta["session_isolated"] is (name != "memory_aug")
            llm = meta["parameters"]["llm"]
            assert llm["backend"] == "openai" and llm["settings"]["max_new_tokens"] == MAX_NEW_TOKENS
            assert len(meta["parameters"]["prompt"]["sha256"]) == 64
            path = runs["root"] / pool / f"{name}.jsonl"
            result = evaluate_run(
                runs["data"], path, split="test", pool=pool
            )  # what `trace-bench evaluate` runs
            assert result["counts"]["system_turns"] == 2
            assert result["counts"]["unknown_review_ids"] == 0
            for row in lines(path):  # every citation is a label the response uses, pointing at a KB review
                assert all(
                    f"[{label}]" in row["response"] and rid in kb.reviews
                    for label, rid in row["citations"].items()
                )
    for row, usable in zip(lines(runs["root"] / "open" / "llm_zero_shot.jsonl"), (4, 3), strict=True):
        if "fallback" not in row["meta"]:  # the model's ranking, completed: the usable open set
            assert len(row["ranked_poi_ids"]) == usable
    # the first turn's pool (4) is cut to 3 for the prompt: a new request; the second (3 left) is not cut
    assert runs["open"]["llm_zero_shot"]["summary"]["usage"]["llm_usage"]["requests"] == 1
    assert runs["open"]["dst"]["summary"]["usage"]["llm_usage"]["requests"] == 0  # same prompts as closed


def test_fallbacks_are_counted_in_the_run_summary(runs):
    for pool in ("closed", "open"):
        for name, meta in runs[pool].items():
            rows = lines(runs["root"] / pool / f"{name}.jsonl")
            fell_back = sum(1 for r in rows if (r.get("meta") or {}).get("fallback") == "popularity")
            summary = meta["summary"]
            assert summary["rows"].get("fallback_popularity", 0) == fell_back, name
            usage = summary["usage"]["llm_usage"]
            assert usage["requests"] + usage["cache_hits"] > 0
            if name in ("llm_zero_shot", "rag_citation", "itinerary_llm", "memory_aug"):  # JSON answers
                assert fell_back == usage["json_failures"], name


def test_a_cached_rerun_makes_no_request(runs, tmp_path):
    from trace_bench.cli import main

    first = runs["root"] / "closed" / "rag_citation.jsonl"
    out = tmp_path / "rag.jsonl"
    argv = [
        "run",
        "rag_citation",
        "--data",
        str(runs["data"]),
        "--split",
        "test",
        "--out",
        str(out),
        "--llm",
        runs["spec"],
        "--max-new-tokens",
        str(MAX_NEW_TOKENS),
        "--structured",
        "prompt",
        "--llm-cache",
        str(runs["cache"]),
        "--param",
        "json_repairs=0",
        "--no-progress",
    ]
    assert main(argv) == 0
    meta = read_json(meta_path(out))
    assert meta["summary"]["usage"]["llm_usage"]["requests"] == 0
    assert meta["summary"]["usage"]["llm_usage"]["cache_hits"] > 0
    assert out.read_bytes() == first.read_bytes()


def _run_in_child(data: str, out: str, spec: str, cache: str) -> None:
    run_baseline(
        "llm_zero_shot",
        data,
        out,
        split="validation",
        progress=False,
        chunk_dialogues=1,
        params=params(spec, Path(cache)),
    )


def test_resume_after_a_kill(runs, tmp_path):
    out = tmp_path / "killed.jsonl"
    ctx = multiprocessing.get_context("spawn")
    child = ctx.Process(
        target=_run_in_child, args=(str(runs["data"]), str(out), runs["spec"], str(runs["cache"]))
    )
    child.start()
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and child.is_alive():
        if out.exists() and out.read_text(encoding="utf-8").count("\n") >= 2:  # the first dialogue is written
            break
        time.sleep(0.2)
    assert child.is_alive(), "the run ended before it could be killed"
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    assert not read_json(meta_path(out))["complete"]
    done_before = out.read_text(encoding="utf-8").count("\n")
    assert done_before == 2  # the first dialogue (answered from the cache), not the second
    meta = run_baseline(
        "llm_zero_shot",
        runs["data"],
        out,
        split="validation",
        progress=False,
        chunk_dialogues=1,
        params=params(runs["spec"], runs["cache"]),
    )
    assert meta["complete"] and meta["n_rows"] == 4
    again = run_baseline(
        "llm_zero_shot",
        runs["data"],
        tmp_path / "again.jsonl",
        split="validation",
        progress=False,
        params=params(runs["spec"], runs["cache"]),
    )
    assert again["summary"]["usage"]["llm_usage"]["requests"] == 0  # everything the two runs asked is cached
    assert out.read_bytes() == (tmp_path / "again.jsonl").read_bytes()
