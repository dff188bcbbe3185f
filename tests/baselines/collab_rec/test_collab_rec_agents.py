"""The agents' prompts (App. D) and how replies are read, through the real LLM layer: recorded model outputs are
put into its response cache, so the layer's JSON parsing, validation and failure handling run without a server
(a parser fed recorded outputs; the live model is exercised in test_collab_rec_e2e.py)."""

from __future__ import annotations

import json

import pytest

from baselines.collab_rec.agents import (
    AgentCaller,
    Task,
    load_prompts,
    load_settings,
    number_word,
    prompt_files,
)
from baselines.collab_rec.moderator import Moderator, ModeratorConfig
from baselines.collab_rec.negotiation import run_mami, run_sasi
from tests.support.collab_rec import DEAD, recorded_llm
from tests.support.llm import ScriptedLLM
from trace_llm import load_llm
from trace_llm.base import prefix_reuse_requested

CITIES = ("Aalborg", "Bergen", "Porto", "Riga", "Turku")


def task(**kw) -> Task:
    kb = {"Aalborg": "medium", "Bergen": "high", "Porto": "high", "Riga": "low", "Turku": "medium"}
    return Task(
        "q1",
        "Popular cities with great food in May",
        {"popularity": "high", "interests": "food"},
        CITIES,
        lambda c, n, v: n == "popularity" and kb.get(c) == v,
        default_role_filters=load_settings().default_role_filters,
        **kw,
    )


def test_prompts_are_app_d_with_the_hashes_recorded():
    caller = AgentCaller(load_llm(DEAD, cache_path=False), ModeratorConfig())
    prompt = caller.agent_prompt(task(), "popularity", None)
    for phrase in (
        "You are a specialized travel recommendation agent.",
        "CLOSED city catalog",
        "You MUST return EXACTLY 10 cities",
        "## Role: Popularity Expert",
        "Low popularity cities generally have upto 150 POIs",
        '"feedback_acknowledged": false',
        '"Lisbon" - NOT in catalog',
        '[Structured filters: {"popularity": "high"}]',
        json.dumps(list(CITIES)),
    ):
        assert phrase in prompt, phrase
    assert (
        "REVISION CONTEXT" not in prompt and "interests" not in prompt.split("[Structured filters:")[1][:40]
    )
    sasi = caller.sasi_prompt(task())
    assert "select the top 10 cities" in sasi and '"interests": "food"' in sasi
    assert set(prompt_files()) == {"collab_rec.txt", "collab_rec.json", "interests.json"}
    assert all(len(h) == 64 for h in prompt_files().values())
    assert load_settings().decoding == {"temperature": 0.5, "top_p": 0.95, "max_new_tokens": 512}
    assert load_prompts().sha256 == prompt_files()["collab_rec.txt"]
    code = AgentCaller(
        load_llm(DEAD, cache_path=False), ModeratorConfig(code_behaviours=frozenset({"sasi_role_filters"}))
    )
    assert "Structured filters: {}" in code.sasi_prompt(task())  # the query has no sustainability filter


def test_negotiation_prompt_keeps_app_d3_as_printed():
    """App. D.3 writes the counts in words and tells the agent not to phrase the rule as "reject <= 3"."""
    cfg = ModeratorConfig()  # k = 10, at most 3 replacements
    t = task()
    mod = Moderator(CITIES, t.filters, t.role_filters(), lambda c, n, v: False, cfg)
    mod.step({a: list(CITIES) for a in load_settings().names})
    prompt = AgentCaller(load_llm(DEAD, cache_path=False), cfg).agent_prompt(t, "popularity", mod)
    for phrase in (
        "1. **Keep at least seven (>= 7) cities that already appear in the Current Offer.** - This limits you to "
        'at most 3 replacements without ever phrasing it as "reject <= 3."',
        "3. Pick the ten highest-scoring cities **while honoring Rule 1**.",
        "4. Sort the chosen ten from highest to lowest score.",
        "simply re-rank and keep all ten.",
    ):
        assert phrase in prompt, phrase
    assert number_word(7) == "seven" and number_word(25) == "25"


