"""`trace-bench demo` (the main job) end to end on a small size, its resume and refusals, its options, and the
packaged configs its runs come from."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from trace_bench.cli import main
from trace_bench.errors import UsageError
from trace_bench.shell import trace_bench_command
from trace_harness.main_job.job import baseline_names, main_config, serve_arguments
from trace_harness.main_job.layout import CORE_DIR, LLM_SUBSET_DIR, demo_layout
from trace_harness.main_job.llm_step import llm_config
from trace_harness.main_job.options import DemoConfig

REPO = Path(__file__).resolve().parents[3]


def test_help_loads_nothing_heavy():
    out = subprocess.run(
        [sys.executable, "-m", "trace_bench.cli", "demo", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout
    assert "--per-cell" in out and "10,000" in out and "default runs/demo" in out
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, trace_harness.main_job.cli; print(' '.join(sys.modules))"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout.split()
    assert "gradio" not in loaded and not any(m.startswith("spaces_app") for m in loaded)


def test_demo_defaults_are_the_full_main_job():
    from trace_harness.main_job.cli import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["demo"])
    assert (args.n, args.scale, args.per_cell, args.baselines, args.split, args.out, args.no_interactive) == (
        10_000,
        1.0,
        None,
        "all",
        "test",
        Path("runs/demo"),
        False,
    )


def test_baselines_option():
    from baselines import NON_LLM_BASELINES

    assert baseline_names("all") == (list(NON_LLM_BASELINES), False)
    assert baseline_names("tfidf, llm") == (["tfidf"], True)
    with pytest.raises(UsageError, match="unknown baselines \\['tfidff'\\]"):
        baseline_names("tfidff")


def test_the_main_config_is_the_packaged_demo_with_the_jobs_folders_and_options(tmp_path):
    config = DemoConfig(out=tmp_path / "d", split="validation", interactive_n=20, workers=3, num_proc=2)
    c = main_config(config, ["popularity", "tfidf"])
    assert (c.data, c.out) == (tmp_path / "d" / "hydrated", tmp_path / "d")
    assert c.systems == c.interactive.systems == ("popularity", "tfidf")
    assert (c.closed.split, c.closed.subset, c.open.split, c.open.subset) == (
        "validation",
        None,
        "validation",
        None,
    )
    assert (c.interactive.n, c.interactive.workers, c.interactive.simulator, c.num_proc) == (
        20,
        3,
        "rules",
        2,
    )
    assert c.parts == ("table5", "table6", "table9", "interactive")
    layout = demo_layout(config.out)
    assert c.out / c.closed.runs == layout["runs_dir"]  # the Space's dialogue browser reads the closed runs
    assert "interactive" not in main_config(DemoConfig(out=tmp_path, interactive=False), ["tfidf"]).parts


def test_the_llm_step_config_puts_the_named_baselines_first(tmp_path):
    c = llm_config(DemoConfig(out=tmp_path), ["popularity"])
    assert c.systems == (
        "popularity",
        "llm_zero_shot",
        "dst",
        "rag_citation",
        "multi_review_synthesis",
        "itinerary_llm",
        "memory_aug",
    )
    assert c.core.systems == ("llm_zero_shot",)  # tfidf's CoRE run needs tfidf's run, which is not asked for
    assert c.data == tmp_path / LLM_SUBSET_DIR and c.out / c.closed.runs == tmp_path / "llm_runs"
    assert c.core.out.split("/")[0] == CORE_DIR  # where the Space's CoRE tab looks (demo_layout)
    assert llm_config(DemoConfig(out=tmp_path), ["tfidf"]).core.systems == ("tfidf", "llm_zero_shot")


def test_the_serve_arguments_are_the_layout(tmp_path):
    args = serve_arguments(DemoConfig(out=tmp_path))
    layout = demo_layout(tmp_path)
    assert args[0] == "serve" and args[args.index("--data") + 1] == layout["data_dir"]
    assert args[args.index("--core") + 1] == layout["core_dir"] and "--split" not in args
    assert serve_arguments(DemoConfig(out=tmp_path, split="validation"))[-2:] == ["--split", "validation"]


@pytest.mark.slow
def test_demo_end_to_end_small_and_resumable(tmp_path, capsys):
    out = tmp_path / "demo"
    args = [
        "demo",
        "--out",
        str(out),
        "--n",
        "120",
        "--scale",
        "0.25",
        "--per-cell",
        "12",
        "--baselines",
        "popularity,tfidf",
        "--workers",
        "1",
    ]
    assert main(args) == 0
    printed = capsys.readouterr().out
    for text in (
        "Table 5: headline — pool: closed",
        "Table 6: stress tests — pool: open",
        "Popularity",
        "TF-IDF",
        "Interactive: a simulated traveler talks to each system",
        f"Leaderboard app: {trace_bench_command('serve', '--data', out / 'hydrated')} ",
        f"--interactive {trace_bench_command('x', out / 'interactive').split(' x ', 1)[1]}",
    ):
        assert text in printed
    for path in (
        "hydrated/hydration.json",
        "release/release.json",
        "runs/closed/tfidf.jsonl",
        "runs/open/popularity.jsonl.meta.json",
        "leaderboard/leaderboard.json",
        "leaderboard/table5_closed.csv",
        "interactive/popularity/metrics.json",
        "interactive/tfidf/metrics.json",
        "leaderboard/leaderboard.interactive.json",
        "leaderboard/interactive_trace.csv",
    ):
        assert (out / path).exists(), path
    assert not (out / "manifest.json").exists() and not (out / "plan.json").exists()  # the job's files only
    rows = json.loads((out / "leaderboard/leaderboard.json").read_text())["rows"]
    assert sorted((r["baseline"], r["pool"]) for r in rows) == [
        ("popularity", "closed"),
        ("popularity", "open"),
        ("tfidf", "closed"),
        ("tfidf", "open"),
    ]
    assert json.loads((out / "demo.json").read_text()) == {
        "n": 120,
        "scale": 0.25,
        "per_cell": 12,
        "seed": 42,
        "split": "test",
    }
    before = {
        p: p.stat().st_mtime_ns
        for p in out.rglob("*")
        if p.is_file() and "leaderboard" not in p.parts and p.name != "demo.json"
    }
    assert main(args) == 0  # resumes: every stage already done, nothing before the leaderboard written again
    assert {p: p.stat().st_mtime_ns for p in before} == before
    assert json.loads((out / "leaderboard/leaderboard.json").read_text())["rows"] == rows
    capsys.readouterr()
    assert main([*args[:3], "--n", "100", *args[5:]]) != 0  # other settings in the same folder: refused
    assert "other settings (n: 120 there, 100 now)" in capsys.readouterr().err
    # the app finds the demo's output by itself
    from spaces_app.settings import Settings

    settings = Settings.from_env({}, demo_dir=out)
    assert (
        settings.data_dir == out / "hydrated"
        and settings.baselines_file.exists()
        and settings.runs_dir.is_dir()
    )
    assert settings.interactive_dirs[0] == out / "interactive" and settings.core_dirs[0] == out / "core"


def test_serve_starts_the_apps_command_through_the_registry(tmp_path, monkeypatch, capsys):
    """--serve runs the root command's `serve` in this process with the arguments the job prints (the harness
    never imports the Space: tests/test_layers.py)."""
    import trace_bench.cli
    from trace_harness.main_job import job

    called: list[list[str]] = []
    monkeypatch.setattr(job, "data_stages", lambda out, **kw: [])
    monkeypatch.setattr(job, "run_main", lambda config: ("tables", {}))
    monkeypatch.setattr(trace_bench.cli, "run_command", lambda argv: called.append(list(argv)) or 0)
    assert job.run_demo(DemoConfig(out=tmp_path / "d", serve=True, port=7999)) == 0
    printed = capsys.readouterr().out
    [argv] = called
    assert argv == [
        *map(str, serve_arguments(DemoConfig(out=tmp_path / "d"))),
        "--host",
        "127.0.0.1",
        "--port",
        "7999",
    ]
    assert f"later: {trace_bench_command(*serve_arguments(DemoConfig(out=tmp_path / 'd')))})" in printed
