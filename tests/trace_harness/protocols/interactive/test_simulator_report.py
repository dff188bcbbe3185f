"""The simulator report of a `trace` run (validity/): leaks counted in the logs, a leaking traveller caught,
the counterfactual check against the deliberately bad systems, the files' bytes, and `trace-bench simulators`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from scipy.stats import kendalltau

from tests.support.cli import run_cli
from tests.support.interactive import hand_goal
from trace_dataset.io import read_json
from trace_harness.protocols.interactive.loop import converse
from trace_harness.protocols.interactive.run import dialogue_item, load_data_kb, run_interactive, seed_goals
from trace_harness.protocols.interactive.simulator.goal import World
from trace_harness.protocols.interactive.simulator.policy import Decision
from trace_harness.protocols.interactive.simulator.rules import RulesSimulator, Traveler, rules_text
from trace_harness.protocols.interactive.systems import load_system
from trace_harness.protocols.interactive.validity.compare import compare_sides
from trace_harness.protocols.interactive.validity.leaks import dialogue_leaks
from trace_harness.protocols.interactive.validity.report import REPORT_FILE, REPORT_MD, build_report


def utterance(turn_id: int, role: str, text: str, pois: Sequence[str] = ()) -> dict[str, Any]:
    return {"turn_id": turn_id, "role": role, "action": "x", "text": text, "referenced_poi_ids": list(pois)}


def test_leaks_name_or_quote_a_target_the_system_had_not_shown(hand_kb):
    # the hand goal's targets: r1 Copper Spoon, r2 Blue Table, r8 Juniper Noodle House
    turns = [
        utterance(0, "user", "Hi! Somewhere like the copper spoon would be perfect."),  # names r1
        utterance(1, "system", "How about Copper Spoon?", ["r1"]),
        utterance(2, "user", "Copper Spoon? I'd rather not.", ["r1"]),  # r1 is the system's find now
        utterance(3, "user", "A friend said: cheap and cheerful noodles, great value for the portion."),  # r8
        utterance(4, "user", "Something quiet and cheap, please."),
        utterance(
            5, "user", "Blue Tables are nice, and the Maple Grill."
        ),  # not the name as words; r4 no target
    ]
    item = {"record": {"turns": turns}, "traveler": {"goal": hand_goal().to_dict()}}
    got = [(u["turn_id"], u["leaked"]) for u in dialogue_leaks(item, World(hand_kb))]
    assert got == [(0, ["r1"]), (2, []), (3, ["r8"]), (4, []), (5, [])]


class LeakingSimulator(RulesSimulator):
    """A scripted traveller that names every target in every message (what SimpleUserSim guards against)."""

    def words(self, travelers: Sequence[Traveler], decisions: Sequence[Decision]) -> list[tuple[str, dict]]:
        out = []
        for t, d in zip(travelers, decisions, strict=True):
            names = [self.world.kb.pois[p].name for p in self.world.targets(t.goal, t.goal.pool("open"))]
            out.append((f"{rules_text(t, d)} I hear {' and '.join(names)} would do.", {}))
        return out


def test_a_leaking_traveller_shows_a_leak_rate_near_one(small_corpus):
    kb = load_data_kb(small_corpus)
    world = World(kb)
    goals = seed_goals(small_corpus, kb, world, "test", None)

    def report_with(simulator):
        lives = converse(
            load_system("tfidf", kb), simulator, goals, pool="closed", max_turns=4, seed=42, metadata={}
        )
        return build_report([dialogue_item(x) for x in lives], world, {"simulator": "rules"}, n_boot=200)

    leak = report_with(LeakingSimulator(world))["checks"]["leak_rate"]
    assert leak["value"] > 0.9 and leak["verdict"] == "not reliable", leak
    clean = report_with(RulesSimulator(world))
    assert clean["checks"]["leak_rate"]["value"] == 0.0 and clean["leaks"] == []


@pytest.fixture(scope="module")
def train_runs(small_corpus, tmp_path_factory):
    """tfidf and knowledge on the train split's travellers (34), 3 system turns, with the counterfactual check."""
    root = tmp_path_factory.mktemp("simulator_report")
    for name in ("tfidf", "knowledge"):
        for seed in (42, 7):
            run_interactive(
                name,
                small_corpus,
                root / f"{name}_{seed}",
                split="train",
                turns=3,
                seed=seed,
                progress=False,
                n_boot=200,
                counterfactual=True,
            )
    return root


