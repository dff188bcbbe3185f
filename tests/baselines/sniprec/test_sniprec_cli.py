"""`trace-bench sniprec build` without a model (units only); the encoding and LLM forms run in the slow tests
(test_sniprec_pipeline.py, test_sniprec_llm.py)."""

from __future__ import annotations

import json
import shlex

import pytest

import baselines.sniprec.cli as sniprec_cli
from baselines.sniprec.index import DEFAULT_ENCODER
from tests.support.sniprec import sample_dialogues, write_data_dir
from trace_bench.cli import build_parser, main


def test_build_makes_the_store_a_run_reads_and_resumes(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))
    data = write_data_dir(tmp_path / "corpus", sample_dialogues(1))
    assert main(["sniprec", "build", "--data", str(data), "--kind", "sentence", "--no-encode"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("sentence units of 4 POIs (4 extracted now, ")
    [store] = list(
        (tmp_path / "cache" / "sniprec").glob("*/sentence-v*/store.json")
    )  # the default cache folder
    summary = json.loads(store.read_text())
    assert summary["n_pois"] == 4 and summary["n_review_units"] > 0 and str(store.parent) in out
    # a second build finds everything cached
    assert (
        main(["sniprec", "build", "--kb", str(data / "knowledge_base"), "--kind", "sentence", "--no-encode"])
        == 0
    )
    assert "(0 extracted now, " in capsys.readouterr().out


def test_build_refuses_what_does_not_fit(tmp_path, capsys):
    data = write_data_dir(tmp_path / "corpus", sample_dialogues(1))
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert main(["sniprec", "build", "--data", str(data), "--kind", "llm", *cache]) == 2
    assert "--kind llm needs --llm SPEC" in capsys.readouterr().err
    assert main(["sniprec", "build", "--data", str(data), "--llm", "smollm2", "--no-encode", *cache]) == 2
    assert "--llm is for --kind llm" in capsys.readouterr().err
    for option, value, expected in (
        ("--json-repairs", "-1", "expected an integer >= 0"),
        ("--encoder-threads", "0", "expected an integer >= 1"),
    ):
        with pytest.raises(SystemExit) as refused:  # refused while the options are parsed
            main(
                [
                    "sniprec",
                    "build",
                    "--data",
                    str(data),
                    "--kind",
                    "llm",
                    "--llm",
                    "smollm2",
                    option,
                    value,
                    *cache,
                ]
            )
        assert refused.value.code == 2 and f"argument {option}: {expected}" in capsys.readouterr().err
    assert main(["sniprec", "build", "--kb", str(tmp_path / "nowhere"), "--no-encode", *cache]) == 2
    err = capsys.readouterr().err
    assert err.startswith("trace-bench: error:") and "nowhere" in err
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("units.jsonl"))


def test_the_commands_the_help_prints_parse_as_printed():
    """Every `trace-bench sniprec ...` line of the help text is a valid command line (DIR/SPEC filled in)."""
    lines = [
        line.split("#")[0].strip()
        for line in sniprec_cli.__doc__.splitlines()
        if line.strip().startswith("trace-bench sniprec")
    ]
    assert len(lines) == 3
    parser = build_parser()
    for line in lines:
        argv = shlex.split(line.replace("SPEC", "smollm2"))[1:]
        args = parser.parse_args(argv)
        assert args.func is sniprec_cli.build
    assert parser.parse_args(["sniprec", "build", "--kb", "x"]).encoder is None  # -> DEFAULT_ENCODER
    assert DEFAULT_ENCODER.endswith("all-MiniLM-L6-v2")
