"""Multi-Review Synthesis: clause counts per aspect, the consensus formula, the ranking over the whole pool (no
adaptation), the evidence its model sees (consensus lines with the clustered sentences, labelled [Rn]), and
quoting and misquoting on recorded model outputs read through the real LLM layer's cache."""

from __future__ import annotations

import pytest

from baselines import pipeline
from baselines.llm.multi_review_synthesis import (
    AspectCount,
    Sentence,
    aspect_clusters,
    aspect_counts,
    cluster_counts,
    consensus_score,
    evidence_sentences,
)
from tests.support.llm import ScriptedLLM
from trace_dataset.datadir import iter_dialogues
from trace_dataset.views import turn_rows
from trace_metrics.lib.grounding import analyse

DEAD = "openai:http://127.0.0.1:9/v1#recorded-mrs"  # never contacted: the answers sit in the response cache


def test_consensus_formula():
    assert AspectCount(3, 1, 5).consensus == pytest.approx(0.4)  # (n_pos - n_neg) / n_total, neutral counted
    assert AspectCount(0, 2, 2).consensus == -1.0
    assert AspectCount().consensus == 0.0


def test_sentences_are_clustered_by_aspect_with_their_polarity():
    counts = aspect_counts(
        [
            "The food was delicious. The staff were rude but the food was not bad.",
            "Great location. The menu is long.",
        ]
    )
    # food: "delicious" (+), "the food was not bad" (negated bad: +), "The menu is long" (neutral)
    assert counts["food"] == AspectCount(2, 0, 3)
    assert counts["service"] == AspectCount(0, 1, 1)  # "The staff were rude"
    assert counts["location"] == AspectCount(1, 0, 1)
    assert counts["value"] == AspectCount()


def test_clusters_keep_the_sentences_and_the_evidence_puts_the_consensus_side_first():
    clusters = aspect_clusters([("r1", "The food was bland. The food was delicious!"), ("r2", "Great food.")])
    food = clusters["food"]
    assert food == [
        Sentence("r1", "The food was bland", -1.0),
        Sentence("r1", "The food was delicious", 1.0),
        Sentence("r2", "Great food", 1.0),
    ]
    assert cluster_counts(clusters)["food"] == AspectCount(2, 1, 3)  # consensus +1/3
    # consensus > 0: the positive sentences first (cluster order), then the rest
    assert [s.text for s in evidence_sentences(food, 1 / 3, 2)] == ["The food was delicious", "Great food"]
    assert [s.text for s in evidence_sentences(food, -0.5, 2)] == [
        "The food was bland",
        "The food was delicious",
    ]
    assert evidence_sentences(food, 0.0, 1) == food[:1]
    assert evidence_sentences(food, 1.0, 0) == []


def test_score_uses_query_weights_or_uniform_weights():
    counts = {
        "food": AspectCount(1, 0, 1),
        "service": AspectCount(0, 1, 1),
        "ambiance": AspectCount(),
        "value": AspectCount(),
        "location": AspectCount(),
    }
    assert consensus_score(counts, {"food": 1.0}) == 1.0
    assert consensus_score(counts, {"service": 0.5}) == -0.5
    assert consensus_score(counts, {}) == 0.0  # uniform: +1 - 1


