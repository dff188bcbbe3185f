"""`interactive.workers`: the interactive runs that need no model go side by side in forked processes, with the
same files as one after another; `interactive.n: null` seeds every dialogue of the split."""

from __future__ import annotations

import yaml

from trace_harness.engine.forks import can_fork
from trace_harness.engine.stage import run_stages
from trace_harness.reproduce import execute
from trace_harness.reproduce.config import load_config
from trace_harness.reproduce.jobs import Context, build_jobs


def _run(tmp_path, data, name: str, workers) -> dict[str, bytes]:
    out = tmp_path / name
    path = tmp_path / f"{name}.yaml"
    body = {
        "data": str(data),
        "out": str(out),
        "parts": ["interactive"],
        "interactive": {"systems": ["popularity", "tfidf"], "n": 3, "turns": 3, "workers": workers},
    }
    path.write_text(yaml.safe_dump(body), encoding="utf-8")
    config = load_config(path)
    ctx = Context(config)
    try:
        stages = execute.job_stages(ctx, build_jobs(config), ctx.llm)
        assert [s.name for s in stages] == (
            ["interactive: interactive popularity", "interactive: interactive tfidf"]
            if workers == 1
            else ["interactive runs"]
        )
        assert run_stages(stages) == {}
    finally:
        ctx.close()
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.name != "predictions.jsonl.meta.json"  # names the output folder
    }


def test_side_by_side_runs_write_the_same_files_as_one_after_another(small_corpus, tmp_path):
    one = _run(tmp_path, small_corpus, "one", 1)
    both = _run(tmp_path, small_corpus, "both", 2 if can_fork() else 1)
    assert one == both
    assert (
        "interactive/tfidf/metrics.json" in one and "interactive/popularity/data/interactive.jsonl.gz" in one
    )
