"""The moderator's equations on hand-computed cases, driven by scripted agents (fixed lists: the moderator's own
inputs, no LLM): rejection under both taus (Eq. 3), h (Eq. 11), d (Eq. 7-10), scores (Eq. 4-5), the collective
offer (Eq. 2), S (Eq. 12), Eq. 13 stopping and M_early, and each of the authors' code behaviours."""

from __future__ import annotations

import pytest

from baselines.collab_rec.moderator import (
    CODE_BEHAVIOURS,
    Moderator,
    ModeratorConfig,
    clip_list,
    collective_offer,
    hallucination_rate,
    m_early_round,
    min_max,
    omit_votes,
    rank_deviation,
    reliability,
    stop_reason,
    update_rejections,
    update_scores,
)
from trace_metrics.lib.collab_rec import filter_fraction, filter_success

CATALOGUE = list("ABCDEFGH")
AGENTS = ("p", "q", "s")
ROUND1 = {"p": ["A", "B", "C"], "q": ["A", "B", "D"], "s": ["A", "C", "E"]}
ROUND2 = {"p": ["A", "B", "F"], "q": ["A", "C", "G"], "s": ["A", "B", "C"]}
approx = pytest.approx


def no_filters(rejection: str = "aggressive", **kw) -> Moderator:
    """k = 3, no filters (r = 1 for everyone: a query with no constraint is vacuously satisfied)."""
    return Moderator(
        CATALOGUE, {}, {}, lambda item, name, value: True, ModeratorConfig(k=3, rejection=rejection, **kw)
    )


def test_round_one_scores_and_offer():
    mod = no_filters()
    rec = mod.step(ROUND1)
    # r = 1, d = 1 (no previous list), h = 0: weight 2 for each agent; Eq. 4: 2 / rank
    assert {a: rec.agents[a].weight for a in AGENTS} == {"p": 2.0, "q": 2.0, "s": 2.0}
    assert rec.scores == approx({"A": 6.0, "B": 2.0, "C": 2 / 3 + 1.0, "D": 2 / 3, "E": 2 / 3})
    assert rec.offer == ["A", "B", "C"] and rec.rejected == [] and rec.success == 1.0


def test_aggressive_rejection_round_two_by_hand():
    mod = no_filters("aggressive")
    mod.step(ROUND1)
    rec = mod.step(ROUND2)
    # Eq. 3: q omits B, p omits C -> one vote each -> both rejected at tau 1
    assert rec.newly_rejected == ["B", "C"] and rec.rejected == ["B", "C"]
    a = rec.agents
    # Eq. 11 over k = 3: p lists rejected B, q rejected C, s both
    assert (a["p"].hallucination, a["q"].hallucination, a["s"].hallucination) == approx((1 / 3, 1 / 3, 2 / 3))
    assert a["p"].invalid == {"B": "rejected"} and a["s"].grounded == ["A"]
    # Eq. 10 with mu1 = |V_t|: p: prev [A,B,C] -> [A,F]: dropped B, C (2 x 2) + new F (2) = 6 over 3 x 4
    assert (a["p"].reliability, a["q"].reliability, a["s"].reliability) == approx((0.5, 0.5, 1 - 2 / 6))
    # weights 1 + d - h; A accumulates; F and G enter at rank 2; B and C are gone
    wp, ws = 1 + 0.5 - 1 / 3, 1 + (1 - 2 / 6) - 2 / 3
    assert rec.scores == approx({"A": 6 + 2 * wp + ws, "D": 2 / 3, "E": 2 / 3, "F": wp / 2, "G": wp / 2})
    assert rec.offer == ["A", "D", "E"]  # D and E tie at 2/3: catalogue order


