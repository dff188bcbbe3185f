"""Blind test sets: the generator's stratification beside the public test split's, one scored system turn per
dialogue (the inputs end at it and show nothing of its reference), inputs without any gold value that hydrate
like any release, gold that scores as the offline path does (the last system turn only), the same bytes for a
given seed, and clear refusals."""

from __future__ import annotations

import gzip
import json

import pytest

from tests.support.blind import PrivateHub, write_public_corpus
from trace_dataset.constants import SPLITS
from trace_dataset.datadir import iter_dialogues, kb_dir, split_file
from trace_dataset.io import TraceDataError, write_jsonl
from trace_dataset.release import hydrate_release
from trace_dataset.release.blind import (
    GOLD_DIALOGUE_FIELDS,
    GOLD_TURN_FIELDS,
    SEED_WITHHELD,
    blind_inputs,
    compare_stats,
    make_blind,
    strip_gold,
)
from trace_dataset.release.blind_hub import push_gold
from trace_dataset.release.blind_turns import (
    LAST_SYSTEM_TURN,
    SCORED_TURN_CONTENT,
    SCORED_TURNS_FIELD,
    scored_turn,
)
from trace_dataset.views import iter_turn_rows

SEED = 918273645
CREATED = "2026-12-02"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("blind")
    bundle, public = write_public_corpus(root)
    out = root / "blind"
    record = make_blind(public, "2026-q1", out, seed=SEED, workers=1, created=CREATED, progress=False)
    return {"root": root, "bundle": bundle, "public": public, "out": out, "record": record}


