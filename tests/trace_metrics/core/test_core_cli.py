"""`trace-bench core ...` and `trace-bench evaluate --core`, in process, against the scripted stub server."""

from __future__ import annotations

import json

import pytest

from tests.support.core import scripted
from trace_bench.cli import main
from trace_dataset.io import read_json


def _score(server, data_dir, predictions, out, cache, *extra):
    return main(
        [
            "core",
            "score",
            "--data",
            str(data_dir),
            "--predictions",
            str(predictions),
            "--out",
            str(out),
            "--llm",
            server.spec(),
            "--llm-cache",
            str(cache),
            *extra,
        ]
    )


def test_score_then_rerun(stub_factory, data_dir, predictions, tmp_path, capsys):
    server = stub_factory(scripted({"Novelty": "no rating at all"}))
    out = tmp_path / "core"
    assert (
        _score(
            server, data_dir, predictions, out, tmp_path / "c.sqlite", "--limit", "2", "--max-retries", "0"
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "on 2 dialogues of tfidf" in text and "novelty" in text and "ratings: 22 of 24 valid" in text
    assert "missing by reason: missing 2" in text and "consensus in 1.000 of them" in text
    # the factor SmolLM2-like replies never rated is marked beside its missing share; the mean over all is not
    assert "novelty †" in text and "2 (100%)" in text and "more than 10% of these ratings are missing" in text
    assert "factor_mean (0-4) " in text and "2 (8%)" in text and "factor_mean (0-4) †" not in text
    assert "this run: 2 dialogues scored, 0 already done; 32 requests" in text
    identity = read_json(out / "run.json")["identity"]
    assert (
        identity["llm"]["settings"]["max_new_tokens"] == 1024
        and identity["llm"]["settings"]["temperature"] == 0.0
    )
    assert identity["options"]["debate_settings"]["max_new_tokens"] == 512
    assert identity["prompts"]["version"] == "core-prompts-1" and len(identity["prompts"]["sha256"]) == 64
    sent = len(server.requests)
    assert (
        _score(
            server, data_dir, predictions, out, tmp_path / "c.sqlite", "--limit", "2", "--max-retries", "0"
        )
        == 0
    )
    assert "0 dialogues scored, 2 already done; 0 requests" in capsys.readouterr().out
    assert len(server.requests) == sent
    # another configuration in the same folder is refused with one line and exit code 2
    assert _score(server, data_dir, predictions, out, tmp_path / "c.sqlite", "--limit", "2") == 2
    assert "another configuration" in capsys.readouterr().err


def test_score_arguments_are_checked(stub_factory, data_dir, predictions, tmp_path, capsys):
    server = stub_factory()
    assert _score(server, data_dir, predictions, tmp_path / "o", tmp_path / "c", "--factors", "charm") == 2
    assert "--factors" in capsys.readouterr().err
    for bad in (["--top-k", "0"], ["--rounds", "zero"], ["--max-retries", "-1"]):
        with pytest.raises(SystemExit) as info:
            _score(server, data_dir, predictions, tmp_path / "o", tmp_path / "c", *bad)
        assert info.value.code == 2
    assert (
        main(
            [
                "core",
                "score",
                "--data",
                str(tmp_path / "nowhere"),
                "--predictions",
                str(predictions),
                "--out",
                str(tmp_path / "o"),
                "--llm",
                server.spec(),
            ]
        )
        == 2
    )
    assert "data directory not found" in capsys.readouterr().err
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    for out in (tmp_path / "a_file", tmp_path / "busy"):
        assert _score(server, data_dir, predictions, out, tmp_path / "c") == 2
        assert "CoRE output" in capsys.readouterr().err
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine"
    # a budget in which a constrained debate statement may not close: refused before any request
    short = ["--debate-max-new-tokens", "105"]
    assert _score(server, data_dir, predictions, tmp_path / "o", tmp_path / "c", *short) == 2
    assert "CoRE's debate: max_new_tokens=105 is below the 106 tokens" in capsys.readouterr().err
    assert server.requests == []


def test_log_command(data_dir, predictions, capsys):
    assert (
        main(
            [
                "core",
                "log",
                "--data",
                str(data_dir),
                "--predictions",
                str(predictions),
                "--dialogue",
                "toy_00002",
                "--evidence",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert text.startswith("<conversation>") and "Esplanade Vegan" in text and "<cited_reviews>" in text


def test_human_and_meta_commands(tmp_path, capsys):
    ann = tmp_path / "ann.jsonl"
    rows = []
    for k in range(6):
        for system in ("tfidf", "dense"):
            rows.append(
                {
                    "item_id": f"d{k}:1:{system}",
                    "annotator": "A1",
                    "baseline": system,
                    "dialogue_id": f"d{k}",
                    "quote_labels": [],
                    "errors": [],
                    "informativeness": 3,
                    "naturalness": 1 + k % 5,
                    "core": {"coherence": k % 5, "overall": 10 * k + (system == "tfidf")},
                }
            )
    ann.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert (
        main(
            [
                "core",
                "human",
                "--annotations",
                str(ann),
                "--out",
                str(tmp_path / "human.jsonl"),
                "--likert-naturalness",
            ]
        )
        == 0
    )
    assert "36 rows for 12 logs; factors coherence, naturalness, overall" in capsys.readouterr().out
    scores = tmp_path / "scores.jsonl"
    scores.write_text(
        "".join(
            json.dumps({"id": f"d{k}:{s}", "factor": f, "score": v}) + "\n"
            for k in range(6)
            for s in ("tfidf", "dense")
            for f, v in (
                ("coherence", (k + (s == "dense")) % 5),
                ("naturalness", k % 5),
                ("overall", 9.0 * k),
            )
        )
    )
    args = ["core", "meta", "--scores", str(scores), "--human", str(tmp_path / "human.jsonl")]
    assert main([*args, "--out", str(tmp_path / "meta.json"), "--plots", str(tmp_path / "plots")]) == 0
    text = capsys.readouterr().out
    assert "12 logs rated by both (QWK over labels [0, 1, 2, 3, 4])" in text
    assert "overall: debate" in text and "system ranking agreement" in text
    assert (tmp_path / "plots" / "core_coupling.png").is_file() and (
        tmp_path / "plots" / "core_agreement.png"
    ).is_file()
    saved = read_json(tmp_path / "meta.json")
    assert saved["factors"]["naturalness"]["qwk"] == pytest.approx(1.0)
    assert main([*args, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["factors"]["coherence"]["n"] == 12 and printed["label_set"] == [0, 1, 2, 3, 4]
    assert main(["core", "meta", "--scores", str(tmp_path / "none.jsonl"), "--human", str(scores)]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("trace-bench: error: ") and "none.jsonl" in err and len(err.strip().splitlines()) == 1
    )


def test_evaluate_with_core(stub_factory, data_dir, predictions, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))
    server = stub_factory()
    out = tmp_path / "results.json"
    assert (
        main(
            [
                "evaluate",
                "--data",
                str(data_dir),
                "--predictions",
                str(predictions),
                "--out",
                str(out),
                "--core",
                server.spec(),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "CoRE (openai:" in text and "overall (debate, 0-100)" in text
    result = read_json(out)
    assert result["core"]["summary"]["n_logs"] == 3 and result["core"]["summary"]["overall"]["mean"] == 70.0
    assert result["core"]["out_dir"] == str(tmp_path / "results.core")
    assert (tmp_path / "results.core" / "scores.jsonl").is_file()
    assert "recall@1" in result["values"] and not any(k.startswith("core") for k in result["values"])


def test_core_commands_decode_side_by_side_on_llama_cpp_unless_told():
    """`core score` and `core reliability` give the backends their CORE_LLM_OPTIONS (parallel=4, docs/core.md);
    the flag still sets it, and other commands leave it to the backend (None)."""
    from trace_bench.cli import build_parser
    from trace_llm.cli import llm_options
    from trace_metrics.core.scoring import CORE_LLM_OPTIONS

    parser = build_parser()
    score = ["core", "score", "--data", "D", "--predictions", "P", "--out", "O"]
    parallel = CORE_LLM_OPTIONS["parallel"]
    assert parallel > 1
    assert llm_options(parser.parse_args(score))["parallel"] == parallel
    assert llm_options(parser.parse_args(["core", "reliability", "--run", "R"]))["parallel"] == parallel
    assert llm_options(parser.parse_args([*score, "--llm-parallel", "1"]))["parallel"] == 1
    assert llm_options(parser.parse_args(["llm", "chat", "hi"]))["parallel"] is None