def test_majority_rejection_round_two_by_hand():
    mod = no_filters("majority")
    mod.step(ROUND1)
    rec = mod.step(ROUND2)
    assert rec.newly_rejected == [] and all(a.hallucination == 0 for a in rec.agents.values())
    a = rec.agents
    # p: drops C (3) and adds F (3, not in the offer): 6 over 3 x (3 + 3); q: drops B, D (6), adds C (in the
    # offer at rank 3, now rank 2: mu2 1) and G (mu2 3): 10 over 3 x (3 + mean mu2 2); s: C moves 2 -> 3 (1),
    # drops E (3), adds B (offer rank 2 = rank 2: mu2 0): 4 over 3 x (3 + 0)
    assert (a["p"].reliability, a["q"].reliability, a["s"].reliability) == approx(
        (1 - 6 / 18, 1 - 10 / 15, 1 - 4 / 9)
    )
    wp, wq, ws = 2 - 6 / 18, 2 - 10 / 15, 2 - 4 / 9
    assert rec.scores["A"] == approx(6 + wp + wq + ws)
    assert rec.scores["B"] == approx(2 + wp / 2 + ws / 2)
    assert rec.scores["C"] == approx(2 / 3 + 1 + wq / 2 + ws / 3)
    assert rec.offer == ["A", "B", "C"]


def test_eq10_printed_formula_and_the_code_reading():
    # One dropped city (J: mu1 = 10), one new city (X: in the previous offer at rank 4, now rank 10: mu2 = 6),
    # A and B swapped (2): Delta = 18. Printed: 1 - 18 / (10 x (10 + 6)); the authors' code: 1 - 18 / (10 x 20).
    previous, offer = list("ABCDEFGHIJ"), list("ABCXDEFGHI")
    current = ["B", "A", "C", "D", "E", "F", "G", "H", "I", "X"]
    assert rank_deviation(previous, current, offer, mu1=10) == 18
    assert reliability(previous, current, offer) == approx(0.8875)
    assert reliability(previous, current, offer, mu2_is_mu1=True) == approx(0.91)
    # no new item: mu2 = mu1 in both readings (a list that only reorders)
    assert reliability(["A", "B"], ["B", "A"], []) == reliability(["A", "B"], ["B", "A"], [], mu2_is_mu1=True)
    # through the moderator: the switch gives the majority round two the code's values
    mod = no_filters("majority", code_behaviours={"mu2_is_mu1"})
    mod.step(ROUND1)
    a = mod.step(ROUND2).agents
    assert (a["p"].reliability, a["q"].reliability, a["s"].reliability) == approx(
        (1 - 6 / 18, 1 - 10 / 18, 1 - 4 / 18)
    )


def test_abstaining_agent_casts_no_omit_vote():
    mod = no_filters("aggressive")
    mod.step(ROUND1)
    rec = mod.step({"p": ["A", "B", "C"], "q": None, "s": ["A", "B", "C"]})
    assert rec.newly_rejected == [] and not rec.agents["q"].answered and rec.agents["q"].success is None
    assert omit_votes(["A", "B"], {"p": ["A"], "q": None}) == {"A": 0, "B": 1}


def test_equations_directly():
    assert update_rejections({"Z"}, {"A": 2, "B": 1}, 2) == {"Z", "A"}
    assert hallucination_rate(["A", "X", "B"], {"A", "B"}.__contains__, 10) == approx(0.1)
    assert clip_list(["A", " A ", "B", "C", "D"], 3) == (["A", "B", "C"], 1, 1)
    # Eq. 7: kept A moves 1 -> 2 (1), dropped B (mu1 = 3), new C in the offer at rank 1, now rank 1: 0
    assert rank_deviation(["A", "B"], ["C", "A", "D"], ["C"], mu1=3) == 1 + 3 + 0 + 3
    assert reliability(None, ["A"], []) == 1.0 and reliability(["A"], [], ["A"]) == 0.0
    assert reliability(["A", "B"], ["A", "B"], []) == 1.0
    assert update_scores({"A": 1.0}, {"p": ["B", "A"]}, {"p": 0.5}) == {"A": 1.25, "B": 0.5}
    assert min_max({"A": 2.0, "B": 4.0, "C": 3.0}) == {"A": 0.0, "B": 1.0, "C": 0.5}
    assert collective_offer({"B": 1.0, "C": 1.0}, ["A", "C", "B"], 2) == ["C", "B"]


