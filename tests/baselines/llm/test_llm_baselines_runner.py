"""The runner and CLI for LLM baselines: the seeded subset (a data directory `trace-bench evaluate` scores), the
run summary, resuming with another server URL, and the `trace-bench run` options (model answers scripted)."""

from __future__ import annotations

import json

import pytest

from tests.support.llm import ScriptedLLM
from tests.support.llm_baselines import ranking_reply
from trace_bench.cli import main
from trace_dataset.datadir import iter_dialogues
from trace_dataset.io import TraceDataError, read_json
from trace_harness.protocols.subsets import select_subset, subset_dirname, write_subset
from trace_harness.protocols.teacher_forced.runner import meta_path, run_baseline, run_identity
from trace_metrics.lib.suite import evaluate_run


def test_select_subset_is_seeded_and_keeps_corpus_order():
    items = [{"dialogue_id": f"d{i}"} for i in range(20)]
    a = select_subset(items, 5, seed=42)
    assert a == select_subset(items, 5, seed=42) != select_subset(items, 5, seed=7)
    assert [items.index(x) for x in a] == sorted(items.index(x) for x in a)
    assert select_subset(items, 50) == items
    with pytest.raises(ValueError, match="positive"):
        select_subset(items, 0)


def test_write_subset_is_a_data_directory_reused_or_refused(data_dir, tmp_path):
    out = write_subset(data_dir, tmp_path / "sub", 1, split="validation")
    chosen = list(iter_dialogues(out, "validation"))
    assert len(chosen) == 1 and (out / "knowledge_base" / "pois.jsonl.gz").exists()
    record = read_json(out / "corpus.json")["subset"]
    assert record["n"] == 1 and record["seed"] == 42 and record["n_dialogues"] == 1
    assert write_subset(data_dir, tmp_path / "sub", 1, split="validation") == out  # the same subset: reused
    with pytest.raises(TraceDataError, match="another subset"):
        write_subset(data_dir, tmp_path / "sub", 2, split="validation")


def test_a_subset_run_is_scored_against_its_data_directory(data_dir, tmp_path):
    out = tmp_path / "runs" / "zs.jsonl"
    meta = run_baseline(
        "llm_zero_shot",
        data_dir,
        out,
        split="validation",
        pool="open",
        subset=1,
        progress=False,
        params={"llm": ScriptedLLM(ranking_reply())},
    )
    sub = tmp_path / "runs" / subset_dirname("validation", 1, 42)
    assert meta["subset"] == {"n": 1, "seed": 42, "data_dir": str(sub.absolute())}
    assert meta["n_dialogues"] == 1 and meta["n_rows"] == 2
    result = evaluate_run(sub, out, split="validation", pool="open")
    assert result["counts"]["dialogues"] == 1
    with pytest.raises(TraceDataError, match="missing"):
        evaluate_run(data_dir, out, split="validation", pool="open")  # the full split has two dialogues
    # another subset in the same runs folder (the docs' promise): refused, naming both subset folders
    other = subset_dirname("validation", 2, 42)
    message = rf"already holds the subset {sub.name}, and this run asks for {other}"
    with pytest.raises(TraceDataError, match=message):
        run_baseline(
            "popularity",
            data_dir,
            tmp_path / "runs" / "pop.jsonl",
            split="validation",
            pool="open",
            subset=2,
            progress=False,
        )
    assert not (tmp_path / "runs" / other).exists()
    # the same subset is shared by every run of the folder
    run_baseline(
        "popularity",
        data_dir,
        tmp_path / "runs" / "pop.jsonl",
        split="validation",
        pool="open",
        subset=1,
        progress=False,
    )


def test_summary_sums_row_counts_and_usage(data_dir, tmp_path):
    out = tmp_path / "it.jsonl"
    llm = ScriptedLLM(lambda conv: "no JSON at all")
    meta = run_baseline(
        "itinerary_llm", data_dir, out, split="all", progress=False, params={"llm": llm, "json_repairs": 0}
    )
    assert meta["summary"]["rows"] == {"fallback_popularity": 8}
    assert meta["summary"]["usage"]["llm_usage"]["json_failures"] == 8
    usage = meta["summary"]["usage"]["llm_usage"]
    assert (usage["requests"], usage["cache_hits"]) == (6, 2)  # two dialogues ask the very same: sent once
    assert meta["summary"]["usage_all_invocations"] == meta["summary"]["usage"]
    assert read_json(meta_path(out)) == meta
    # the one shape every table reads: 8 of 8 turns fell back, so the row is not the system's own
    report = meta["summary"]["fallbacks"]
    assert report["kinds"]["fallback_popularity"] == {
        "count": 8,
        "of": 8,
        "share": 1.0,
        "per": "system turn",
        "marked": True,
        "replaces": True,
        "what": "answered by the Popularity fallback",
    }
    assert report["kinds"]["json_failures"]["share"] == 1.0  # 8 answers, 6 sent and 2 from the cache
    assert report["kinds"]["dialect_fallbacks"] == {
        **report["kinds"]["dialect_fallbacks"],
        "count": 0,
        "of": 6,
    }
    assert (report["replaced_share"], report["own_result"], report["rows"]) == (1.0, False, 8)


