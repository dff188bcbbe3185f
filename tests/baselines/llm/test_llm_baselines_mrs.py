"""Multi-Review Synthesis: clause counts per aspect, the consensus formula, the ranking, and the design that gives
the model no review text to quote (so the row cites nothing, as the paper's does)."""

from __future__ import annotations

import pytest

from baselines import pipeline
from baselines.llm.multi_review_synthesis import AspectCount, aspect_counts, consensus_score
from tests.support.llm import ScriptedLLM
from trace_dataset.datadir import iter_dialogues
from trace_dataset.views import turn_rows


def test_consensus_formula():
    assert AspectCount(3, 1, 5).consensus == pytest.approx(0.4)  # (n_pos - n_neg) / n_total, neutral counted
    assert AspectCount(0, 2, 2).consensus == -1.0
    assert AspectCount().consensus == 0.0


def test_sentences_are_clustered_by_aspect_with_their_polarity():
    counts = aspect_counts([
        "The food was delicious. The staff were rude but the food was not bad.",
        "Great location. The menu is long.",
    ])
    # food: "delicious" (+), "the food was not bad" (negated bad: +), "The menu is long" (neutral)
    assert counts["food"] == AspectCount(2, 0, 3)
    assert counts["service"] == AspectCount(0, 1, 1)  # "The staff were rude"
    assert counts["location"] == AspectCount(1, 0, 1)
    assert counts["value"] == AspectCount()


def test_score_uses_query_weights_or_uniform_weights():
    counts = {"food": AspectCount(1, 0, 1), "service": AspectCount(0, 1, 1), "ambiance": AspectCount(),
              "value": AspectCount(), "location": AspectCount()}
    assert consensus_score(counts, {"food": 1.0}) == 1.0
    assert consensus_score(counts, {"service": 0.5}) == -0.5
    assert consensus_score(counts, {}) == 0.0  # uniform: +1 - 1


def test_pipeline_ranks_by_consensus_and_cites_nothing(kb):
    seen = []

    def reply(conv):
        seen.append(conv[-1]["content"])
        return "Reviewers agree it is great."

    pipe = pipeline("multi_review_synthesis", kb=kb, llm=ScriptedLLM(reply))
    d = next(iter_dialogues(kb.root.parent, "test"))
    preds = list(pipe(turn_rows(d, "closed")))
    assert all(p["citations"] == {} for p in preds)
    assert all("[R" not in prompt for prompt in seen)  # no labels, no review text: nothing to quote
    first = preds[0]
    assert first["ranked_poi_ids"][0] in first["meta"]["consensus"]
    assert sorted(first["ranked_poi_ids"]) == sorted(d["candidate_poi_ids"])
    assert "p_sea" not in preds[1]["ranked_poi_ids"]  # rejected
    assert pipe.describe()["parameters"]["prompt"]["file"] == "multi_review_synthesis.txt"
    assert "prefilter" not in pipe.describe()["parameters"]  # it ranks the full pool (App. Q)
    with pytest.raises(ValueError, match="takes no prefilter"):
        pipeline("multi_review_synthesis", kb=kb, llm=ScriptedLLM(reply), prefilter="dense")
