"""One LLM baseline against the LLM simulator, both on the packaged SmolLM2 behind a real `transformers serve`
process (tests/conftest.py's `transformers_server`). Small max tokens and one short dialogue keep it short; the
model is weak, and its messages are what they are: the test checks the protocol (decisions by the constraint
check, no target named, fallbacks counted), not the model's quality. The simulators' plumbing around the model
(the name filter, fallbacks, prompts) is tested without a model in test_interactive_llm_plumbing.py."""

from __future__ import annotations

import pytest

import baselines
from trace_dataset.datadir import kb_dir
from trace_dataset.io import read_json, read_jsonl
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.run import run_interactive
from trace_harness.protocols.interactive.simulator.goal import TravelerGoal, World

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def simulator_llm(transformers_server, tmp_path_factory):
    from trace_llm import DecodingSettings, load_llm

    llm = load_llm(
        transformers_server.spec,
        DecodingSettings(max_new_tokens=24),
        cache_path=tmp_path_factory.mktemp("ia_llm") / "cache.sqlite",
        concurrency=2,
    )
    yield llm
    llm.close()


def test_an_llm_baseline_against_the_llm_traveler(
    small_corpus, transformers_server, simulator_llm, tmp_path, one_torch_thread
):
    if "llm_zero_shot" not in baselines.BASELINES:
        pytest.skip("the LLM baselines (baselines/llm) are not in this installation yet")
    kb = KnowledgeBase.load(kb_dir(small_corpus))
    # short answers, no JSON repairs, POI cards without review excerpts: a few short requests in all; asked by
    # prompt, as `transformers serve` ignores response_format (docs/llm.md), so no grammar has to close in 24
    params = {
        "llm": transformers_server.spec,
        "llm_options": {"structured": "prompt"},
        "max_new_tokens": 24,
        "json_repairs": 0,
        "reviews_per_poi": 0,
        "llm_cache": False,
    }
    m = run_interactive(
        "llm_zero_shot",
        small_corpus,
        tmp_path / "out",
        simulator="llm",
        llm=simulator_llm,
        n=1,
        turns=2,
        params=params,
        progress=False,
        n_boot=100,
        kb=kb,
    )
    assert m["n_dialogues"] == 1 and m["per_turn"][0]["n"] == 1
    meta = read_json(tmp_path / "out" / "predictions.jsonl.meta.json")
    assert meta["simulator"]["simulator"] == "llm" and meta["simulator"]["prompt"]["sha256"]
    assert meta["system"]["baseline"] == "llm_zero_shot" and meta["system_label"].startswith(
        "llm_zero_shot ("
    )
    records = list(read_jsonl(tmp_path / "out" / "data" / "interactive.jsonl.gz"))
    travelers = list(read_jsonl(tmp_path / "out" / "travelers.jsonl.gz"))
    world = World(kb)
    wording = m["travelers"]["wording"]
    assert sum(wording.values()) == sum(len(t["turns"]) for t in travelers)
    for r, tr in zip(records, travelers, strict=True):
        goal = TravelerGoal.from_dict(tr["goal"])
        targets = {kb.pois[p].name.lower() for p in world.targets(goal, goal.pool("open"))}
        for t, info in zip([t for t in r["turns"] if t["role"] == "user"], tr["turns"], strict=True):
            assert t["text"].strip()
            assert info["wording"] in ("llm", "rules_fallback")
            # the decision is the constraint check's: an acceptance only of a POI that satisfies every preference
            if t["action"] == "accept":
                assert world.acceptable(goal, t["referenced_poi_ids"][0])
            if t["action"] == "greet_and_seek":  # nothing recommended yet: no target may be named
                assert not any(name in t["text"].lower() for name in targets if len(name) >= 4)


def test_the_simulator_report_of_the_llm_traveler(small_corpus, simulator_llm, tmp_path, one_torch_thread):
    """tfidf against the SmolLM2 traveller, two travellers, two system turns, with the counterfactual check:
    the bad systems talk to the same LLM traveller, the replies are counted, and the report's bytes are what
    the run's logs give again."""
    from trace_harness.protocols.interactive.output import read_outputs
    from trace_harness.protocols.interactive.validity.report import REPORT_FILE, build_report

    kb = KnowledgeBase.load(kb_dir(small_corpus))
    out = tmp_path / "tfidf_llm"
    m = run_interactive(
        "tfidf",
        small_corpus,
        out,
        simulator="llm",
        llm=simulator_llm,
        n=2,
        turns=2,
        progress=False,
        n_boot=100,
        kb=kb,
        counterfactual=True,
    )
    report = read_json(out / REPORT_FILE)
    checks = report["checks"]
    assert set(checks) == {
        "leak_rate",
        "first_turn_success",
        "no_effort_share",
        "fallback_share",
        "counterfactual_margin",
    }
    v = report["reply_validity"]
    replies = sum(m["travelers"]["wording"].values())
    assert (
        v["replies"] == replies == v["llm_as_written"] + v["llm_trimmed"] + sum(v["rules_fallbacks"].values())
    )
    assert checks["fallback_share"]["count"] == sum(v["rules_fallbacks"].values())
    assert checks["leak_rate"]["total"] == replies and report["run"]["simulator"] == "llm"
    for name in ("random_pick", "contrary"):
        meta = read_json(out / "counterfactual" / name / "predictions.jsonl.meta.json")
        assert meta["simulator"]["simulator"] == "llm" and meta["identity"]["system"] == name
        assert checks["counterfactual_margin"]["systems"][name]["n_dialogues"] == 2
    again = build_report(
        read_outputs(out),
        World(kb),
        m["run"],
        n_boot=100,
        counterfactual={
            name: read_outputs(out / "counterfactual" / name) for name in ("random_pick", "contrary")
        },
    )
    assert again == report
