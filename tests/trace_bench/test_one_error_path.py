"""One error path: every user-facing error derives from
`trace_bench.errors.TraceBenchError` and reaches the user as one line and exit 2; options are refused when they
are parsed (`trace_bench.options`), naming the option; corrupt caches name the file and how to get past them."""

from __future__ import annotations

import argparse
import importlib
import sqlite3

import numpy as np
import pytest

from tests.support.cli import run_cli
from trace_bench.errors import CacheError, TraceBenchError, UsageError, sqlite_cache
from trace_bench.options import byte_size, number_in, positive_seconds

USER_FACING = [
    ("trace_bench.errors", "UsageError"),
    ("trace_bench.errors", "CacheError"),
    ("trace_llm.errors", "LLMError"),
    ("trace_dataset.io", "TraceDataError"),
    ("baselines.toolkit.dense", "DenseUnavailable"),
    ("trace_metrics.lib.entailment", "NLIModelError"),
    ("trace_harness.protocols.interactive.reply", "SystemUnreachable"),
    ("spaces_app.owners", "OwnerError"),
    ("spaces_app.uploads", "UploadError"),
    ("spaces_app.submissions", "SubmissionError"),
]


@pytest.mark.parametrize(("module", "name"), USER_FACING)
def test_every_user_facing_error_has_the_one_base(module, name):
    assert issubclass(getattr(importlib.import_module(module), name), TraceBenchError)


def test_number_in_refuses_non_finite_and_out_of_range_values():
    seed, weight, share = number_in(int, 0), number_in(float, 0), number_in(float, 0, 1, low_open=True)
    assert seed("0") == 0 and weight("2.5") == 2.5 and share("1") == 1.0
    for parse, text, message in (
        (seed, "-1", "expected an integer >= 0, got '-1'"),
        (seed, "1.5", "expected an integer, got '1.5'"),
        (weight, "nan", "expected a finite number >= 0, got 'nan'"),
        (weight, "inf", "expected a finite number >= 0, got 'inf'"),
        (weight, "-inf", "expected a finite number >= 0"),
        (share, "0", "expected a finite number in (0, 1], got '0'"),
        (share, "1e400", "expected a finite number in (0, 1]"),
    ):
        with pytest.raises(argparse.ArgumentTypeError, match=message.replace("(", r"\(").replace("]", r"\]")):
            parse(text)
    assert seed.__name__ == "int" and weight.__name__ == "float"  # argparse and the CLI walk name the type
    with pytest.raises(argparse.ArgumentTypeError, match="finite number of seconds"):
        positive_seconds("inf")
    assert byte_size("512K") == 512 * 1024 and byte_size("2M") == 2 * 2**20 and byte_size("100") == 100
    for bad in ("0", "-3", "nan", "inf", "many"):
        with pytest.raises(argparse.ArgumentTypeError):
            byte_size(bad)


def test_the_llm_layer_reuses_the_kernel_helpers():
    import trace_llm.cli as llm_cli
    import trace_llm.options as llm_options

    # the decoding flags' types, and the backend flags' (declared in trace_llm.options)
    assert llm_cli.number_in is number_in
    assert llm_options.number_in is number_in and llm_options.positive_seconds is positive_seconds


@pytest.mark.parametrize(
    "argv",
    [
        ("yelp", "synth", "--out", "OUT", "--seed", "-1"),
        ("yelp", "synth", "--out", "OUT", "--scale", "nan"),
        ("kb", "build", "--yelp", "IN", "--out", "OUT", "--seed", "-1"),
        ("corpus", "generate", "--kb", "IN", "--out", "OUT", "--seed", "-1"),
        ("run", "popularity", "--data", "IN", "--out", "OUT", "--subset-seed", "-1"),
        ("run", "itinerary", "--data", "IN", "--out", "OUT", "--param", "radius_m=NaN"),
        ("run", "itinerary", "--data", "IN", "--out", "OUT", "--param", "radius_m=Infinity"),
        ("run", "itinerary", "--data", "IN", "--out", "OUT", "--param", "radius_m=1e999"),
        ("run", "itinerary", "--data", "IN", "--out", "OUT", "--param", "radius_m=nan"),
        ("evaluate", "--data", "IN", "--predictions", "P", "--out", "OUT", "--radius-km", "inf"),
        ("evaluate", "--data", "IN", "--predictions", "P", "--out", "OUT", "--seed", "-1"),
        ("leaderboard", "--data", "IN", "--runs", "R", "--seed", "-1"),
        ("interact", "--system", "popularity", "--data", "IN", "--out", "OUT", "--timeout", "inf"),
        ("sniprec", "build", "--kb", "IN", "--json-repairs", "-1"),
        ("submit", "P", "--name", "x", "--max-upload-mb", "0"),
        ("demo", "--seed", "-1"),
        ("llm", "chat", "--max-repairs", "-1", "hi"),
    ],
)
def test_bad_numbers_stop_at_parsing_naming_the_option(capsys, tmp_path, argv):
    argv = [str(tmp_path / a) if a in ("OUT", "IN", "P", "R") else a for a in argv]
    rc, text = run_cli(capsys, *argv)
    assert rc == 2 and any(f"argument {a}: expected" in text for a in argv if a.startswith("--")), text
    assert not (tmp_path / "OUT").exists()


