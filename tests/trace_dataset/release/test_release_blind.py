"""Blind test sets: the generator's stratification beside the public test split's, inputs without any gold
value that hydrate like any release, gold that scores as the offline path does, the same bytes for a given
seed, and clear refusals."""

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
    compare_stats,
    make_blind,
    strip_gold,
)
from trace_dataset.release.blind_hub import push_gold
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
    for key in ("tier_shares", "action_shares", "turns_mean"):
        assert comparison[key]["within"] is True, (key, comparison[key])
    assert set(blind["action_shares"]) == set(public["action_shares"])
    assert blind["splits"] == {"test": 60}


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


def test_inputs_hydrate_and_give_the_systems_what_the_gold_gives(world, tmp_path):
    report = hydrate_release(world["out"] / "inputs", world["bundle"], tmp_path / "hyd")
    assert report["byte_identical"] is True and not report["partial"]
    hydrated = list(iter_dialogues(tmp_path / "hyd", "test"))
    gold = list(iter_dialogues(world["out"] / "gold", "test"))
    assert hydrated == [strip_gold(d) for d in gold]
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
