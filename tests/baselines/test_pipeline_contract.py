"""The pipeline contract: construction by name, batching, datasets input, config, isolation, bad input."""

from __future__ import annotations

import random

import datasets
import pytest

from baselines import BASELINES, NON_LLM_BASELINES, identity, pipeline
from baselines.base import RankingPipeline, TracePipeline, rank_by_score
from baselines.identity import TRACE
from baselines.toolkit.output import turn_output
from baselines.toolkit.state import dialogue_state
from tests.support.baselines import SMALL_POIS, SMALL_REVIEWS, row, sample_dialogues, turn, write_kb
from tests.support.llm import ScriptedLLM
from trace_dataset.io import TraceDataError
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.schema import TURN_ROW_FEATURES
from trace_dataset.views import iter_turn_rows

MINE = ("popularity", "tfidf", "spatial", "itinerary")
# Popularity ignores the dialogue, rejections included, unless asked (App. N "no adaptation")
DROP_REJECTED = {"popularity": {"drop_rejected": True}}


def rows_of(n: int = 6, pool: str = "closed") -> list[dict]:
    return list(iter_turn_rows(sample_dialogues(n), pool))


def test_registry_is_explicit_and_in_paper_order():
    # the paper's nine, in Table 5 order (a system of one's own may sit among them in the table)
    assert tuple(n for n in NON_LLM_BASELINES if identity(n).paper.startswith(TRACE)) == (
        "popularity",
        "tfidf",
        "aspect",
        "dense",
        "spatial",
        "hybrid_rrf",
        "itinerary",
        "knowledge",
        "persona",
    )
    for name in MINE:
        assert name in BASELINES and BASELINES[name].name == name
        assert issubclass(BASELINES[name], TracePipeline) and identity(name).family == "non-LLM"
    assert [n for n in BASELINES if n in NON_LLM_BASELINES] == list(NON_LLM_BASELINES)
    with pytest.raises(KeyError, match="unknown baseline 'bm25'; expected one of"):
        BASELINES["bm25"]


def test_pipeline_by_name_accepts_a_kb_folder(small_kb_dir):
    p = pipeline("tfidf", kb=small_kb_dir)
    assert isinstance(p, RankingPipeline) and p.kb.version == "kb-test-1"


def test_unknown_parameter_and_bad_batch_size(small_kb):
    with pytest.raises(TypeError, match="unknown parameter"):
        pipeline("tfidf", kb=small_kb, alpha=1)
    with pytest.raises(TypeError):
        pipeline("spatial", kb=small_kb, text_wieght=0.5)
    with pytest.raises(ValueError, match="batch_size"):
        pipeline("tfidf", kb=small_kb, batch_size=0)


def test_kb_without_review_text_is_a_clear_error(tmp_path):
    kb = KnowledgeBase.load(write_kb(tmp_path / "kb", SMALL_POIS, SMALL_REVIEWS, with_text=False))
    with pytest.raises(TraceDataError, match="needs review texts.*reviews.jsonl.gz"):
        pipeline("tfidf", kb=kb)


def test_bad_rows(small_kb):
    p = pipeline("tfidf", kb=small_kb)
    good = row([turn(0, "user", "greet_and_seek", "hi")])
    with pytest.raises(TraceDataError, match="d1/1: missing field"):
        list(p([{k: v for k, v in good.items() if k != "history"}]))
    with pytest.raises(TraceDataError, match="unknown system action 'accept'"):
        list(p([{**good, "action": "accept"}]))
    with pytest.raises(TraceDataError, match="not in the knowledge base"):
        list(p([{**good, "candidate_poi_ids": ["p_sea", "nope"]}]))
    with pytest.raises(TraceDataError, match="unknown pool 'pool_64'"):
        list(p([{**good, "pool": "pool_64"}]))


@pytest.mark.parametrize("name", MINE)
def test_batch_size_and_dataset_input_do_not_change_predictions(small_kb, name):
    rows = rows_of()
    p = pipeline(name, kb=small_kb)
    ref = list(p(rows, batch_size=1))
    assert len(ref) == len(rows) == 6 * 4
    assert [(r["dialogue_id"], r["turn_id"]) for r in ref] == [(r["dialogue_id"], r["turn_id"]) for r in rows]
    assert list(p(rows, batch_size=5)) == ref
    assert list(pipeline(name, kb=small_kb, batch_size=7)(iter(rows))) == ref
    ds = datasets.Dataset.from_list(rows, features=TURN_ROW_FEATURES)
    assert list(p(ds)) == ref