def test_usage_errors_are_one_line_through_the_root(world, tmp_path, capsys):
    rc, text = run_cli(
        capsys, "run", "tfidf", "--data", world.corpus, "--out", tmp_path / "p.jsonl", "--prefilter", "dense"
    )
    assert rc == 2 and text == "trace-bench: error: --prefilter applies to " + text.split("applies to ", 1)[1]
    assert text.count("\n") == 1


def test_sqlite_cache_names_the_file_and_the_way_out(tmp_path):
    bad = tmp_path / "cache.sqlite"
    bad.write_bytes(b"this is not a database, " * 100)
    with pytest.raises(
        CacheError,
        match=r"vectors .*cache.sqlite: cannot be used \(file is not a database\); "
        r"delete it or pass another one",
    ):
        with sqlite_cache(bad, "vectors", "pass another one"):
            sqlite3.connect(bad).execute("SELECT 1 FROM sqlite_master")


@pytest.mark.parametrize("kind", ["not a database", "truncated"])
def test_corrupt_dense_sniprec_and_nli_caches_are_cache_errors(tmp_path, kind):
    from baselines.toolkit.dense import QueryCache
    from trace_metrics.lib.entailment import NLICache

    good = QueryCache(tmp_path / "good.sqlite", "m")
    good.put_many([(f"text {i}", np.ones(8)) for i in range(2000)])
    good.close()
    data = (tmp_path / "good.sqlite").read_bytes()
    for name, opener in (
        ("queries.sqlite", lambda p: QueryCache(p, "m").get_many(["text 1"])),
        ("vectors.sqlite", lambda p: QueryCache(p, "m").get_many(["text 1"])),
        ("nli.sqlite", lambda p: NLICache(p).get_many(["k"])),
    ):
        path = tmp_path / kind.replace(" ", "_") / name
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"\x00garbage" * 4096 if kind == "not a database" else data[:8192] + b"\xff" * 8192)
        with pytest.raises(CacheError, match=f"{name}: cannot be used .*delete it or set TRACE_BENCH_CACHE"):
            opener(path)


def test_usage_error_is_a_value_error_for_older_callers():
    assert issubclass(UsageError, ValueError)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ("run", "dense", "--param", "model=/nonexistent/model"),
            "cannot load the sentence-transformers model",
        ),
        (
            ("run", "dense", "--param", "model="),
            "model '': expected a sentence-transformers model id or folder",
        ),
        (
            ("run", "sniprec", "--param", "encoder=/nonexistent/encoder"),
            "cannot load the sentence-transformers model",
        ),
        (("evaluate", "--nli", "/nonexistent/nli"), "NLI model folder '/nonexistent/nli' does not exist"),
    ],
)
def test_path_like_model_options_are_one_line_errors(world, tmp_path, capsys, argv, message):
    """DenseUnavailable and NLIModelError reach the user as one line, not a traceback."""
    out = tmp_path / "out.json"
    where = ["--data", world.corpus, "--out", out] + (
        ["--predictions", world.predictions] if argv[0] == "evaluate" else []
    )
    rc, text = run_cli(capsys, *argv, *where)
    assert rc == 2 and text.startswith("trace-bench: error: ") and message in text and text.count("\n") == 1


def test_evaluate_passes_the_llm_options_to_the_judge_and_to_core(world, tmp_path, capsys, monkeypatch):
    """`evaluate --core SPEC` took no --llm-* options: a hanging judge server cost ~25 min per request."""
    import trace_llm
    import trace_metrics.core.runner as core_runner

    seen = {}

    def judge(spec, **kwargs):
        seen["judge"] = (spec, kwargs)
        raise UsageError("judge captured")

    def core(*args, **kwargs):
        seen["core"] = (args[3], kwargs)
        raise UsageError("core captured")

    monkeypatch.setattr(trace_llm, "load_llm", judge)
    monkeypatch.setattr(core_runner, "run_for_evaluate", core)
    options = [
        "--llm-timeout",
        "2",
        "--llm-concurrency",
        "3",
        "--no-llm-cache",
        "--llm-max-response-bytes",
        "64K",
    ]
    base = [
        "evaluate",
        "--data",
        world.corpus,
        "--predictions",
        world.predictions,
        "--out",
        tmp_path / "r.json",
    ]
    rc, text = run_cli(capsys, *base, "--judge", "openai:http://127.0.0.1:9/v1#judge", *options)
    assert rc == 2 and "judge captured" in text
    spec, kwargs = seen["judge"]
    assert spec.endswith("#judge") and kwargs["timeout"] == 2.0 and kwargs["concurrency"] == 3
    assert kwargs["cache_path"] is False and kwargs["max_response_bytes"] == 64 * 1024
    rc, text = run_cli(capsys, *base, "--core", "openai:http://127.0.0.1:9/v1#core", *options)
    assert rc == 2 and "core captured" in text
    spec, kwargs = seen["core"]
    assert spec.endswith("#core") and kwargs["timeout"] == 2.0 and kwargs["cache_path"] is False
