"""`trace-bench leaderboard` for the Hub and other harnesses: a model repository's `.eval_results/` entries
(the Hub's documented format), every row in Every Eval Ever's schema (checked by every-eval-ever's own
validator), and such records read back as comparison rows."""

from __future__ import annotations

import json
import shutil
import sys

import jsonschema
import pytest
import yaml

from tests.support.cli import run_cli
from trace_bench.errors import UsageError
from trace_harness.leaderboard.build import read_leaderboard
from trace_harness.leaderboard.export import (
    EEE_SCHEMA_VERSION,
    export_every_eval_ever,
    read_rows,
    record_of,
)
from trace_harness.leaderboard.hub_results import (
    check_eval_results,
    eval_results,
    eval_results_schema,
    write_eval_results,
)


@pytest.fixture(scope="module")
def board_rows(space_world):
    return read_leaderboard(space_world["baselines"])  # Popularity and TF-IDF closed, TF-IDF open


def eee_validate(files) -> int:
    """every-eval-ever's validator on the files, with the repository checks (path layout, semantics)."""
    from every_eval_ever.validator.validate import main

    return main([str(f) for f in files])


def test_eval_results_entries_carry_the_values_and_their_intervals(board_rows, tmp_path):
    path = write_eval_results(board_rows, "TF-IDF", tmp_path / "model-repo")
    assert path == tmp_path / "model-repo" / ".eval_results" / "trace.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert check_eval_results(doc) == []
    jsonschema.Draft7Validator.check_schema(eval_results_schema())
    jsonschema.validate(doc, eval_results_schema())
    closed = next(r for r in board_rows if r["system"] == "TF-IDF" and r["pool"] == "closed")
    opened = next(r for r in board_rows if r["system"] == "TF-IDF" and r["pool"] == "open")
    by_task = {e["dataset"]["task_id"]: e for e in doc}
    assert {e["dataset"]["id"] for e in doc} == {"taoist/TRACE"}
    assert by_task["recall@1"]["value"] == closed["metrics"]["recall@1"]
    assert by_task["open:recall@1"]["value"] == opened["metrics"]["recall@1"]
    low, high = closed["ci"]["mrr"]
    assert (
        f"95% CI [{low:.4f}, {high:.4f}]" in by_task["mrr"]["notes"]
        and "closed pool" in by_task["mrr"]["notes"]
    )
    assert write_eval_results(board_rows, "TF-IDF", tmp_path / "again").read_bytes() == path.read_bytes()


def test_eval_results_refuse_an_unknown_label_and_what_is_not_in_the_format(board_rows):
    with pytest.raises(UsageError, match="no leaderboard row has this label"):
        eval_results(board_rows, "Nobody")
    good = eval_results(board_rows, "Popularity")
    assert check_eval_results(good) == [] and "open:recall@1" not in {e["dataset"]["task_id"] for e in good}
    for bad in (
        [{"dataset": {"id": "taoist/TRACE"}, "value": 1.0}],  # no task_id
        [{"dataset": {"id": "TRACE", "task_id": "mrr"}, "value": 1.0}],  # not an owner/name id
        [{"dataset": {"id": "a/b", "task_id": "mrr"}, "value": "high"}],
        [{"dataset": {"id": "a/b", "task_id": "mrr"}, "value": 1.0, "source": {"name": "logs"}}],  # no url
        [{"dataset": {"id": "a/b", "task_id": "mrr"}, "value": 1.0, "date": "yesterday"}],
    ):
        assert check_eval_results(bad), bad