def _tree(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_cells_tiers_and_action_shares_as_the_public_test_split(world):
    record = world["record"]
    blind, public = record["statistics"]["blind"], record["statistics"]["public_test"]
    assert record["dialogues"] == blind["dialogues"] == public["dialogues"] == 60
    assert sorted(blind["cells"]) == sorted(public["cells"]) and len(blind["cells"]) == 24
    assert max(blind["cells"].values()) - min(blind["cells"].values()) <= 1  # balanced, as the generator is
    comparison = record["comparison"]
    assert comparison["same_cells"] is True
    for key in ("tier_shares", "action_shares", "turns_mean", "scored_action_shares"):
        assert comparison[key]["within"] is True, (key, comparison[key])
    assert set(blind["action_shares"]) == set(public["action_shares"])
    assert blind["splits"] == {"test": 60}
    # the statistics are those of the whole generated dialogues (like for like with the public split's), not
    # of the dialogues cut at their scored turns
    gold = list(iter_dialogues(world["out"] / "gold", "test"))
    assert blind["turns_mean"] > sum(len(d["turns"]) for d in gold) / len(gold)
    assert abs(blind["turns_mean"] - public["turns_mean"]) <= comparison["turns_mean"]["bound"]
    scored = blind["scored_action_shares"]
    assert sum(scored.values()) == pytest.approx(1.0, abs=1e-3)
    last_actions = [d["turns"][-1]["action"] for d in gold]
    assert scored == {a: round(last_actions.count(a) / 60, 4) for a in scored}
    assert sum(public["scored_action_shares"].values()) == pytest.approx(1.0, abs=1e-3)
    assert record[SCORED_TURNS_FIELD] == LAST_SYSTEM_TURN
    inputs_record = json.loads((world["out"] / "inputs" / "period.json").read_text())
    assert inputs_record[SCORED_TURNS_FIELD] == LAST_SYSTEM_TURN


def test_comparison_flags_a_share_outside_its_bound(world):
    blind = dict(world["record"]["statistics"]["blind"])
    public = world["record"]["statistics"]["public_test"]
    shifted = dict(blind["action_shares"])
    first = next(iter(shifted))
    shifted[first] = public["action_shares"][first] + 0.5
    verdict = compare_stats({**blind, "action_shares": shifted}, public)
    assert verdict["action_shares"]["within"] is False and verdict["tier_shares"]["within"] is True
    verdict = compare_stats({**blind, "cells": {"Reno x hotel": 60}}, public)
    assert verdict["same_cells"] is False


def _gold_values(record, where, found):
    """Every non-empty gold field anywhere in a JSON value, walked field by field."""
    if isinstance(record, dict):
        for k, v in record.items():
            if k in GOLD_TURN_FIELDS + GOLD_DIALOGUE_FIELDS and v:
                found.append(f"{where}.{k}")
            _gold_values(v, f"{where}.{k}", found)
    elif isinstance(record, list):
        for i, v in enumerate(record):
            _gold_values(v, f"{where}[{i}]", found)


def test_inputs_hold_no_gold_value_and_no_seed(world):
    inputs, gold = world["out"] / "inputs", world["out"] / "gold"
    found: list[str] = []
    for path in sorted(p for p in inputs.rglob("*") if p.is_file()):
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")
        assert str(SEED) not in text, path
        if path.name.endswith(".jsonl.gz"):
            for i, line in enumerate(text.splitlines()):
                record = json.loads(line)
                _gold_values(record, f"{path.name}:{i + 1}", found)
                if "metadata" in record:
                    assert record["metadata"]["seed"] == SEED_WITHHELD
        elif path.suffix == ".json":
            _gold_values(json.loads(text), path.name, found)
    assert found == []
    assert "seed" not in json.loads((inputs / "period.json").read_text())
    assert json.loads((gold / "period.json").read_text())["seed"] == SEED
    assert not (inputs / "knowledge_base" / "reviews.jsonl.gz").exists()
    assert not (inputs / "corpus.json").exists() and not (inputs / "eval.yaml").exists()
    assert (
        "> **Blind test set, period 2026-q1: inputs only.** 60 test dialogues"
        in (inputs / "README.md").read_text()
    )
    gold_dialogues = list(iter_dialogues(gold, "test"))
    assert all(t["gold_poi_ids"] for d in gold_dialogues for t in d["turns"] if t["action"] == "recommend")


def test_each_dialogue_ends_at_its_scored_turn_and_shows_nothing_of_it(world, tmp_path):
    """The property: every inputs dialogue's last turn is a system turn (the scored one, turn s) whose text,
    referenced POI and review ids, citations and gold are empty and whose quotes left no span; turns 0..s-1
    are the gold's, without gold fields; turn s's reference text is in no inputs text and its referenced
    review ids nowhere in the inputs record. (Its gold POI is among the candidates, as every gold POI is, and
    may have been named by an earlier turn: the assertion on its ids is that they appear only there.)"""
    hydrate_release(world["out"] / "inputs", world["bundle"], tmp_path / "hyd")
    hydrated = list(iter_dialogues(tmp_path / "hyd", "test"))
    gold = list(iter_dialogues(world["out"] / "gold", "test"))
    generated_ids = [d["dialogue_id"] for d in gold]
    assert [d["dialogue_id"] for d in hydrated] == generated_ids and len(set(generated_ids)) == 60
    actions = set()
    for d_in, d_gold in zip(hydrated, gold, strict=True):
        last, reference = d_in["turns"][-1], d_gold["turns"][-1]
        actions.add(last["action"])
        assert last["role"] == "system" == reference["role"]
        assert (last["turn_id"], last["action"]) == (reference["turn_id"], reference["action"])
        assert all(not last[k] for k in SCORED_TURN_CONTENT + GOLD_TURN_FIELDS), last
        assert [t for t in d_in["turns"][:-1]] == strip_gold(d_gold)["turns"][:-1]
        assert d_in["quote_spans"] == d_gold["quote_spans"][: len(d_in["quote_spans"])]
        record = json.dumps(d_in)
        if reference["text"]:
            assert all(reference["text"] not in t["text"] for t in d_in["turns"])
        for rid in reference["referenced_review_ids"]:
            earlier = any(rid in t["referenced_review_ids"] for t in d_in["turns"])
            assert earlier or rid not in record, (d_in["dialogue_id"], rid)
        for pid in reference["gold_poi_ids"] + reference["referenced_poi_ids"]:
            allowed = sum(
                d_in[k].count(pid) for k in ("candidate_poi_ids", "pool_16_poi_ids", "pool_32_poi_ids")
            )
            for t in d_in["turns"][:-1]:
                allowed += t["referenced_poi_ids"].count(pid)
                allowed += sum(c["business_id"] == pid for c in t["citations"])
            assert record.count(json.dumps(pid)) == allowed, (d_in["dialogue_id"], pid)
    assert {"recommend", "ask_preference"} <= actions  # the scored turns are of several actions


def test_the_scored_turn_is_a_system_turn_drawn_from_the_seed_and_the_dialogue_id():
    turns = [{"role": "user" if i % 2 == 0 else "system"} for i in range(10)]
    picks = [scored_turn({"dialogue_id": f"d{i}", "turns": turns}, SEED) for i in range(2000)]
    assert set(picks) == {1, 3, 5, 7, 9}  # every system turn, no user turn
    assert all(abs(picks.count(i) / 2000 - 0.2) < 0.04 for i in set(picks))  # uniform
    again = [scored_turn({"dialogue_id": f"d{i}", "turns": turns}, SEED) for i in range(2000)]
    other = [scored_turn({"dialogue_id": f"d{i}", "turns": turns}, SEED + 1) for i in range(2000)]
    assert picks == again and picks != other
    with pytest.raises(TraceDataError, match="no system turn"):
        scored_turn({"dialogue_id": "x", "turns": turns[:1]}, SEED)


def test_inputs_hydrate_and_give_the_systems_what_the_gold_gives(world, tmp_path):
    report = hydrate_release(world["out"] / "inputs", world["bundle"], tmp_path / "hyd")
    assert report["byte_identical"] is True and not report["partial"]
    hydrated = list(iter_dialogues(tmp_path / "hyd", "test"))
    gold = list(iter_dialogues(world["out"] / "gold", "test"))
    assert hydrated == [blind_inputs(d) for d in gold]
    seen = ("history", "candidate_poi_ids", "rejected_poi_ids", "action", "scenario")
    rows_in = [{k: r[k] for k in seen} for r in iter_turn_rows(hydrated)]
    rows_gold = [{k: r[k] for k in seen} for r in iter_turn_rows(gold)]
    assert rows_in == rows_gold


def test_gold_scores_as_the_offline_path(world, tmp_path):
    """A predictions file made from the hydrated inputs, scored against OUT/gold, equals the same system's
    predictions made from the gold folder scored the ordinary way."""
    from trace_metrics.lib.suite import evaluate_run

    hydrate_release(world["out"] / "inputs", world["bundle"], tmp_path / "hyd")

    def predict(data, path):
        rows = iter_turn_rows(iter_dialogues(data, "test"))
        write_jsonl(
            path,
            (
                {
                    "dialogue_id": r["dialogue_id"],
                    "turn_id": r["turn_id"],
                    "ranked_poi_ids": sorted(r["candidate_poi_ids"], reverse=True),
                    "response": "",
                    "citations": {},
                }
                for r in rows
            ),
        )
        return path

    from_inputs = predict(tmp_path / "hyd", tmp_path / "from_inputs.jsonl")
    from_gold = predict(world["out"] / "gold", tmp_path / "from_gold.jsonl")
    assert from_inputs.read_bytes() == from_gold.read_bytes()
    blind = evaluate_run(world["out"] / "gold", from_inputs, split="test", pool="closed")
    offline = evaluate_run(world["out"] / "gold", from_gold, split="test", pool="closed")
    assert blind["values"] == offline["values"] and blind["n"] == offline["n"]
    assert blind["n"]["recall@1"] > 0
    assert 0.0 <= blind["values"]["recall@1"] <= 1.0
    # one scored turn per dialogue, read from the gold's period.json
    assert blind["config"]["scored_turns"] == "last" and blind["counts"]["system_turns"] == 60
    assert blind["values"]["tsr"] is None and blind["n"]["tsr"] == 0 and blind["n"]["t2r"] == 0


def test_a_baseline_on_the_hydrated_inputs_scores_against_the_gold(world, tmp_path):
    """End to end: hydrate the inputs, run a baseline on them as on any data directory, score against the
    gold (the last system turn of each dialogue)."""
    from trace_harness.protocols.teacher_forced.runner import run_baseline
    from trace_metrics.lib.suite import evaluate_run

    hydrate_release(world["out"] / "inputs", world["bundle"], tmp_path / "hyd")
    preds = tmp_path / "tfidf.jsonl"
    run_baseline("tfidf", tmp_path / "hyd", preds, split="test", pool="closed", progress=False)
    result = evaluate_run(world["out"] / "gold", preds, split="test", pool="closed")
    n_recommending = sum(
        d["turns"][-1]["action"] in ("recommend", "compare")
        for d in iter_dialogues(world["out"] / "gold", "test")
    )
    assert result["n"]["recall@1"] == n_recommending > 0 and result["counts"]["system_turns"] == 60
    assert 0.0 <= result["values"]["recall@1"] <= 1.0 and result["values"]["bleu4"] is not None
    assert result["values"]["tsr"] is None and "tsr" in result["config"]["without_value"]


def test_byte_identical_for_a_given_seed_and_another_seed_differs(world, tmp_path):
    again = make_blind(
        world["public"], "2026-q1", tmp_path / "again", seed=SEED, workers=2, created=CREATED, progress=False
    )
    assert _tree(tmp_path / "again") == _tree(world["out"])
    assert again == world["record"]
    other = make_blind(
        world["public"], "2026-q1", tmp_path / "other", n=24, seed=SEED + 1, created=CREATED, progress=False
    )
    assert other["seed"] == SEED + 1 and other["dialogues"] == 24
    assert (
        split_file(tmp_path / "other" / "gold", "test").read_bytes()
        != split_file(world["out"] / "gold", "test").read_bytes()
    )


def test_secret_seed_by_default(world, tmp_path, monkeypatch):
    import secrets

    monkeypatch.setattr(secrets, "randbelow", lambda bound: 123456789 if bound == 2**63 else 0)
    record = make_blind(world["public"], "p2", tmp_path / "b", n=24, created=CREATED, progress=False)
    assert record["seed"] == 123456789
    assert "123456789" not in (tmp_path / "b" / "inputs" / "period.json").read_text()


def test_refusals_name_the_file_or_field(world, tmp_path):
    public, out = world["public"], world["out"]
    with pytest.raises(TraceDataError, match="refusing to overwrite a blind set") as e:
        make_blind(public, "2026-q1", out, seed=SEED, created=CREATED, progress=False)
    assert str(out) in str(e.value)
    with pytest.raises(TraceDataError, match="period name"):
        make_blind(public, "no spaces", tmp_path / "x", seed=SEED)
    with pytest.raises(TraceDataError, match="created: expected a date"):
        make_blind(public, "p", tmp_path / "x", seed=SEED, created="yesterday")
    with pytest.raises(TraceDataError, match="missing data/test.jsonl.gz"):
        make_blind(tmp_path, "p", tmp_path / "x", seed=SEED)
    nokb = tmp_path / "nokb"
    for split in SPLITS:
        split_file(nokb, split).parent.mkdir(parents=True, exist_ok=True)
        split_file(nokb, split).write_bytes(split_file(public, split).read_bytes())
    kb_dir(nokb).mkdir()
    with pytest.raises(TraceDataError, match=r"missing knowledge_base/pois.jsonl.gz.*reviews.jsonl.gz"):
        make_blind(nokb, "p", tmp_path / "x", seed=SEED)
    assert not (tmp_path / "x").exists()


def test_force_replaces_an_existing_set(world, tmp_path):
    target = tmp_path / "forced"
    make_blind(world["public"], "p", target, n=24, seed=1, created=CREATED, progress=False)
    make_blind(world["public"], "p", target, n=24, seed=2, created=CREATED, force=True, progress=False)
    assert json.loads((target / "gold" / "period.json").read_text())["seed"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["forced"]  # no temporaries left


def test_push_gold_to_a_private_dataset_only(world, tmp_path):
    hub = PrivateHub(tmp_path / "hub")
    message = push_gold(world["out"] / "gold", "me/trace-blind", token="hf_x", api=hub)
    assert hub.created == [
        {"repo_id": "me/trace-blind", "repo_type": "dataset", "private": True, "token": "hf_x"}
    ]
    assert message.startswith("blind set 2026-q1") and len(hub.commits) == 1
    assert _tree(tmp_path / "hub") == _tree(world["out"] / "gold")
    public_hub = PrivateHub(tmp_path / "pub", public=("me/open",))
    with pytest.raises(TraceDataError, match="is not private"):
        push_gold(world["out"] / "gold", "me/open", api=public_hub)
    assert public_hub.commits == []
    with pytest.raises(TraceDataError, match="gold side's period record"):
        push_gold(world["out"] / "inputs", "me/trace-blind", api=hub)


def test_command_prints_the_comparison_and_refuses_an_existing_out(world, tmp_path, capsys):
    from tests.support.cli import run_cli

    argv = ["corpus", "blind", "--data", str(world["public"]), "--period", "2026-q1", "--out"]
    argv += [str(tmp_path / "b"), "--n", "24", "--created", CREATED, "--no-progress"]
    rc, out = run_cli(capsys, *argv)
    assert rc == 0, out
    assert "blind set 2026-q1 (24 dialogues, created 2026-12-02)" in out and "public test split (60" in out
    assert "same city x type cells: yes" in out and "action_shares: largest difference" in out
    record = json.loads((tmp_path / "b" / "gold" / "period.json").read_text())
    assert str(record["seed"]) not in out  # the secret seed is never printed
    rc, out = run_cli(capsys, *argv)
    assert rc == 2 and "refusing to overwrite a blind set" in out and "--force" in out
    assert len(out.strip().splitlines()) == 1


def test_push_gold_command(world, tmp_path, capsys, monkeypatch):
    import huggingface_hub

    from tests.support.cli import run_cli

    hub = PrivateHub(tmp_path / "hub")
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda token=None: hub)
    rc, out = run_cli(capsys, "corpus", "push-gold", "--gold", world["out"] / "gold", "--repo", "me/blind")
    assert rc == 0 and "pushed to the private dataset me/blind: blind set 2026-q1" in out
    assert hub.created[0]["private"] is True and _tree(tmp_path / "hub") == _tree(world["out"] / "gold")
    rc, out = run_cli(capsys, "corpus", "push-gold", "--gold", world["out"] / "inputs", "--repo", "me/blind")
    assert rc == 2 and "gold side's period record" in out