def test_identity_ignores_where_the_server_runs():
    a = {
        "baseline": "dst",
        "parameters": {
            "llm": {
                "model": "m",
                "spec": "openai:http://a/v1#m",
                "base_url": "http://a/v1",
                "settings": {"seed": 42},
            }
        },
    }
    b = json.loads(json.dumps(a).replace("http://a/v1", "http://b:8001/v1"))
    assert run_identity(a) == run_identity(b)
    c = json.loads(json.dumps(a).replace('"seed": 42', '"seed": 1'))
    assert run_identity(a) != run_identity(c)


def test_cli_refuses_llm_options_for_non_llm_baselines(data_dir, tmp_path, capsys):
    base = ["run", "--data", str(data_dir), "--out", str(tmp_path / "x")]
    assert main([*base[:1], "tfidf", *base[1:], "--llm", "smollm2"]) == 2
    assert "not an LLM baseline" in capsys.readouterr().err
    assert main([*base, "--all", "--prefilter", "dense"]) == 2
    assert "--all-llm" in capsys.readouterr().err


def test_cli_prefilter_reaches_the_baselines_that_take_one():
    import argparse

    from trace_harness.protocols.teacher_forced.cli import llm_params, register_run
    from trace_llm.cli import llm_options

    parser = argparse.ArgumentParser()
    register_run(parser.add_subparsers())
    args = parser.parse_args(
        [
            "run",
            "--all-llm",
            "--data",
            "d",
            "--out",
            "o",
            "--prefilter",
            "dense",
            "--llm",
            "openai:http://a/v1,http://b/v1#m",
            "--llm-concurrency",
            "8",
        ]
    )
    zs, dst = llm_params(args, "llm_zero_shot"), llm_params(args, "dst")
    assert zs["prefilter"] == "dense" and "prefilter" not in dst
    assert zs["llm"] == "openai:http://a/v1,http://b/v1#m" and zs["llm_options"] == {"concurrency": 8}
    # not given: the pipeline takes App. F's decoding for its model (0.0 / 600 here; 1.0 / 16,000 for gpt-5*)
    assert (zs["temperature"], zs["max_new_tokens"]) == (None, None)
    args = parser.parse_args(
        ["run", "dst", "--data", "d", "--out", "o", "--temperature", "1", "--max-new-tokens", "9"]
    )
    assert (llm_params(args, "dst")["temperature"], llm_params(args, "dst")["max_new_tokens"]) == (1.0, 9)
    args = parser.parse_args(["run", "dst", "--data", "d", "--out", "o"])
    assert args.llm is None and llm_params(args, "dst")["llm"] == "smollm2"
    # every backend flag the run command shows reaches the model (the same list as every other LLM command)
    flags = ["--llm-prompt-cache", "0", "--llm-flash-attn", "--llm-dtype", "float16", "--llm-threads", "1"]
    args = parser.parse_args(["run", "llm_zero_shot", "--data", "d", "--out", "o", *flags])
    options = {"prompt_cache": 0, "flash_attn": True, "dtype": "float16", "threads": 1}
    assert llm_params(args, "llm_zero_shot")["llm_options"] == options
    assert {k: v for k, v in llm_options(args).items() if v is not None} == options


def test_the_same_baseline_under_two_models_gives_two_leaderboard_rows(data_dir, tmp_path):
    from trace_harness.leaderboard.build import build_leaderboard

    class Other(ScriptedLLM):
        def __init__(self, reply):
            super().__init__(reply)
            self.model = "org/Other-7B"

    for llm, out in (
        (ScriptedLLM(ranking_reply()), "zs-scripted.jsonl"),
        (Other(ranking_reply(("P3",))), "zs-7b.jsonl"),
    ):
        run_baseline(
            "llm_zero_shot",
            data_dir,
            tmp_path / "runs" / out,
            split="validation",
            progress=False,
            params={"llm": llm},
        )
    rows = build_leaderboard(data_dir, tmp_path / "runs", split="validation", n_boot=50)
    assert sorted(r["system"] for r in rows) == ["LLM Zero-Shot (Other-7B)", "LLM Zero-Shot (scripted-model)"]
    assert {r["family"] for r in rows} == {"LLM"} and all(r["session_isolated"] for r in rows)


