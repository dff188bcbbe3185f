"""A corpus run through the real LLM layer (openai backend, response cache) against scripted model replies:
per-dialogue files, resume without requests, refusing another configuration, missing ratings counted,
determinism, concurrent requests."""

from __future__ import annotations

import json

import pytest

from tests.support.core import scripted
from trace_dataset.io import TraceDataError, read_json, write_jsonl
from trace_llm import load_llm
from trace_metrics.core.prompts import FACTOR_IDS
from trace_metrics.core.runner import collect_logs, run_corpus, system_name
from trace_metrics.lib.toy import reference_predictions, toy_dialogues


def _run(server, logs, out, prompts, cache, **options):
    llm = load_llm(server.spec(), cache_path=cache)
    try:
        return run_corpus(llm, logs, out, prompts, **options)
    finally:
        llm.close()


def test_run_resume_and_cache(stub_factory, data_dir, predictions, prompts, tmp_path):
    server = stub_factory(scripted({"Diversity": "There is no tag in this reply."}))
    logs, source = collect_logs(predictions, data_dir)
    assert [c.log_id for c in logs] == ["toy_00001:tfidf", "toy_00002:tfidf", "toy_00003:tfidf"]
    out, cache = tmp_path / "out", tmp_path / "cache.sqlite"
    first = _run(server, logs, out, prompts, cache, source=source, max_retries=1)
    # 12 factors + 1 retry for diversity per dialogue; the scripted debaters agree at once: 4 messages
    assert first["usage"]["total"]["requests"] == 3 * (12 + 1 + 4)
    assert first["usage"]["factors"]["requests"] == 39 and first["usage"]["debate"]["requests"] == 12
    assert sorted(p.name for p in out.iterdir()) == [
        "dialogues",
        "run.json",
        "scores.jsonl",
        "summary.json",
        "usage.json",
    ]
    record = read_json(out / "dialogues" / "toy_00001+tfidf.json")
    assert set(record["factors"]) == set(FACTOR_IDS) and record["n"] == 11 and record["n_missing"] == 1
    assert record["factors"]["diversity"] | {"rationale": None} == record["factors"]["diversity"] | {
        "score": None,
        "status": "missing",
        "attempts": 2,
        "rationale": None,
    }
    assert record["factor_mean"] == 3.0 and record["overall"] == 70.0 and record["debate"]["consensus"]
    summary = first["summary"]
    assert summary["ratings"] == {
        "total": 36,
        "ok": 33,
        "missing": 3,
        "by_status": {"ok": 33, "missing": 3, "not_integer": 0, "out_of_range": 0, "ambiguous": 0},
    }
    assert summary["factors"]["diversity"] == {
        "mean": None,
        "n": 0,
        "n_missing": 3,
        "missing_by_status": {"missing": 3},
        "n_retried": 3,
    }
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == 3 * 14 and sum(r["score"] is None for r in rows) == 3
    assert {r["factor"] for r in rows} == {*FACTOR_IDS, "factor_mean", "overall"}
    scores_bytes = (out / "scores.jsonl").read_bytes()
    sent = len(server.requests)

    again = _run(server, logs, out, prompts, cache, source=source, max_retries=1)  # a rerun: nothing to do
    assert (again["usage"]["scored_now"], again["usage"]["skipped"]) == (0, 3)
    assert again["usage"]["total"]["requests"] == 0 and len(server.requests) == sent

    victim = out / "dialogues" / "toy_00002+tfidf.json"
    victim_bytes = victim.read_bytes()
    victim.unlink()  # as if the run had been killed before writing it: its answers are in the LLM cache
    resumed = _run(server, logs, out, prompts, cache, source=source, max_retries=1)
    assert resumed["usage"]["scored_now"] == 1 and resumed["usage"]["total"]["requests"] == 0
    assert resumed["usage"]["total"]["cache_hits"] == 17 and len(server.requests) == sent
    assert victim.read_bytes() == victim_bytes and (out / "scores.jsonl").read_bytes() == scores_bytes

    with pytest.raises(TraceDataError, match=r"another configuration \(differs in: options\)"):
        _run(server, logs, out, prompts, cache, source=source, max_retries=2)
    fresh = _run(server, logs, out, prompts, cache, source=source, max_retries=1, overwrite=True)
    assert fresh["usage"]["scored_now"] == 3 and fresh["usage"]["total"]["requests"] == 0


def test_a_run_can_be_extended(stub_factory, data_dir, predictions, prompts, tmp_path):
    server = stub_factory()
    one, source = collect_logs(predictions, data_dir, limit=1)
    _run(server, one, tmp_path / "out", prompts, tmp_path / "c.sqlite", source=source)
    two, source = collect_logs(predictions, data_dir, limit=2)
    res = _run(server, two, tmp_path / "out", prompts, tmp_path / "c.sqlite", source=source)
    assert (res["usage"]["scored_now"], res["usage"]["skipped"], res["summary"]["n_logs"]) == (1, 1, 2)


