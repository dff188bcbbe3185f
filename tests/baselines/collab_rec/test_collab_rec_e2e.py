"""End to end with the packaged SmolLM2 behind a real `transformers serve` (slow): Collab-REC's own benchmark
(MAMI over two rounds) and Trace (`trace-bench run collab_rec`, SASI): valid outputs, hallucinations and
failures counted, and a cached rerun that sends no request.

Small on purpose, to stay within CI's time: 7 model calls in all. Each App. D agent prompt is ~900 tokens of
fixed text whatever the catalogue (~9 s of prefill on the shared 2-core machine), so: one query, a 5-city
catalogue, k = 2, two fixed rounds, 8 new tokens, no JSON repairs. SmolLM2-135M wrote no valid reply at 24 or
48 tokens either (it opens with "```json" and a made-up schema): the tests check the accounting, never the
model's quality. The defaults in the code stay the paper's. What they leave out is covered without a model, on
recorded model outputs in the LLM layer's cache or scripted offers: valid replies and hallucinated names
(test_collab_rec_agents.py), SASI through the own-benchmark runner (test_collab_rec_data.py), MASI and the
Trace-domain prompts on Trace (test_collab_rec_trace.py), Eq. 13 stopping and every other moderator equation
(test_collab_rec_moderator.py)."""

from __future__ import annotations

import json

import pytest

from baselines.collab_rec.agents import load_settings
from baselines.collab_rec.moderator import ModeratorConfig
from tests.support.collab_rec import dialogue, subset_kb, subset_queries, write_data_dir
from trace_dataset.io import read_jsonl
from trace_harness.protocols.collab_rec.run import run_benchmark
from trace_llm import load_llm

pytestmark = pytest.mark.slow
CITIES = {"Amsterdam", "Bergen", "Dublin", "Porto", "Riga"}
K = 2
SHORT = {"max_new_tokens": 8}
# `transformers serve` ignores response_format (docs/llm.md): the agents ask by prompt, so no grammar has to close
# in SHORT's 8 tokens (a constrained agent reply needs at least 58, trace_llm.budget)
BY_PROMPT = {"structured": "prompt"}


def check_accounting(record: dict) -> None:
    """Every agent call is answered or failed; every out-of-catalogue name is listed and counted in h."""
    for rnd in record["rounds"]:
        for agent in rnd["agents"]:
            if not agent["answered"]:
                assert agent["listed"] == [] and agent.get("hallucination") is None
                continue
            outside = [c for c, why in agent["invalid"].items() if why == "out_of_catalogue"]
            assert all(c in agent["listed"] and c not in CITIES for c in outside)
            assert agent["hallucination"] * K == pytest.approx(len(agent["invalid"]))  # Eq. 11 over k
    answered = sum(a["answered"] for rnd in record["rounds"] for a in rnd["agents"])
    assert record["agent_calls"] == answered + record["agent_failures"]


