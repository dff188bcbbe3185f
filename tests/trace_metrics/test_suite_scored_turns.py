"""One scored system turn per dialogue (`scored_turns="last"`, a blind set's gold): only each dialogue's last
system turn counts, the dialogue-level metrics have no value (with the reason in the config), a rejection
episode counts when the scored turn follows it up, and a gold folder's period.json switches it on by itself."""

from __future__ import annotations

import json

import pytest

from trace_dataset.datadir import split_file
from trace_dataset.io import write_jsonl
from trace_dataset.release.blind_turns import LAST_SYSTEM_TURN, SCORED_TURNS_FIELD, truncate
from trace_metrics.lib import suite
from trace_metrics.lib.conventions import WITHOUT_VALUE_ONE_TURN
from trace_metrics.lib.toy import reference_predictions, toy_dialogues, write_toy_data_dir
from trace_metrics.specs import MetricOptionError

# where each toy test dialogue is cut: its scored turn (toy_00001 and toy_00002: a recommend turn right after
# a reject_and_refine turn; toy_00003: its second recommend turn)
CUTS = {"toy_00001": 5, "toy_00002": 3, "toy_00003": 3}
DIALOGUE_METRICS = (
    "spatial_coherence@2km",
    "route_efficiency_km",
    "price_alignment",
    "itinerary_diversity",
    "tsr",
    "t2r",
)


def _cut_dialogues():
    return [truncate(d, CUTS[d["dialogue_id"]]) for d in toy_dialogues() if d["split"] == "test"]


@pytest.fixture
def cut_dir(tmp_path):
    """The toy data directory with its test dialogues cut at their scored turns (no period.json)."""
    root = write_toy_data_dir(tmp_path / "cut")
    write_jsonl(split_file(root, "test"), _cut_dialogues())
    return root


@pytest.fixture
def gold_dir(cut_dir):
    """`cut_dir` as a blind set's gold folder: its period.json says one scored turn per dialogue."""
    (cut_dir / "period.json").write_text(json.dumps({"period": "p", SCORED_TURNS_FIELD: LAST_SYSTEM_TURN}))
    return cut_dir


@pytest.fixture
def wrong_then_right(tmp_path):
    """The reference system on the cut dialogues, wrong (gold ranked last) on every system turn but the last."""
    rows = reference_predictions(_cut_dialogues())
    for r in rows:
        if r["turn_id"] != CUTS[r["dialogue_id"]] and r["ranked_poi_ids"]:
            r["ranked_poi_ids"] = [*r["ranked_poi_ids"][1:], r["ranked_poi_ids"][0]]
            r["response"] = "Something else."
    path = tmp_path / "preds.jsonl"
    write_jsonl(path, rows)
    return path


def test_only_the_last_system_turn_counts(gold_dir, wrong_then_right):
    r = suite.evaluate_run(gold_dir, wrong_then_right, split="test", pool="closed")
    v, n = r["values"], r["n"]
    assert v["recall@1"] == 1.0 and v["mrr"] == 1.0 and n["recall@1"] == 3  # the three scored recommend turns
    assert v["bleu4"] == pytest.approx(1.0) and n["bleu4"] == 3  # the reference text on the scored turns
    assert r["counts"]["system_turns"] == 3 and r["counts"]["unscored_system_turns"] == 4
    assert r["per_item"]["recommendation_turns"]["turn_id"] == [5, 3, 3]
    # both rejection episodes are followed up by their dialogue's scored turn, which hits
    assert v["rejection_recovery"] == 1.0 and n["rejection_recovery"] == 2
    assert r["per_item"]["rejection_episodes"]["turn_id"] == [4, 2]
    for metric in DIALOGUE_METRICS:
        assert v[metric] is None and n[metric] == 0, metric
    assert r["config"]["scored_turns"] == "last"
    assert r["config"]["without_value"] == dict.fromkeys(DIALOGUE_METRICS, WITHOUT_VALUE_ONE_TURN)
    dialogues = r["per_item"]["dialogues"]  # every dialogue listed (the intervals resample them), no value
    assert dialogues["dialogue_id"] == list(CUTS) and dialogues["tsr"] == [None] * 3


def test_the_same_file_scored_on_every_turn_misses_the_earlier_ones(cut_dir, wrong_then_right):
    r = suite.evaluate_run(cut_dir, wrong_then_right, split="test", pool="closed")  # no period.json: "all"
    assert r["config"]["scored_turns"] == "all" and "without_value" not in r["config"]
    assert r["values"]["recall@1"] == pytest.approx(3 / 6) and r["n"]["recall@1"] == 6
    assert r["values"]["tsr"] == 1.0 and "unscored_system_turns" not in r["counts"]  # every turn is scored
    last = suite.evaluate_run(cut_dir, wrong_then_right, split="test", pool="closed", scored_turns="last")
    assert last["values"]["recall@1"] == 1.0 and last["values"]["tsr"] is None


def test_an_episode_counts_only_when_the_scored_turn_follows_it_up(tmp_path):
    """toy_00001 cut at its farewell (turn 7): its rejection (turn 4) is followed up by turn 5, unscored."""
    root = write_toy_data_dir(tmp_path / "farewell")
    dialogues = [truncate(d, 7) for d in toy_dialogues() if d["dialogue_id"] == "toy_00001"]
    write_jsonl(split_file(root, "test"), dialogues)
    path = tmp_path / "preds.jsonl"
    write_jsonl(path, reference_predictions(dialogues))
    r = suite.evaluate_run(root, path, scored_turns="last")
    assert r["values"]["rejection_recovery"] is None and r["n"]["rejection_recovery"] == 0
    assert r["counts"]["rejection_episodes"] == 0 and r["values"]["recall@1"] is None
    assert r["counts"]["system_turns"] == 1 and r["n"]["bleu4"] == 1


def test_all_on_a_gold_folder_is_refused_and_every_turn_is_still_validated(
    gold_dir, wrong_then_right, tmp_path
):
    with pytest.raises(MetricOptionError, match=r"scored_turns='all' on a blind set's gold.*period\.json"):
        suite.evaluate_run(gold_dir, wrong_then_right, scored_turns="all")
    rows = [json.loads(line) for line in wrong_then_right.read_text().splitlines()]
    partial = tmp_path / "last_only.jsonl"
    write_jsonl(partial, [r for r in rows if r["turn_id"] == CUTS[r["dialogue_id"]]])
    with pytest.raises(Exception, match="missing"):
        suite.evaluate_run(gold_dir, partial)


def test_a_period_json_with_another_value_is_refused(gold_dir, wrong_then_right):
    from trace_dataset.io import TraceDataError

    (gold_dir / "period.json").write_text(json.dumps({SCORED_TURNS_FIELD: "every_other_turn"}))
    with pytest.raises(TraceDataError, match="scored_turns: 'every_other_turn'"):
        suite.evaluate_run(gold_dir, wrong_then_right)