def test_same_inputs_same_bytes(stub_factory, data_dir, predictions, prompts, tmp_path):
    server = stub_factory()
    logs, source = collect_logs(predictions, data_dir, limit=1)
    _run(server, logs, tmp_path / "a", prompts, tmp_path / "c1.sqlite", source=source)
    _run(server, logs, tmp_path / "b", prompts, tmp_path / "c2.sqlite", source=source)
    for name in ("scores.jsonl", "summary.json", "dialogues/toy_00001+tfidf.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_requests_go_out_concurrently(stub_factory, data_dir, predictions, prompts, tmp_path):
    server = stub_factory(delay=0.05)
    logs, source = collect_logs(predictions, data_dir)
    llm = load_llm(server.spec(), cache_path=False, concurrency=16)
    run_corpus(llm, logs, tmp_path / "out", prompts, source=source, debate=False)
    assert server.max_in_flight > 1 and len(server.requests) == 36


def test_factor_subset_and_no_debate(stub_factory, data_dir, predictions, prompts, tmp_path):
    server = stub_factory()
    logs, source = collect_logs(predictions, data_dir, dialogue_ids=["toy_00002"])
    res = _run(
        server,
        logs,
        tmp_path / "out",
        prompts,
        False,
        source=source,
        factors=["naturalness", "coherence"],
        debate=False,
    )
    assert list(res["summary"]["factors"]) == ["coherence", "naturalness"] and "overall" not in res["summary"]
    rows = [json.loads(x) for x in (tmp_path / "out" / "scores.jsonl").read_text().splitlines()]
    assert [r["factor"] for r in rows] == ["coherence", "naturalness", "factor_mean"]
    assert len(server.requests) == 2


def test_collect_logs_inputs(data_dir, predictions, tmp_path):
    logs, source = collect_logs(predictions, data_dir, system="mine", top_k=2, limit=2)
    assert [c.log_id for c in logs] == ["toy_00001:mine", "toy_00002:mine"]
    assert source["system"] == "mine" and source["top_k"] == 2 and source["n_dialogues"] == 2
    assert source["split"] == "test" and len(source["predictions_sha256"]) == 64
    assert system_name(predictions) == "tfidf"
    (tmp_path / "x.jsonl.meta.json").write_text(json.dumps({"baseline": "bm25"}))
    assert system_name(tmp_path / "x.jsonl") == "bm25"
    # an id that is not in the split: the split searched, a valid id, and the split it is in
    message = r"\['nope'\] are not in the test split of .*trace \(3 dialogues\); its first is 'toy_00001'$"
    with pytest.raises(TraceDataError, match=message):
        collect_logs(predictions, data_dir, dialogue_ids=["nope"])
    with pytest.raises(TraceDataError, match=r"toy_00004 is in the train split \(--split train, with"):
        collect_logs(predictions, data_dir, dialogue_ids=["toy_00004"])
    short = tmp_path / "short.jsonl"
    write_jsonl(short, reference_predictions(toy_dialogues()[:1]))
    with pytest.raises(TraceDataError, match="predictions do not match"):
        collect_logs(short, data_dir)


def test_collect_logs_from_dialogue_records(data_dir, tmp_path):
    """Interactive logs: dialogue records in a file, --data only for the knowledge base."""
    dialogues = [dict(d, split="interactive") for d in toy_dialogues()[:2]]
    write_jsonl(tmp_path / "live.jsonl", dialogues)
    rows = reference_predictions(toy_dialogues()[:2])
    write_jsonl(tmp_path / "live_preds.jsonl", rows)
    logs, source = collect_logs(
        tmp_path / "live_preds.jsonl", data_dir, dialogues_path=tmp_path / "live.jsonl", system="sim"
    )
    assert [c.log_id for c in logs] == ["toy_00001:sim", "toy_00002:sim"] and source[
        "dialogues_file"
    ] == "live.jsonl"
    write_jsonl(tmp_path / "extra.jsonl", [*rows, {**rows[0], "dialogue_id": "elsewhere"}])
    with pytest.raises(TraceDataError, match="not in the dialogues file"):
        collect_logs(tmp_path / "extra.jsonl", data_dir, dialogues_path=tmp_path / "live.jsonl")
    write_jsonl(tmp_path / "dup.jsonl", [*rows, rows[0]])
    with pytest.raises(TraceDataError, match="second row"):
        collect_logs(tmp_path / "dup.jsonl", data_dir, dialogues_path=tmp_path / "live.jsonl")