@pytest.mark.skipif(sys.version_info < (3, 11), reason="every-eval-ever runs on Python 3.11+ (setup.sh)")
def test_every_row_in_every_eval_evers_schema(board_rows, tmp_path, monkeypatch):
    from every_eval_ever.schema import get_schema_version

    assert EEE_SCHEMA_VERSION == get_schema_version()
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    files = export_every_eval_ever(board_rows, tmp_path / "eee")
    assert len(files) == len(board_rows) == 3
    monkeypatch.chdir(tmp_path / "eee")  # the validator reads datastore paths from the checkout it runs in
    assert eee_validate([f.relative_to(tmp_path / "eee") for f in files]) == 0  # valid, and no warning
    again = export_every_eval_ever(board_rows, tmp_path / "again")
    assert [f.read_bytes() for f in again] == [f.read_bytes() for f in files]  # the same rows, the same bytes
    closed = next(r for r in board_rows if r["system"] == "TF-IDF" and r["pool"] == "closed")
    record = json.loads(next(f for f in files if "tfidf" in str(f)).read_text())
    assert record["model_info"]["id"] == "trace-bench/tfidf"
    results = {r["metric_config"]["metric_id"]: r for r in record["evaluation_results"]}
    for key, value in closed["metrics"].items():
        got = results[f"trace.{key}"]["score_details"]
        assert got["score"] == value
        if key in closed["ci"]:
            interval = got["uncertainty"]["confidence_interval"]
            assert [interval["lower"], interval["upper"]] == closed["ci"][key]
            assert got["uncertainty"]["num_bootstrap_samples"] == closed["ci_method"]["n_boot"]
    assert results["trace.t2r"]["metric_config"]["lower_is_better"] is True


def test_the_papers_rows_only_when_asked_and_records_come_back_as_rows(board_rows, tmp_path):
    paper = {
        "system": "TF-IDF (paper)",
        "baseline": "tfidf",
        "family": "non-LLM",
        "source": "paper",
        "pool": "closed",
        "split": "all",
        "metrics": {"recall@1": 0.257, "mrr": 0.289},
    }
    rows = [*board_rows, paper]
    assert len(export_every_eval_ever(rows, tmp_path / "a", retrieved="0")) == 3
    files = export_every_eval_ever(rows, tmp_path / "b", retrieved="0", paper_rows=True)
    assert len(files) == 4
    record = json.loads(next(f for f in files if "trace-paper" in str(f)).read_text())
    assert record["source_metadata"]["source_type"] == "documentation"
    back = read_rows([tmp_path / "b"])
    assert sorted((r["system"], r["pool"]) for r in back) == sorted((r["system"], r["pool"]) for r in rows)
    for row in board_rows:
        [got] = [b for b in back if (b["system"], b["pool"]) == (row["system"], row["pool"])]
        assert got["source"] == "every-eval-ever" and got["metrics"] == row["metrics"]
        assert got["ci"] == row["ci"]
    assert (
        export_every_eval_ever(back, tmp_path / "c", retrieved="0", paper_rows=True) == []
    )  # never re-exported
    assert record_of(paper, None, "0")["model_info"]["id"].startswith("trace-paper/")


def test_the_leaderboard_command_writes_them_and_shows_imported_rows(space_world, tmp_path, capsys):
    runs = tmp_path / "runs"
    shutil.copytree(space_world["runs"], runs / "closed")
    common = ("leaderboard", "--data", space_world["data"], "--runs", runs, "--n-boot", "200")
    rc, text = run_cli(
        capsys,
        *common,
        "--out",
        tmp_path / "board",
        "--export",
        "every-eval-ever",
        tmp_path / "eee",
        "--eval-results",
        tmp_path / "repo",
        "--system",
        "TF-IDF",
    )
    assert rc == 0, text
    assert "wrote 2 every-eval-ever records" in text and ".eval_results/trace.yaml" in text
    assert check_eval_results(yaml.safe_load((tmp_path / "repo/.eval_results/trace.yaml").read_text())) == []
    rc, text = run_cli(capsys, *common, "--out", tmp_path / "board2", "--rows", tmp_path / "eee" / "data")
    assert rc == 0, text
    shown = read_leaderboard(tmp_path / "board2" / "leaderboard.json")
    assert sorted(r["source"] for r in shown) == [
        "baseline",
        "baseline",
        "every-eval-ever",
        "every-eval-ever",
    ]
    assert text.count("TF-IDF") >= 2
    for argv, message in (
        (("--eval-results", tmp_path / "r"), "go together"),
        (("--export", "csv", tmp_path / "x"), "expected one of every-eval-ever"),
        (("--paper-rows",), "--export FORMAT DIR"),
    ):
        rc, text = run_cli(capsys, *common, *argv)
        assert rc == 2 and message in text, text
