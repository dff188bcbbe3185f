"""The dry run counts what a live run then sends: requests counted where they arrive (a scripted server that
answers as the dry run assumes), per role, for the LLM systems, the LLM traveler, CoRE and the judge; the cache
taken into account; the manifest of the live run."""

from __future__ import annotations

import pytest

from tests.support.llm_baselines import write_data_dir
from tests.support.reproduce import dry_run_responder, requests_by_role, write_config
from tests.support.stub_server import StubOpenAI
from trace_dataset.io import read_json
from trace_harness.reproduce.config import load_config
from trace_harness.reproduce.dryrun import format_plan, plan
from trace_harness.reproduce.jobs import Context
from trace_harness.reproduce.run import run_live

SYSTEMS = ["popularity", "llm_zero_shot", "dst", "rag_citation", "multi_review_synthesis"]
DST_BUDGET = {"dst": {"max_new_tokens": 192}}  # its state delta closes in no fewer (trace_llm.budget)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_data_dir(tmp_path_factory.mktemp("reproduce") / "data")


def _plan_and_run(path):
    ctx = Context(load_config(path))
    try:
        planned = plan(ctx)
        board = run_live(ctx, str(path), progress=False)
    finally:
        ctx.close()
    return planned, board


def test_the_dry_run_counts_the_requests_a_live_run_sends(data, tmp_path):
    with StubOpenAI(dry_run_responder) as stub:
        path = write_config(
            tmp_path / "c.yaml",
            data,
            stub.url,
            parts=["table5", "table6"],
            systems=SYSTEMS,
            system_params=DST_BUDGET,
        )
        planned, board = _plan_and_run(path)
        sent = requests_by_role(stub.requests)
        assert planned["requests_by_role"] == sent and sent["systems"] > 20
        assert planned["total"]["requests"] == sum(sent.values())
        # round 1 is exact, what follows answers is estimated, and the plan says which and why
        dst = next(j for j in planned["jobs"] if j["what"] == "run dst (closed)")
        assert (
            0 < dst["exact"] < dst["requests"]
            and "DST's response is asked after its state extraction" in dst["notes"][0]
        )
        text = format_plan(planned)
        assert "nothing was sent" in text and "4 characters per token" in text and "an upper bound" in text
        # preflight: one request per server of each model that had requests to send
        preflights = [r for r in stub.requests if r["max_tokens"] == 1]
        assert [r["model"] for r in preflights] == ["sys"]
        # a second dry run finds everything in the cache, a second live run sends nothing (not even a preflight)
        before = len(stub.requests)
        again, _ = _plan_and_run(path)
        assert again["total"]["requests"] == 0 and len(stub.requests) == before
    rows = {(r["system"], r["pool"]) for r in board["rows"]}
    assert ("LLM Zero-Shot (sys)", "closed") in rows and ("DST (sys)", "open") in rows
    manifest = read_json(board["manifest"])
    assert manifest["mode"] == "live" and manifest["trace_bench"]["version"]
    assert manifest["data"]["kb_version"] == "kb-llm-test-1" and set(manifest["data"]["data_files"]) == {
        "train",
        "validation",
        "test",
    }
    assert (
        manifest["models"]["systems"]["model"] == "sys"
        and manifest["models"]["systems"]["settings"]["seed"] == 42
    )
    assert manifest["models"]["systems"]["servers"][0]["server_header"].startswith("BaseHTTP")
    assert manifest["prompts"]["dst"]["sha256"] and manifest["prompts"]["rag_citation"]["sha256"]
    table5 = manifest["parts"]["table5"]  # the second run sent nothing; the first one's figures add up
    assert table5["sent"]["requests"] == 0 and table5["planned"]["requests"] == 0
    assert table5["sent_all_invocations"]["requests"] == planned["parts"]["table5"]["requests"]


def test_the_interactive_protocol_with_an_llm_traveler_is_counted(small_corpus, tmp_path):
    with StubOpenAI(dry_run_responder) as stub:
        path = write_config(
            tmp_path / "c.yaml",
            small_corpus,
            stub.url,
            parts=["interactive"],
            interactive={
                "systems": ["tfidf", "llm_zero_shot"],
                "simulator": "llm",
                "split": "test",
                "n": 2,
                "turns": 3,
            },
        )
        planned, board = _plan_and_run(path)
        sent = requests_by_role(stub.requests)
    assert planned["requests_by_role"] == sent and sent["simulator"] >= 4 and sent["systems"] >= 2
    job = next(j for j in planned["jobs"] if j["what"] == "interactive llm_zero_shot")
    assert job["exact"] < job["requests"] and "every turn after the first" in " ".join(job["notes"])
    assert (
        "Interactive" in board["text"]
        and (tmp_path / "out" / "interactive" / "tfidf" / "metrics.json").exists()
    )