def test_success_equations_by_hand():
    kb = {"A": {"budget": "low", "popularity": "low"}, "B": {"budget": "low", "popularity": "high"}}

    def satisfies(item, name, value):
        return kb.get(item, {}).get(name) == value

    filters = {"budget": "low", "popularity": "low"}
    assert filter_fraction("B", filters, satisfies) == 0.5
    assert filter_success(["A", "B", "X"], filters, satisfies) == approx((1 + 0.5 + 0) / 3)  # Eq. 12
    assert filter_success(["B"], {"popularity": "low"}, satisfies) == 0.0  # Eq. 6 on a role's filters
    assert filter_success([], filters, satisfies) == 0.0 and filter_success(["B"], {}, satisfies) == 1.0
    mod = Moderator(["A", "B"], filters, {"pop": {"popularity": "low"}}, satisfies, ModeratorConfig(k=2))
    rec = mod.step({"pop": ["B", "A"], "other": ["B"]})
    assert rec.agents["pop"].success == 0.5 and rec.agents["other"].success == 0.5  # role filters vs all of F


def test_eq13_on_given_success_curves():
    rule = dict(t_min=3, patience=2, eps=0.005)
    assert stop_reason([0.5, 1.0], **rule) == "ideal"  # S = 1 stops at once, before T_min
    assert stop_reason([0.5, 0.5], **rule) is None  # before T_min
    assert stop_reason([0.5, 0.5, 0.5], **rule) == "stagnation"
    assert stop_reason([0.5, 0.6, 0.602], **rule) is None  # improved by 0.102 over S_1
    assert stop_reason([0.5, 0.6, 0.602, 0.604], **rule) == "stagnation"  # 0.004 over S_2 < eps
    assert stop_reason([0.5, 0.6, 0.602, 0.605], **rule) is None  # exactly eps is not below it


def test_m_early_pick():
    assert m_early_round([0.5, 0.6, 0.7, 0.7, 0.65]) == 3  # earliest best of rounds 2..
    assert m_early_round([0.5, 0.4, 0.5]) == 1  # no round beats round 1
    assert m_early_round([0.5]) == 1


def test_negotiation_stops_by_eq13_and_fixed_budget():
    from baselines.collab_rec.agents import Task
    from baselines.collab_rec.negotiation import run_mami

    task = Task(
        "q",
        "anything",
        {"budget": "low"},
        tuple(CATALOGUE),
        lambda c, n, v: c in "AB",
        default_role_filters={},
    )
    same = {a: ["A", "B", "C"] for a in AGENTS}

    def propose(requests):
        return [same[agent] for _, agent, _ in requests]

    eq13 = run_mami([task], propose, ModeratorConfig(k=3), agents=AGENTS)[0]
    # S stays 2/3 every round: stagnation at T_min = 3
    assert eq13.stop == {"round": 3, "reason": "stagnation"} and eq13.agent_calls == 9
    assert eq13.systems["M_eq13"]["success"] == approx(2 / 3) and eq13.systems["M_1"]["round"] == 1
    fixed = run_mami([task], propose, ModeratorConfig(k=3, stopping="m_early", t_max=4), agents=AGENTS)[0]
    assert fixed.stop["round"] == 4 and set(fixed.systems) == {"M_1", "M_early", "M_4", "M_early_div"}
    assert fixed.systems["M_early"]["round"] == 1  # nothing beats round 1
    assert fixed.systems["M_early_div"]["round"] == 4  # the authors' Table 3 falls back to the last round
    ideal = run_mami([task], lambda reqs: [["A", "B"]] * len(reqs), ModeratorConfig(k=2), agents=AGENTS)[0]
    assert ideal.stop == {"round": 1, "reason": "ideal"}
    masi = run_mami([task], propose, ModeratorConfig(k=3), "masi", agents=AGENTS)[0]
    assert masi.stop["round"] == 1 and set(masi.systems) == {"M_1"}