def test_the_model_sees_consensus_and_labelled_sentences_and_rejected_pois_stay(kb):
    seen = []

    def reply(conv):
        seen.append(conv[-1]["content"])
        return "Reviewers agree the food is great."

    pipe = pipeline("multi_review_synthesis", kb=kb, llm=ScriptedLLM(reply))
    d = next(iter_dialogues(kb.root.parent, "test"))
    preds = list(pipe(turn_rows(d, "closed")))
    first, compare = seen
    # the consensus line, then the cluster's sentence under a label; a sentence in two clusters keeps one label
    assert (
        "  food: +1.00 (1 positive, 0 negative of 1 sentences)\n    [R1] (positive) The vegan bowls are fresh"
        in first
    )
    assert "  ambiance: +1.00 (1 positive, 0 negative of 1 sentences)\n    [R1] (positive)" in first
    # compare, after the user rejected Harbor Fish House: no adaptation, it is still ranked and shown
    assert preds[1]["ranked_poi_ids"][:2] == ["p_veg", "p_sea"] and "Harbor Fish House" in compare
    assert "[R3] (negative) the dining room gets very loud after eight o'clock" in compare
    assert sorted(preds[1]["ranked_poi_ids"]) == sorted(d["candidate_poi_ids"])
    assert all(p["citations"] == {} for p in preds)  # it quoted nothing, so it cites nothing
    # the earlier reading: rejected POIs dropped
    dropped = list(
        pipeline("multi_review_synthesis", kb=kb, llm=ScriptedLLM(reply), keep_rejected=False)(
            turn_rows(d, "closed")
        )
    )
    assert "p_sea" not in dropped[1]["ranked_poi_ids"]
    params = pipe.describe()["parameters"]
    assert params["prompt"]["file"] == "multi_review_synthesis.txt" and params["keep_rejected"] is True
    assert (
        params["sentences_per_aspect"] == 2 and "prefilter" not in params
    )  # it ranks the full pool (App. Q)
    with pytest.raises(ValueError, match="takes no prefilter"):
        pipeline("multi_review_synthesis", kb=kb, llm=ScriptedLLM(reply), prefilter="dense")
    with pytest.raises(ValueError, match="sentences_per_aspect"):
        pipeline("multi_review_synthesis", kb=kb, llm=ScriptedLLM(reply), sentences_per_aspect=-1)


def test_quoting_and_misquoting_on_recorded_outputs(kb, tmp_path):
    """Recorded answers in the LLM layer's response cache, read by a client of a server that does not exist: a
    verbatim quote with its label is grounded (GS 1), a misquote is not (GS 0), an unknown label is counted."""
    from trace_llm import ResponseCache
    from trace_llm.cache import Completion, cache_key

    cache_path = tmp_path / "recorded.sqlite"
    pipe = pipeline(
        "multi_review_synthesis", kb=kb, llm=DEAD, llm_cache=str(cache_path), llm_options={"max_retries": 0}
    )
    d = next(iter_dialogues(kb.root.parent, "test"))
    rows = list(turn_rows(d, "closed"))
    convs = [pipe.build(pipe.preprocess(row))[0] for row in rows]
    answers = [
        'Green Leaf Kitchen: "The vegan bowls are fresh and the quiet back room is perfect" [R1].',
        'Green Leaf Kitchen has "tasty vegan plates and a calm private dining area" [R1], unlike '
        'Harbor Fish House, where "the dining room gets loud" [R3]; see also [R9].',
    ]
    cache = ResponseCache(cache_path)
    settings = pipe.llm.settings.to_dict()
    for conv, text in zip(convs, answers, strict=True):
        cache.put(
            cache_key("openai", pipe.llm.cache_model, settings, conv),
            "openai",
            pipe.llm.cache_model,
            settings,
            Completion(text, 100, 20, "stop"),
        )
    cache.close()
    quote, misquote = list(pipe(rows))
    assert pipe.llm.usage["requests"] == 0 and pipe.llm.usage["cache_hits"] == 2
    review = {"p_veg": kb.reviews_of("p_veg")[0].review_id, "p_sea": kb.reviews_of("p_sea")[0].review_id}
    assert quote["citations"] == {"R1": review["p_veg"]}
    assert misquote["citations"] == {"R1": review["p_veg"], "R3": review["p_sea"]}
    assert misquote["meta"]["unknown_labels"] == ["R9"] and misquote["meta"]["counts"]["unknown_labels"] == 1

    def sources(pred):
        return [
            kb.review_text(pred["citations"][f"R{n}"]) if f"R{n}" in pred["citations"] else None
            for n in range(1, 10)
        ]

    good, bad = analyse(quote["response"], sources(quote)), analyse(misquote["response"], sources(misquote))
    assert good.grounding_score() == 1.0 and good.citation_density() > 0
    # "tasty vegan plates ..." is not in the review (support under 0.8); "the dining room gets loud" is 80%+ of
    # "the dining room gets very loud": one of two quotes grounded
    assert bad.supports[0] < 0.8 <= bad.supports[1] and bad.grounding_score() == 0.5
    assert bad.unresolved_labels == 1  # [R9]