def test_core_and_the_judge_are_counted_exactly_once_the_runs_exist(data, tmp_path):
    with StubOpenAI(dry_run_responder) as stub:
        first = write_config(tmp_path / "c.yaml", data, stub.url, systems=["tfidf", "llm_zero_shot"])
        _plan_and_run(first)  # the closed runs
        runs = len(stub.requests)
        path = write_config(
            tmp_path / "c.yaml",
            data,
            stub.url,
            systems=["tfidf", "llm_zero_shot"],
            parts=["table5", "core", "judge"],
            core={"systems": ["tfidf", "llm_zero_shot"], "split": "test", "max_rounds": 2},
        )
        planned, board = _plan_and_run(path)
        sent = requests_by_role(stub.requests[runs:])
        assert planned["requests_by_role"] == sent and set(sent) == {"core", "judge"}
        assert all(j["exact"] == j["requests"] for j in planned["jobs"] if j["part"] == "judge")
    judged = [r for r in board["rows"] if "judge_relevance" in r["metrics"]]
    assert len(judged) == 2  # the judge's scores are in the closed rows of the leaderboard
    table = board["text"].split("Table 29: LLM-as-judge (1-5), judge judge\n", 1)[1].splitlines()
    assert table[0].split() == [
        "System",
        "relevance",
        "informativeness",
        "grounding",
        "flow",
        "justification",
        "rated/turns",
    ]
    tfidf = next(r for r in judged if r["baseline"] == "tfidf")
    turns = tfidf["n"]["recall@1"]
    assert table[2].split()[0] == "TF-IDF" and table[2].split()[-1] == f"{turns}/{turns}"  # every turn rated


def test_stand_in_predictions_before_the_runs_exist(data, tmp_path):
    with StubOpenAI(dry_run_responder) as stub:
        path = write_config(
            tmp_path / "c.yaml", data, stub.url, systems=["tfidf", "llm_zero_shot"], parts=["table5", "judge"]
        )
        ctx = Context(load_config(path))
        try:
            planned = plan(ctx)
        finally:
            ctx.close()
        assert stub.requests == []  # a dry run sends nothing
    judge = [j for j in planned["jobs"] if j["part"] == "judge"]
    assert [j["requests"] > 0 and j["exact"] == 0 for j in judge] == [
        True,
        True,
    ]  # each counted, as estimates
    assert "reference turns in place of its responses" in judge[0]["notes"][0]
    assert not any("reliability report" in n for n in planned["parts"]["judge"]["notes"])


def test_the_plan_says_the_reliability_reports_are_not_counted(data, tmp_path):
    path = write_config(
        tmp_path / "c.yaml",
        data,
        "http://127.0.0.1:9/v1",
        systems=["tfidf"],
        parts=["table5", "judge"],
        reliability={"k": 3, "limit": 4},
    )
    ctx = Context(load_config(path))
    try:
        planned = plan(ctx)
    finally:
        ctx.close()
    [note] = [n for n in planned["parts"]["judge"]["notes"] if "reliability report" in n]
    assert note.startswith("not counted above: its reliability report (reliability.k = 3) sends about 3 more")
    assert "2 repeat(s)" in note and "first 4 dialogues" in note
    assert "core" not in planned["parts"]  # a part the config does not ask for gets no note
    assert note in format_plan(planned)


def test_prices_give_the_cost(data, tmp_path):
    path = write_config(
        tmp_path / "c.yaml",
        data,
        "http://127.0.0.1:9/v1",
        models={
            "systems": {
                "llm": "openai:http://127.0.0.1:9/v1#sys",
                "max_new_tokens": 50,
                "price": {"input": 2.0, "output": 10.0},
            }
        },
    )
    ctx = Context(load_config(path))
    try:
        planned = plan(ctx)
    finally:
        ctx.close()
    row = planned["parts"]["table5"]
    assert (
        row["requests"] > 0 and row["output_tokens"] == 50 * row["requests"]
    )  # max_new_tokens: no cached answer
    assert row["cost_usd"] == pytest.approx(
        row["prompt_tokens"] * 2e-6 + row["output_tokens"] * 1e-5, abs=1e-4
    )


def test_the_command_prints_the_power_of_the_run_sets(data, tmp_path, capsys):
    from trace_bench.cli import main
    from trace_metrics.lib.significance import detectable_effect

    path = write_config(tmp_path / "c.yaml", data, "http://127.0.0.1:9/v1", systems=["popularity", "tfidf"])
    assert main(["reproduce", str(path), "--dry-run", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "Power (paired t-test over dialogues, alpha 0.05, 80%" in out
    assert f"open pool (all split): 2 dialogues detect {detectable_effect(2):.3f} sd" in out
    assert "closed pool (all split): " in out and "size unknown" not in out