@pytest.mark.parametrize("system", ["tfidf", "knowledge"])
def test_the_bad_systems_score_clearly_below_the_real_ones(train_runs, system):
    report = read_json(train_runs / f"{system}_42" / REPORT_FILE)
    cf = report["checks"]["counterfactual_margin"]
    assert set(cf["systems"]) == {"random_pick", "contrary"}
    for m in cf["systems"].values():
        assert m["n_dialogues"] == 34 and m["value"] > 0.2 and m["ci_low"] > 0, m
    assert cf["verdict"] == "reliable" and cf["value"] == min(m["value"] for m in cf["systems"].values())
    # the bad systems talked to the same travellers: their own runs sit beside the system's
    bad = read_json(train_runs / f"{system}_42" / "counterfactual" / "contrary" / "metrics.json")
    assert bad["n_dialogues"] == 34 and bad["run"]["system"] == "contrary"
    assert report["checks"]["leak_rate"]["value"] == 0.0
    assert "fallback_share" not in report["checks"]  # the rules traveller words nothing with a model
    assert report["reply_validity"]["rules_wording"] == report["reply_validity"]["replies"] > 0


def test_the_report_is_written_beside_the_run_with_the_same_bytes(small_corpus, train_runs, tmp_path):
    again = tmp_path / "again"
    run_interactive(
        "tfidf", small_corpus, again, split="train", turns=3, progress=False, n_boot=200, counterfactual=True
    )
    for name in (REPORT_FILE, REPORT_MD):
        assert (again / name).read_bytes() == (train_runs / "tfidf_42" / name).read_bytes()
    text = (again / REPORT_MD).read_text(encoding="utf-8")
    assert "| margin over the deliberately bad systems |" in text and "| contrary |" in text


def test_agreement_between_seeds_is_kendall_tau_over_the_shared_travellers(train_runs, capsys):
    code, out = run_cli(
        capsys,
        "simulators",
        "--a",
        str(train_runs / "tfidf_42"),
        str(train_runs / "knowledge_42"),
        "--b",
        str(train_runs / "tfidf_7"),
        str(train_runs / "knowledge_7"),
        "--bootstrap",
        "200",
        "--out",
        str(train_runs / "seeds.json"),
    )
    assert code == 0 and "Kendall tau_b" in out
    result = read_json(train_runs / "seeds.json")
    a = [result["success"][s][0] for s in ("knowledge", "tfidf")]
    b = [result["success"][s][1] for s in ("knowledge", "tfidf")]
    assert result["tau"] == pytest.approx(kendalltau(a, b, variant="b").statistic)
    assert result["n_items"] == 34 and result["a"] == "rules traveller, seed 42"


def test_compare_sides_ranks_systems_by_live_success():
    a = {
        "x": {"d1": 1.0, "d2": 1.0, "d3": 0.0},
        "y": {"d1": 0.0, "d2": 1.0, "d3": 0.0},
        "z": {"d1": 0.0, "d2": 0.0, "d3": 0.0},
    }
    b = {
        "x": {"d1": 0.0, "d2": 0.0, "d3": 0.0},
        "y": {"d1": 1.0, "d2": 0.0, "d3": 0.0},
        "z": {"d1": 1.0, "d2": 1.0, "d3": 1.0},
    }
    out = compare_sides(a, b, n_boot=100)
    assert out["tau"] == pytest.approx(-1.0) and out["verdict"] == "not reliable"
    assert out["success"]["z"] == [0.0, 1.0]


def test_the_docs_table_gives_the_thresholds_defined_once():
    import re

    from tests.support.layout import ROOT
    from trace_metrics.lib.reliability import THRESHOLDS

    text = (ROOT / "docs" / "interactive.md").read_text(encoding="utf-8")
    section = text[text.index("### How far to trust the simulated traveller") :]
    rows = re.findall(
        r"^\| `(\w+)`[^|]*\|[^|]*\| ([<>]=) ([\d.]+) \| [<>]= ([\d.]+) \|", section, re.MULTILINE
    )
    assert {r[0] for r in rows} == {
        "leak_rate",
        "first_turn_success",
        "no_effort_share",
        "fallback_share",
        "counterfactual_margin",
        "kendall_tau",
    }
    for check, sign, reliable, care in rows:
        t = THRESHOLDS[check]
        assert (sign == ">=", float(reliable), float(care)) == (t.higher_is_better, t.reliable, t.care), check