def test_memory_aug_is_reported_apart_on_the_leaderboard(data_dir, tmp_path, monkeypatch):
    from tests.support.llm_baselines import WordEncoder
    from trace_harness.leaderboard.build import build_leaderboard
    from trace_harness.leaderboard.render import format_tables

    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))
    for name in ("memory_aug", "llm_zero_shot"):
        extra = {"encoder": WordEncoder()} if name == "memory_aug" else {}
        run_baseline(
            name,
            data_dir,
            tmp_path / "runs" / f"{name}.jsonl",
            split="validation",
            progress=False,
            params={"llm": ScriptedLLM(ranking_reply()), **extra},
        )
    rows = build_leaderboard(data_dir, tmp_path / "runs", split="validation", n_boot=50)
    assert {r["system"]: r["session_isolated"] for r in rows} == {
        "LLM Zero-Shot (scripted-model)": True,
        "Memory-Aug. (scripted-model)": False,
    }
    text = format_tables(rows, pools=("closed",))
    lines = text.split("Table 5: headline — pool: closed\n", 1)[1].splitlines()  # its header, then its rows
    assert lines[1].startswith("LLM Zero-Shot (scripted-model) ") and lines[2].startswith(
        "Memory-Aug. (scripted-model)‡ "
    )
    assert lines[3].startswith("‡ not session-isolated")


def test_a_run_resumes_with_other_transport_settings_which_stay_recorded(data_dir, tmp_path):
    from trace_llm import LLMConnectionError

    calls = []

    def unreachable_after_one_dialogue(conv):
        calls.append(1)
        if len(calls) > 2:
            raise LLMConnectionError("server gone", url="http://a/v1")
        return ranking_reply()(conv)

    out = tmp_path / "zs.jsonl"
    first = {"timeout": 5.0, "concurrency": 4, "api_key": "sk-secret"}
    with pytest.raises(LLMConnectionError):
        run_baseline(
            "llm_zero_shot",
            data_dir,
            out,
            split="all",
            progress=False,
            chunk_dialogues=1,
            params={"llm": ScriptedLLM(unreachable_after_one_dialogue), "llm_options": first},
        )
    started = read_json(meta_path(out))
    assert started["llm_options"] == {"timeout": 5.0, "concurrency": 4}  # recorded, the secret left out
    assert out.read_text().count("\n") == 2 and not started["complete"]
    again = {"timeout": 600.0, "concurrency": 16, "threads": 1}
    meta = run_baseline(
        "llm_zero_shot",
        data_dir,
        out,
        split="all",
        progress=False,
        chunk_dialogues=1,
        params={"llm": ScriptedLLM(ranking_reply()), "llm_options": again},
    )
    assert meta["complete"] and meta["llm_options"] == again and meta["n_rows"] == 8
    assert out.read_text().count("\n") == 8
    with pytest.raises(
        TraceDataError, match="differing: llm_options"
    ):  # what the model computes on is identity
        run_baseline(
            "llm_zero_shot",
            data_dir,
            out,
            split="all",
            progress=False,
            params={"llm": ScriptedLLM(ranking_reply()), "llm_options": {"device": "cuda"}},
        )


def test_identity_ignores_transport_settings_but_not_the_model_or_decoding():
    llm = {
        "backend": "hf",
        "model": "m",
        "spec": "smollm2",
        "dtype": "float32",
        "batch_size": 8,
        "settings": {"temperature": 1.0, "seed": 42},
    }
    a = {"baseline": "dst", "parameters": {"llm": llm}, "llm_options": {"timeout": 5.0, "concurrency": 4}}
    b = {"baseline": "dst", "parameters": {"llm": {**llm, "batch_size": 2}}, "llm_options": {"threads": 1}}
    assert run_identity(a) == run_identity(b) == run_identity({**a, "llm_options": None})
    cached = {"parameters": {"llm": {**llm, "prompt_cache": 1024}}, "llm_options": {"prompt_cache": 0}}
    assert run_identity(a) == run_identity({**a, **cached})  # llama.cpp's prompt cache changes no reply
    assert run_identity(a) != run_identity({**a, "parameters": {"llm": {**llm, "dtype": "bfloat16"}}})
    assert run_identity(a) != run_identity({**a, "llm_options": {"device": "cuda"}})


