"""`trace-bench leaderboard verify ROW`: a submission carrying the manifest of its `trace-bench reproduce` run is
re-run and marked reproduced; a tampered manifest, or scores outside the row's intervals, not reproduced, with
the field or metric named."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from spaces_app.owners import Owner
from spaces_app.settings import Settings
from spaces_app.store import LocalStore, result_path
from spaces_app.submissions import SubmissionError, submit
from tests.support.reproduce import write_config
from trace_bench.cli import main
from trace_dataset.io import read_json
from trace_harness.leaderboard.reproduction import ManifestError, check_manifest, verify

DEAD = "http://127.0.0.1:9/v1"


@pytest.fixture(scope="module")
def reproduced(space_world, tmp_path_factory):
    """A `trace-bench reproduce` run of Popularity on the Space's test split: (manifest path, predictions)."""
    root = tmp_path_factory.mktemp("verify")
    config = write_config(
        root / "run" / "c.yaml", space_world["data"], DEAD, systems=["popularity"], closed={"split": "test"}
    )
    assert main(["reproduce", str(config), "--no-progress", "--no-plan", "--no-preflight"]) == 0
    out = root / "run" / "out"
    [predictions] = [p for p in out.rglob("*.jsonl") if "closed" in str(p) and "popularity" in p.name]
    return out / "manifest.json", predictions


@pytest.fixture()
def stored(reproduced, space_world, tmp_path):
    """The run submitted to a Space with its manifest: (row file, row)."""
    manifest, predictions = reproduced
    settings = Settings(data_dir=space_world["data"], results_dir=tmp_path / "results", split="test")
    store = LocalStore(settings.results_dir)
    row = submit(
        store, settings, predictions, name="Pop", owner=Owner("hf", user="alice"), manifest_path=manifest
    )
    return store.root / result_path(row), row


def test_the_manifest_is_kept_and_summarised_on_the_row(stored, reproduced):
    _, row = stored
    assert row["manifest"] == read_json(reproduced[0])
    summary = check_manifest(row["manifest"])
    assert (
        summary["system"] == "popularity" and summary["config_sha256"] == row["manifest"]["config"]["sha256"]
    )
    from spaces_app.board_html import manifest_html

    assert "manifest" in manifest_html(row) and "system popularity" in manifest_html(row)


def test_a_row_reproduces_through_the_command(stored, space_world, capsys):
    path, _ = stored
    assert main(["leaderboard", "verify", str(path), "--data", str(space_world["data"])]) == 0
    assert (
        ": reproduced (every score of the re-run lies inside the row's interval)" in capsys.readouterr().out
    )
    assert read_json(path)["reproduction"]["status"] == "reproduced"
    from spaces_app.app import AppContext

    ctx = AppContext(
        Settings(results_dir=path.parents[1], show_paper_rows=False), LocalStore(path.parents[1])
    )
    board = ctx.table("Table 5: headline", "closed", ["submitted"], False, "", None, "best first", False)
    assert 'data-reproduction="reproduced"' in board and 'data-submissions="1"' in board
    assert '<details class="trace-manifest">' in board


def test_a_tampered_manifest_does_not_reproduce(stored, space_world, capsys):
    path, row = stored
    tampered = copy.deepcopy(row)
    tampered["manifest"]["config"]["content"]["systems"] = ["tfidf"]  # claims another system's run
    path.write_text(json.dumps(tampered))
    assert main(["leaderboard", "verify", str(path), "--data", str(space_world["data"])]) == 1
    out = capsys.readouterr().out
    assert ": not reproduced (" in out and "outside the row's interval" in out
    assert read_json(path)["reproduction"]["status"] == "not reproduced"


def test_scores_outside_the_intervals_name_the_metric(stored, space_world, tmp_path):
    _, row = stored
    moved = {**row, "ci": {**row["ci"], "recall@1": [row["ci"]["recall@1"][1] + 0.1, 1.0]}}
    verdict = verify(moved, space_world["data"], tmp_path / "work")
    assert verdict["status"] == "not reproduced" and verdict["reason"].startswith(
        "recall@1: the re-run scores"
    )


def test_a_manifest_edited_after_its_run_differs_from_its_rerun(stored, space_world, tmp_path):
    """A model's decoding settings or a prompt hash edited in the manifest: its own re-run says otherwise."""
    _, row = stored
    rerun = copy.deepcopy(row["manifest"])
    rerun["models"] = {"systems": {"model": "m", "spec": "openai:x#m", "settings": {"temperature": 0.0}}}
    rerun["prompts"] = {"llm_zero_shot": {"file": "p.txt", "sha256": "a" * 64}}
    edited = copy.deepcopy(row)
    edited["manifest"]["models"] = {
        "systems": {**rerun["models"]["systems"], "settings": {"temperature": 0.7}}
    }
    edited["manifest"]["prompts"] = rerun["prompts"]

    def runner(config_path):
        config = yaml.safe_load(config_path.read_text())  # only the row's system and pool, on the given data
        assert config["systems"] == ["popularity"] and config["parts"] == ["table5"]
        assert config["data"] == str(space_world["data"]) and config["out"].startswith(str(tmp_path))
        return rerun, []

    verdict = verify(edited, space_world["data"], tmp_path / "w1", runner=runner)
    assert verdict == {
        "status": "not reproduced",
        "reason": "models.systems.settings: the manifest says {'temperature': 0.7}, the re-run "
        "{'temperature': 0.0}",
    }
    edited["manifest"]["models"] = rerun["models"]
    edited["manifest"]["prompts"] = {"llm_zero_shot": {"file": "p.txt", "sha256": "b" * 64}}
    verdict = verify(edited, space_world["data"], tmp_path / "w2", runner=runner)
    assert verdict["reason"].startswith("prompts.llm_zero_shot: the manifest says 'bbbb")


def test_a_manifest_that_is_not_one_is_refused_at_submission(reproduced, space_world, tmp_path):
    manifest, predictions = reproduced
    settings = Settings(data_dir=space_world["data"], results_dir=tmp_path / "results", split="test")
    bad = tmp_path / "manifest.json"
    for content, message in (
        ("not json", "not a JSON manifest"),
        ("[]", "a manifest is the JSON object"),
        (json.dumps({**read_json(manifest), "models": []}), "manifest field models is missing or not a dict"),
    ):
        bad.write_text(content)
        with pytest.raises(SubmissionError, match=message):
            submit(
                LocalStore(settings.results_dir),
                settings,
                predictions,
                name="Pop",
                owner=Owner("hf", user="a"),
                manifest_path=bad,
            )
    two = read_json(manifest)
    two["config"]["content"]["systems"] = ["popularity", "tfidf"]
    with pytest.raises(ManifestError, match="runs exactly one system"):
        check_manifest(two)
    assert LocalStore(settings.results_dir).rows() == []


def test_the_leaderboard_command_still_needs_its_folders(capsys):
    assert main(["leaderboard", "--runs", "runs"]) == 2
    assert "trace-bench leaderboard needs --data (or: leaderboard verify ROW)" in capsys.readouterr().err
