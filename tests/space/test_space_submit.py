"""Submissions: validated like `trace-bench evaluate`, scored, stored; refused without changing anything."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from spaces_app.leaderboard import collect_rows, leaderboard_frame, reserved_names
from spaces_app.store import LocalStore, slugify
from spaces_app.submissions import SubmissionError, submit
from trace_dataset.cli import main
from trace_dataset.datadir import iter_dialogues
from trace_metrics.lib.suite import evaluate_run


def _snapshot(store: LocalStore) -> dict[str, bytes]:
    return {str(p.relative_to(store.root)): p.read_bytes() for p in sorted(store.root.rglob("*"))
            if p.is_file() and p.name != ".lock"}


def test_valid_submission_is_scored_like_evaluate_and_appears(space_settings, valid_predictions):
    store = LocalStore(space_settings.results_dir)
    row = submit(store, space_settings, valid_predictions, name="My <b>System</b>", description="tf-idf again")
    assert (row["family"], row["source"], row["split"], row["pool"]) == ("submitted", "submission", "test", "closed")
    expected = evaluate_run(space_settings.data_dir, valid_predictions, split="test", pool="closed")["values"]
    assert row["metrics"] == {k: v for k, v in expected.items() if v is not None}
    assert row["corpus_version"] and row["kb_version"]
    assert [r["system"] for r in store.rows()] == ["My <b>System</b>"]
    request = space_settings.results_dir / "requests" / f"{slugify('My <b>System</b>')}__closed.jsonl"
    assert request.read_bytes() == valid_predictions.read_bytes()
    frame = leaderboard_frame(collect_rows(space_settings, store), "Table 5: headline", "closed", ["submitted"])
    assert list(frame["System"]) == ["My <b>System</b>"]  # the raw text: the table shows it as text, never HTML
    assert list(frame["Source"]) == ["submission"] and list(frame["Description"]) == ["tf-idf again"]


def test_resubmission_replaces_the_row_only_after_scoring(space_settings, valid_predictions, other_predictions,
                                                          invalid_predictions):
    store = LocalStore(space_settings.results_dir)
    first = submit(store, space_settings, valid_predictions, name="Keeper", description="v1")
    before = _snapshot(store)
    with pytest.raises(SubmissionError, match="missing"):
        submit(store, space_settings, invalid_predictions, name="Keeper", description="v2")
    assert _snapshot(store) == before  # a failed resubmission changes nothing
    second = submit(store, space_settings, other_predictions, name="keeper", description="v2")  # same slug
    rows = store.rows()
    assert len(rows) == 1 and rows[0]["description"] == "v2" and rows[0]["system"] == "keeper"
    assert rows[0]["metrics"] == second["metrics"] != first["metrics"]


def test_invalid_file_shows_the_validators_message_without_server_paths(space_settings, invalid_predictions):
    store = LocalStore(space_settings.results_dir)
    with pytest.raises(SubmissionError) as e:
        submit(store, space_settings, invalid_predictions, name="Broken")
    message = str(e.value)
    assert message.startswith("invalid.jsonl: predictions do not match the") and "3 missing" in message
    assert str(invalid_predictions.parent) not in message
    assert store.rows() == [] and _snapshot(store) == {}


@pytest.mark.parametrize(("content", "message"), [
    ('{"dialogue_id": "x"\n', "bad.jsonl:1: not valid JSON"),
    ("[1, 2]\n", "expected a JSON object"),
    ('{"dialogue_id": "crs_yelp_99999", "turn_id": 1, "ranked_poi_ids": [], "response": "", "citations": {}}\n',
     "unknown"),
])
def test_malformed_files(space_settings, tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SubmissionError, match=message):
        submit(LocalStore(space_settings.results_dir), space_settings, path, name="Bad")


def test_out_of_pool_pois_are_refused(space_settings, valid_predictions, space_world):
    """The same pool check as `trace-bench evaluate`: a closed-pool file ranks only the 8 candidates."""
    lines = [json.loads(x) for x in valid_predictions.read_text(encoding="utf-8").splitlines()]
    dialogue = next(iter_dialogues(space_world["data"], "test"))
    outside = next(p for p in dialogue["open_set_poi_ids"] if p not in dialogue["candidate_poi_ids"])
    row = next(r for r in lines if r["dialogue_id"] == dialogue["dialogue_id"])
    row["ranked_poi_ids"] = [outside, *row["ranked_poi_ids"]]
    valid_predictions.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    with pytest.raises(SubmissionError, match="pool"):
        submit(LocalStore(space_settings.results_dir), space_settings, valid_predictions, name="Leaky")
    open_row = submit(LocalStore(space_settings.results_dir), space_settings,
                      space_world["open_runs"] / "tfidf.jsonl", name="Open one", pool="open")
    assert open_row["pool"] == "open"


@pytest.mark.parametrize(("name", "message"), [("", "required"), ("x" * 65, "at most 64"), ("!!!", "no letters"),
                                               ("TF-IDF", "belongs to a baseline"),
                                               ("tf-idf (PAPER)", "belongs to a baseline")])
def test_bad_and_reserved_names(space_settings, valid_predictions, name, message):
    store = LocalStore(space_settings.results_dir)
    reserved = reserved_names(collect_rows(space_settings, store))
    with pytest.raises(SubmissionError, match=message):
        submit(store, space_settings, valid_predictions, name=name, reserved=reserved)


def test_other_refusals(space_settings, valid_predictions, tmp_path):
    store = LocalStore(space_settings.results_dir)
    with pytest.raises(SubmissionError, match="at most 500"):
        submit(store, space_settings, valid_predictions, name="A", description="d" * 501)
    with pytest.raises(SubmissionError, match="unknown pool 'pool_16'"):
        submit(store, space_settings, valid_predictions, name="A", pool="pool_16")
    with pytest.raises(SubmissionError, match="no predictions file"):
        submit(store, space_settings, tmp_path / "absent.jsonl", name="A")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    with pytest.raises(SubmissionError, match="empty"):
        submit(store, space_settings, tmp_path / "empty.jsonl", name="A")
    with pytest.raises(SubmissionError, match="no data directory"):
        submit(store, replace(space_settings, data_dir=None), valid_predictions, name="A")
    assert store.rows() == []


def test_upload_size_limit(space_settings, tmp_path):
    big = tmp_path / "big.jsonl"
    big.write_bytes(b" " * (5 * 2**20 + 1))
    with pytest.raises(SubmissionError, match="the limit is 5 MB"):
        submit(LocalStore(space_settings.results_dir), space_settings, big, name="Big")


def test_submit_command(space_settings, space_world, valid_predictions, invalid_predictions, capsys):
    results = space_settings.results_dir
    base = ["submit", "--data", str(space_world["data"]), "--results", str(results),
            "--baselines", str(space_world["baselines"])]
    assert main([*base, str(valid_predictions), "--name", "CLI bot", "--description", "from the shell"]) == 0
    out = capsys.readouterr().out
    assert "stored 'CLI bot' (closed pool, test split)" in out and "recall@1=" in out
    assert main([*base, str(invalid_predictions), "--name", "CLI bot"]) == 2
    assert "submission refused: invalid.jsonl: predictions do not match" in capsys.readouterr().out
    assert main([*base, str(valid_predictions), "--name", "Popularity"]) == 2  # a baseline's name
    assert "belongs to a baseline" in capsys.readouterr().out
    rows = LocalStore(results).rows()
    assert [(r["system"], r["description"]) for r in rows] == [("CLI bot", "from the shell")]