@pytest.mark.parametrize("name", MINE)
def test_session_isolation(small_kb, name):
    """A row's prediction does not depend on which rows (or dialogues) came before it."""
    rows = rows_of()
    p = pipeline(name, kb=small_kb)
    ref = {(r["dialogue_id"], r["turn_id"]): r for r in p(rows)}
    shuffled = rows[:]
    random.Random(42).shuffle(shuffled)
    fresh = pipeline(name, kb=small_kb)
    assert {(r["dialogue_id"], r["turn_id"]): r for r in fresh(shuffled, batch_size=3)} == ref
    for r in rows[::5]:  # alone, on a fresh pipeline
        assert next(iter(pipeline(name, kb=small_kb)([r]))) == ref[(r["dialogue_id"], r["turn_id"])]


@pytest.mark.parametrize("pool", ["closed", "pool_16", "open"])
@pytest.mark.parametrize("name", MINE)
def test_rank_only_within_the_pool_and_never_rejected(small_kb, name, pool):
    rows = rows_of(pool=pool)
    p = pipeline(name, kb=small_kb, **DROP_REJECTED.get(name, {}))
    for r, pred in zip(rows, list(p(rows)), strict=True):
        assert set(pred["ranked_poi_ids"]) <= set(r["candidate_poi_ids"])
        assert not set(pred["ranked_poi_ids"]) & set(r["rejected_poi_ids"])
        if r["action"] != "farewell":  # every usable candidate is ranked, once
            rejected = dialogue_state(r, {pid: small_kb.pois[pid].name for pid in r["candidate_poi_ids"]})
            usable = set(r["candidate_poi_ids"]) - set(rejected.rejected_poi_ids)
            assert sorted(pred["ranked_poi_ids"]) == sorted(usable)
            assert (
                usable < set(r["candidate_poi_ids"]) or not r["history"][-1]["action"] == "reject_and_refine"
            )


def test_rejection_by_name_only(small_kb):
    """A rejection that names a POI without referencing it still removes it."""
    h = [
        turn(0, "user", "greet_and_seek", "Barbecue please"),
        turn(1, "system", "recommend", "How about it?"),
        turn(2, "user", "reject_and_refine", "Smoky Pit BBQ is too loud for us."),
    ]
    for name in MINE:
        pred = next(iter(pipeline(name, kb=small_kb, **DROP_REJECTED.get(name, {}))([row(h)])))
        assert "p_bbq" not in pred["ranked_poi_ids"], name
        assert pred["response"].startswith("Understood, Smoky Pit BBQ is off the list."), name


def test_get_config_dict_and_describe(small_kb):
    p = pipeline("itinerary", kb=small_kb, max_stops=2)
    assert p.get_config_dict() == {"radius_m": 500.0, "max_stops": 2}
    d = p.describe()
    assert d == {
        "baseline": "itinerary",
        "family": "non-LLM",
        "session_isolated": True,
        "class": "baselines.non_llm.itinerary.ItineraryBaseline",
        "parameters": {"radius_m": 500.0, "max_stops": 2},
    }
    assert pipeline("tfidf", kb=small_kb).get_config_dict() == {}


class _EchoLLMPipeline(TracePipeline):
    """An LLM-shaped baseline: batched _forward, raw output in meta, llm.describe() in the config."""

    name = "echo"
    family = "LLM"
    config_keys = ("prompt_style",)

    def __init__(self, kb, batch_size=64, prompt_style="plain", llm=None, **params):
        super().__init__(kb, batch_size, **params)
        self.prompt_style = prompt_style
        self.llm = llm
        self.calls: list[int] = []

    def _forward(self, inputs):
        self.calls.append(len(inputs))
        return [turn_output(i, i["candidates"], "ok", {}, {"raw": f"<{i['action']}>"}) for i in inputs]


def test_llm_shaped_subclass_fits_the_contract(small_kb):
    llm = ScriptedLLM(lambda conversation: "ok")
    p = _EchoLLMPipeline(small_kb, batch_size=4, llm=llm)
    preds = list(p(rows_of(3)))
    assert p.calls == [4, 4, 4]  # batched
    assert preds[0]["meta"] == {"raw": "<ask_preference>"}
    assert p.get_config_dict() == {"prompt_style": "plain", "llm": llm.describe()}
    assert p.describe()["family"] == "LLM"


def test_rank_by_score_ties_by_business_id():
    assert rank_by_score(["c", "a", "b"], {"a": 1.0, "b": 2.0, "c": 1.0}) == ["b", "a", "c"]
    assert rank_by_score(["y", "x"], {"x": (4.5, 3), "y": (4.5, 3)}) == ["x", "y"]
