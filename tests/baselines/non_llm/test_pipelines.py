"""What every baseline of this folder owes the contract: every action, rejections excluded, pools, verbatim
quotes with [Rn] labels, determinism, session isolation, serialisable configs, construction by name."""

from __future__ import annotations

import json

import pytest

import baselines
from tests.support.non_llm import CELL_IDS, turn
from trace_dataset.constants import SYSTEM_ACTIONS
from trace_dataset.quotes import CITATION_LABEL_RE, extract_quotes
from trace_dataset.views import turn_rows

FAST = ["aspect", "knowledge", "persona", "hybrid_rrf"]
ALL = [*FAST, "dense"]


def build(name, kb, tmp_path, minilm=None):
    if name == "hybrid_rrf" and minilm is None:
        return baselines.pipeline(name, kb=kb, use_dense=False)
    if name in ("dense", "hybrid_rrf"):
        from baselines.toolkit.dense import DenseIndex

        index = DenseIndex(kb, encoder=minilm, cache_dir=tmp_path / "dense-cache")
        return baselines.pipeline(
            name, kb=kb, **({"index": index} if name == "dense" else {"dense_index": index})
        )
    return baselines.pipeline(name, kb=kb)


def dialogue(closed, pool_16, open_set):
    turns = [
        turn(
            0, "user", "greet_and_seek", "Hi! We want quiet seafood with good service, nothing too expensive."
        ),
        turn(1, "system", "ask_preference", "Any budget?"),
        turn(2, "user", "provide_preference", "Something cheap with outdoor seating please."),
        turn(3, "system", "recommend", "Try Harbor Fish House.", ("p_sea",)),
        turn(4, "user", "reject_and_refine", "Too loud for us, something calmer?", ("p_sea",)),
        turn(5, "system", "compare", "Compare Green Leaf Kitchen and Sushi Mori.", ("p_veg", "p_sus")),
        turn(6, "user", "accept", "Green Leaf Kitchen it is."),
        turn(7, "system", "farewell", "Enjoy!"),
    ]
    return {
        "dialogue_id": "cell_0001",
        "split": "test",
        "scenario": {
            "persona_type": "couple",
            "persona": "a couple",
            "travel_context": "a weekend getaway",
            "city": "Philadelphia",
            "poi_type": "restaurant",
            "difficulty": "Easy",
        },
        "candidate_poi_ids": closed,
        "pool_16_poi_ids": pool_16,
        "pool_32_poi_ids": pool_16,
        "open_set_poi_ids": open_set,
        "turns": turns,
        "quote_spans": [],
        "metadata": {
            "generator": "test",
            "backend": "template",
            "model": "",
            "seed": 42,
            "kb_version": "non-llm-test",
        },
    }


DIALOGUE = dialogue(["p_sea", "p_veg", "p_sus"], ["p_sea", "p_veg", "p_sus", "p_caf"], list(CELL_IDS))


def check_predictions(kb, rows, preds):
    assert len(preds) == len(rows)
    for r, pred in zip(rows, preds, strict=True):
        assert (pred["dialogue_id"], pred["turn_id"]) == (r["dialogue_id"], r["turn_id"])
        ranked = pred["ranked_poi_ids"]
        assert len(ranked) == len(set(ranked))
        assert set(ranked) <= set(r["candidate_poi_ids"])
        assert not set(ranked) & set(r["rejected_poi_ids"])
        if r["action"] == "farewell":
            assert ranked == []
        else:
            assert set(ranked) == set(r["candidate_poi_ids"]) - set(r["rejected_poi_ids"])
        labels = {f"R{n}" for n in map(int, CITATION_LABEL_RE.findall(pred["response"]))}
        assert labels == set(pred["citations"])
        quotes = extract_quotes(pred["response"])
        if r["action"] in ("recommend", "compare"):
            assert quotes, pred["response"]
        cited = [kb.review_text(rid) for rid in pred["citations"].values()]
        for q in quotes:  # every quote is a verbatim span of a cited review
            assert any(q.text in text for text in cited), q.text
        assert json.loads(pred.to_json()) == pred.to_dict() == pred  # the record is its JSON line


def run(pipe, rows, **kw):
    return list(pipe(rows, **kw))


def lines(preds):
    """The JSON lines a run writes of these predictions."""
    return [p.to_json() for p in preds]


@pytest.mark.parametrize("name", FAST)
def test_contract_on_every_pool(name, cell_kb, tmp_path):
    pipe = build(name, cell_kb, tmp_path)
    for pool in ("closed", "pool_16", "open"):
        rows = list(turn_rows(DIALOGUE, pool))
        assert [r["action"] for r in rows] == ["ask_preference", "recommend", "compare", "farewell"]
        assert set(r["action"] for r in rows) == set(SYSTEM_ACTIONS)
        preds = run(pipe, rows)
        check_predictions(cell_kb, rows, preds)
        after_rejection = preds[2]
        assert "p_sea" not in after_rejection["ranked_poi_ids"]
        assert "Harbor Fish House" in after_rejection["response"]  # the rejection is acknowledged by name


@pytest.mark.parametrize("name", FAST)
def test_deterministic_and_session_isolated(name, cell_kb, tmp_path):
    rows = list(turn_rows(DIALOGUE, "open"))
    first = run(build(name, cell_kb, tmp_path), rows, batch_size=1)
    again = run(build(name, cell_kb, tmp_path), rows, batch_size=3)
    assert lines(first) == lines(again)
    # another dialogue before this one changes nothing (no state crosses dialogues)
    other = dialogue(["p_bbq", "p_caf"], ["p_bbq", "p_caf"], ["p_bbq", "p_caf"])
    other["dialogue_id"] = "cell_0000"
    other_rows = list(turn_rows(other, "closed"))
    mixed = run(build(name, cell_kb, tmp_path), other_rows + rows)
    assert lines(mixed[len(other_rows) :]) == lines(first)
    # the pool order does not matter: ties go by business_id
    shuffled = [{**r, "candidate_poi_ids": list(reversed(r["candidate_poi_ids"]))} for r in rows]
    assert [p["ranked_poi_ids"] for p in run(build(name, cell_kb, tmp_path), shuffled)] == [
        p["ranked_poi_ids"] for p in first
    ]


@pytest.mark.parametrize("name", ALL)
def test_registry_and_config(name):
    cls = baselines.BASELINES[name]
    assert cls.name == name and baselines.identity(name).family == "non-LLM"
    assert cls.config_keys  # every baseline of this folder has parameters worth recording


@pytest.mark.parametrize("name", FAST)
def test_describe_is_json(name, cell_kb, tmp_path):
    described = build(name, cell_kb, tmp_path).describe()
    assert described["baseline"] == name
    json.dumps(described)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dense", "hybrid_rrf"])
def test_contract_with_the_real_model(name, cell_kb, tmp_path, minilm):
    pipe = build(name, cell_kb, tmp_path, minilm)
    for pool in ("closed", "pool_16", "open"):
        rows = list(turn_rows(DIALOGUE, pool))
        preds = run(pipe, rows)
        check_predictions(cell_kb, rows, preds)
        assert lines(preds) == lines(run(pipe, rows, batch_size=1))  # batching changes nothing