def test_replies_read_validated_and_hallucinations_counted(tmp_path):
    cfg = ModeratorConfig(k=3, t_max=2, stopping="fixed")
    t = task()
    probe = AgentCaller(load_llm(DEAD, cache_path=False), cfg)
    first = {a: probe.agent_prompt(t, a, None) for a in load_settings().names}
    answers = {
        first[
            "popularity"
        ]: '```json\n{"agent_role": "popularity", "candidates": ["Bergen", "Porto", "Lisbon"]}\n```',
        first["personalization"]: 'Sure! {"candidates": ["Porto", "Porto", "Riga", "Turku", "Aalborg"]}',
        first["sustainability"]: '{"name": "no candidates here"}',  # invalid: no repair budget in this test
    }
    llm = recorded_llm(tmp_path, answers)
    caller = AgentCaller(llm, cfg, max_repairs=0, catalogue_enum=False)  # the paper's open list of names
    mods = []

    def one_round(requests):
        mods.append(requests[0][2])
        return caller.propose(requests)

    cfg1 = ModeratorConfig(k=3, t_max=1, stopping="fixed")
    result = run_mami([t], one_round, cfg1)[0]
    rnd = result.rounds[0]
    agents = {a["agent"]: a for a in rnd["agents"]}
    assert agents["popularity"]["invalid"] == {"Lisbon": "out_of_catalogue"}
    assert agents["popularity"]["hallucination"] == pytest.approx(1 / 3)  # Eq. 11 over k = 3
    assert (
        agents["personalization"]["listed"] == ["Porto", "Riga", "Turku"]
        and agents["personalization"]["duplicates"] == 1
    )
    assert agents["personalization"]["overflow"] == 1 and not agents["sustainability"]["answered"]
    assert result.agent_calls == 3 and result.agent_failures == 1
    assert llm.usage["requests"] == 0 and llm.usage["cache_hits"] == 3 and llm.usage["json_failures"] == 1
    assert caller.calls == 3 and caller.failures == 1
    # round 2's prompt carries the moderator's state: offer, rejection set, feedback naming the hallucination
    second = caller.agent_prompt(t, "popularity", mods[0])
    assert "REVISION CONTEXT (Round 2)" in second and json.dumps(rnd["offer"]) in second
    assert '"Lisbon"' in second.split("Moderator feedback for you:")[1].split("Your previous")[0]
    assert '"feedback_acknowledged": true' in second and "Keep at least one (>= 1) cities" in second
    failed = caller.agent_prompt(t, "sustainability", mods[0])
    assert "could not be read as the required JSON" in failed


def test_sasi_keeps_hallucinated_names_in_its_list(tmp_path):
    t = task()
    cfg = ModeratorConfig(k=3)
    prompt = AgentCaller(load_llm(DEAD, cache_path=False), cfg).sasi_prompt(t)
    llm = recorded_llm(tmp_path, {prompt: '{"candidates": ["Paris", "Bergen", "Porto", "Riga"]}'})
    result = run_sasi([t], AgentCaller(llm, cfg, max_repairs=0, catalogue_enum=False))[0]
    sasi = result.systems["SASI"]
    assert sasi["offer"] == ["Paris", "Bergen", "Porto"] and sasi["fractions"] == [0.0, 0.5, 0.5]
    assert result.rounds[0]["agents"][0]["invalid"] == {"Paris": "out_of_catalogue"}
    assert (
        result.rounds[0]["agents"][0]["hallucination"] == pytest.approx(1 / 3) and result.agent_failures == 0
    )


def test_a_rounds_agent_requests_are_sent_for_prefix_reuse():
    inside = []  # an agent's next-round prompt continues its last: a backend that keeps states may reuse them
    llm = ScriptedLLM(lambda conv: inside.append(prefix_reuse_requested()) or {"candidates": ["Porto"]})
    caller = AgentCaller(llm, ModeratorConfig(k=1, t_max=1, stopping="fixed"), max_repairs=0)
    replies = caller.propose([(task(), a, None) for a in load_settings().names])
    assert len(replies) == len(inside) == len(load_settings().names) and all(inside)