@pytest.mark.parametrize(
    "name", ["collab_rec", "sniprec", "sniprec_snippet", "sniprec_sentence", "sniprec_document"]
)
def test_cli_gives_the_other_papers_systems_the_llm_but_not_app_f_decoding(name, monkeypatch, tmp_path):
    import trace_harness.protocols.teacher_forced.runner

    seen = {}

    def fake_run(name, data, out, **kwargs):
        seen.update(name=name, params=kwargs["params"])
        return {"n_rows": 0, "split": "test", "pool": "closed"}

    monkeypatch.setattr(trace_harness.protocols.teacher_forced.runner, "run_baseline", fake_run)
    base = [
        "run",
        name,
        "--data",
        str(tmp_path),
        "--out",
        str(tmp_path / "o.jsonl"),
        "--llm",
        "openai:http://a/v1#m",
    ]
    assert main([*base, "--llm-timeout", "30", "--llm-concurrency", "8"]) == 0
    assert seen["params"] == {
        "llm": "openai:http://a/v1#m",
        "llm_options": {"timeout": 30.0, "concurrency": 8},
    }
    assert main([*base, "--temperature", "0", "--max-new-tokens", "32", "--param", "seed=7"]) == 0
    assert seen["params"] == {
        "llm": "openai:http://a/v1#m",
        "temperature": 0.0,
        "max_new_tokens": 32,
        "seed": 7,
    }
    assert main([*base, "--prefilter", "dense"]) == 2  # no candidate prompt to cut


def test_the_systems_build_with_the_cli_parameters_keeping_their_own_decoding(kb):
    import argparse

    from baselines import pipeline
    from trace_harness.protocols.teacher_forced.cli import llm_params, register_run

    parser = argparse.ArgumentParser()
    register_run(parser.add_subparsers())
    args = parser.parse_args(
        [
            "run",
            "collab_rec",
            "--data",
            "d",
            "--out",
            "o",
            "--llm",
            "openai:http://127.0.0.1:9/v1#m",
            "--llm-timeout",
            "30",
            "--no-llm-cache",
        ]
    )
    collab = pipeline(
        "collab_rec", kb=kb, **llm_params(args, "collab_rec")
    )  # nothing is sent at construction
    settings = collab.llm.settings
    assert (settings.temperature, settings.top_p) == (0.5, 0.95)  # Collab-REC's own, not App. F's 1.0 / 1.0
    assert collab.llm.model == "m" and collab.llm.timeout.read == 30.0 and settings.max_new_tokens == 512
    args = parser.parse_args(["run", "sniprec", "--data", "d", "--out", "o", "--snippets", "rules"])
    assert llm_params(args, "sniprec") == {}  # no --llm: SnipRec's offline path, as before


def test_a_system_s_declared_llm_options_are_its_run_defaults_and_a_flag_wins(monkeypatch, capsys):
    import argparse

    from trace_harness.protocols.teacher_forced.cli import llm_params, register_run

    parser = argparse.ArgumentParser()
    register_run(parser.add_subparsers())

    def options(*argv: str) -> dict:
        return llm_params(
            parser.parse_args(["run", argv[0], "--data", "d", "--out", "o", *argv[1:]]), argv[0]
        )["llm_options"]

    # DST declares parallel 4 (baselines.identity), with the packaged model or another; a flag wins
    assert options("dst") == {"parallel": 4}
    assert options("dst", "--llm-threads", "1") == {"threads": 1, "parallel": 4}  # the flags' order
    assert options("dst", "--llm-parallel", "1") == {"parallel": 1}
    assert options("llm_zero_shot") == {} and options("collab_rec", "--llm-parallel", "2") == {"parallel": 2}
    assert "llm_options" not in llm_params(
        parser.parse_args(["run", "collab_rec", "--data", "d", "--out", "o"]), "collab_rec"
    )  # a system of another paper without a declared default: nothing given, nothing passed
    # SnipRec declares none; without --llm it runs offline and takes no LLM parameter at all
    assert "llm_options" not in llm_params(
        parser.parse_args(["run", "sniprec", "--data", "d", "--out", "o"]), "sniprec"
    )
    # the help names who has which default
    monkeypatch.setenv("COLUMNS", "1000")
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--help"])
    assert "(default: 4 for dst, multi_review_synthesis, memory_aug; otherwise 1)" in capsys.readouterr().out