# ---- the authors' code's behaviour, one switch at a time ---------------------------------------------------
def code(*names: str, rejection: str = "aggressive") -> Moderator:
    return no_filters(rejection, code_behaviours=frozenset(names))


def test_code_h_over_returned_and_mu1_is_k():
    mod = code("h_over_returned", "mu1_is_k")
    mod.step(ROUND1)
    rec = mod.step(ROUND2)
    assert rec.agents["s"].hallucination == approx(2 / 3)  # 3 returned, 2 invalid (k is 3 too)
    # mu1 = k = 3 for p: dropped B, C (2 x 3) + new F (3) over 3 x 6
    assert rec.agents["p"].reliability == approx(1 - 9 / 18)
    for mod, expected in (
        (code("h_over_returned"), 1 / 2),
        (no_filters(), 1 / 3),
    ):  # the code's vs Eq. 11's /k
        mod.step(ROUND1)
        assert mod.step({a: ["A", "Atlantis"] for a in AGENTS}).agents["p"].hallucination == approx(expected)


def test_code_rejected_reenter():
    mod = code("rejected_reenter")
    mod.step(ROUND1)
    rec = mod.step(ROUND2)
    # grounding uses the rejection set before this round: B and C are scored afresh and may stay in the offer
    assert rec.rejected == ["B", "C"] and rec.agents["p"].grounded == ["A", "B", "F"]
    assert (
        "B" in rec.offer and rec.scores["B"] < 2.0
    )  # its round-1 score (2.0) was dropped with the rejection


def test_code_renormalise_scores():
    mod = code("renormalise_scores")
    mod.step(ROUND1)
    assert max(mod.scores.values()) == 1.0 and min(mod.scores.values()) > 0
    assert mod.scores["B"] == approx((2 - 0) / 6)  # min over the eligible catalogue is 0 (unproposed items)


def test_code_skip_nonpositive_weight():
    def never(item, name, value):
        return False

    out = {}
    for skip in (False, True):
        cfg = ModeratorConfig(k=2, code_behaviours=frozenset({"skip_nonpositive_weight"} if skip else ()))
        mod = Moderator(CATALOGUE, {"x": "y"}, {}, never, cfg)
        mod.step({"p": ["A", "B"]})  # r 0, d 1, h 0: A 1, B 0.5
        rec = mod.step({"p": ["C", "Z"]})  # A, B omitted -> rejected; Z outside: h 1/2; C new: d 1 - 3/4
        assert rec.agents["p"].weight == approx(0 + 0.25 - 0.5)
        out[skip] = (rec.scores, rec.offer)
    assert out[False] == ({"C": approx(-0.25)}, ["D", "E"])  # the paper: a negative increment sinks C
    assert out[True] == ({}, ["C", "D"])  # the code: C adds nothing and ties at 0 in catalogue order


def test_code_success_all_filters():
    kb = {"A": "low"}
    mod = Moderator(
        ["A", "B"],
        {"budget": "low", "popularity": "low"},
        {"p": {"popularity": "low"}},
        lambda c, n, v: kb.get(c) == v and n == "popularity",
        ModeratorConfig(k=1, code_behaviours=frozenset({"success_all_filters"})),
    )
    assert mod.step({"p": ["A"]}).agents["p"].success == 0.5  # 1 of 2 query filters, not 1 of 1 role filter


def test_config_errors_name_the_valid_values():
    with pytest.raises(ValueError, match="aggressive"):
        ModeratorConfig(rejection="loose")
    with pytest.raises(ValueError, match="renormalise_scores"):
        ModeratorConfig(code_behaviours=frozenset({"nope"}))
    with pytest.raises(ValueError, match="k_reject"):
        ModeratorConfig(k=2, k_reject=3)
    assert "filters_always_match" in CODE_BEHAVIOURS