def test_own_benchmark_mami(transformers_server, collab_rec_dir, tmp_path, one_torch_thread):
    kb = subset_kb(collab_rec_dir, tmp_path / "kb.csv", CITIES)
    queries = subset_queries(collab_rec_dir, tmp_path / "q.csv", ["c_p_143_pop_high_hard"])
    cache = tmp_path / "llm.sqlite"
    config = ModeratorConfig(k=K, t_max=2, stopping="fixed")  # two rounds whatever the model says

    def llm():
        return load_llm(
            transformers_server.spec,
            load_settings().settings(**SHORT),
            cache_path=cache,
            concurrency=3,
            **BY_PROMPT,
        )

    model = llm()
    mami = run_benchmark(
        "mami", kb, queries, tmp_path / "mami", llm=model, config=config, max_repairs=0, progress=False
    )
    assert model.usage["requests"] == mami["counts"]["agent_calls"] == 6  # 3 agents x 2 rounds
    record = json.loads(next((tmp_path / "mami" / "queries").glob("*.json")).read_text())
    check_accounting(record)
    assert record["stop"] == {"round": 2, "reason": "t_max"} and len(record["rounds"]) == 2
    for name, system in mami["systems"].items():
        assert 0.0 <= system["moderator_success"] <= 1.0 and 0.0 <= system["coverage"] <= 1.0, name
    assert set(mami["systems"]) == {"M_1", "M_2"} and mami["rounds"]["mean_rounds_run"] == 2
    assert len(mami["agents"]["per_round"]["moderator_success"]) == 2
    assert (
        mami["llm"]["prompt_files"]["collab_rec.txt"]
        and mami["llm"]["model"]["settings"]["temperature"] == 0.5
    )
    assert [r["query_id"] for r in read_jsonl(tmp_path / "mami" / "offers.jsonl")] == [
        "c_p_143_pop_high_hard"
    ]

    # a cached rerun (from scratch) sends nothing and gives the same metrics
    again = llm()
    rerun = run_benchmark(
        "mami",
        kb,
        queries,
        tmp_path / "mami",
        llm=again,
        config=config,
        max_repairs=0,
        overwrite=True,
        progress=False,
    )
    assert again.usage["requests"] == 0 and again.usage["cache_hits"] == 6
    assert rerun["systems"] == mami["systems"] and rerun["agents"] == mami["agents"]


def test_trace_baseline_through_the_runner(transformers_server, tmp_path, monkeypatch, one_torch_thread):
    import baselines
    from trace_dataset.constants import KB_DIRNAME
    from trace_dataset.kb.store import KnowledgeBase
    from trace_dataset.views import turn_rows
    from trace_harness.leaderboard.build import system_label
    from trace_harness.protocols.teacher_forced.runner import run_baseline

    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))
    short = dialogue()
    short["turns"] = [
        *short["turns"][:2],
        short["turns"][-2],
        short["turns"][-1],
    ]  # greet, recommend, accept, bye
    data = write_data_dir(tmp_path / "data", [short])
    params = {
        "llm": transformers_server.spec,
        "strategy": "sasi",
        "k": K,
        "max_repairs": 0,
        "llm_options": BY_PROMPT,
        **SHORT,
    }
    meta = run_baseline("collab_rec", data, tmp_path / "preds.jsonl", params=params, progress=False)
    assert meta["complete"] and meta["baseline"] == "collab_rec" and meta["family"] == "LLM"
    model = transformers_server.model.rsplit("/", 1)[-1]
    assert meta["parameters"]["llm"]["model"].endswith(model)
    assert system_label(meta) == f"Collab-REC ({model})"  # the leaderboard row's label
    preds = list(read_jsonl(tmp_path / "preds.jsonl"))
    kb = KnowledgeBase.load(data / KB_DIRNAME)
    recommend = preds[0]
    assert sorted(recommend["ranked_poi_ids"]) == sorted(short["candidate_poi_ids"])
    counts = recommend["meta"]["counts"]
    assert (
        counts["agent_calls"] == 1
        and counts["agent_failures"] in (0, 1)
        and recommend["meta"]["system"] == "SASI"
    )
    names = {p.name for p in kb.pois.values()}
    assert counts["hallucinated_names"] == len(recommend["meta"]["hallucinated"])
    assert not set(recommend["meta"]["hallucinated"]) & names  # a hallucination names no pool POI
    for label, rid in recommend[
        "citations"
    ].items():  # the template's verbatim quotes: grounding is measurable
        quote = recommend["response"].split(f" [{label}]")[0].rsplit('"', 2)[-2]
        assert quote in kb.review_text(rid)

    # the same turns again, from the cache: no request, the same predictions
    pipe = baselines.pipeline("collab_rec", kb, **params)
    again = list(pipe(turn_rows(short)))
    assert pipe.llm.usage["requests"] == 0 and again == preds
