"""1,000 dialogues over a knowledge base built by the Yelp area's code from its synthetic bundle: every rule,
the tier distribution, and the Table 3 / App. S statistics within documented bands."""

from __future__ import annotations

from tests.support.dialogue_rules import check_dialogue
from trace_dataset.constants import TIER_SHARES, TIERS
from trace_dataset.datadir import iter_dialogues
from trace_dataset.generate.difficulty import tier_quota
from trace_dataset.generate.stats import corpus_stats
from trace_dataset.kb.store import KnowledgeBase


def test_every_dialogue_follows_the_rules(synthetic_corpus, synthetic_kb):
    out, report = synthetic_corpus
    kb = KnowledgeBase.load(synthetic_kb)
    n = 0
    for d in iter_dialogues(out):
        check_dialogue(d, kb)
        n += 1
    assert n == 1000 == report["counts"]["dialogues"]


def test_tier_distribution(synthetic_corpus):
    out, report = synthetic_corpus
    tiers = report["counts"]["tiers"]
    fallbacks = sum(report["regeneration"]["tier_fallbacks"].values())
    assert fallbacks <= 10  # a 14-POI cell occasionally cannot carry a Hard/Expert dialogue
    if not fallbacks:
        assert tiers == tier_quota(1000) == {"Easy": 248, "Medium": 348, "Hard": 306, "Expert": 98}
    for t in TIERS:
        assert abs(tiers[t] / 1000 - TIER_SHARES[t]) <= 0.015


def test_table3_statistics_in_range(synthetic_corpus):
    s = corpus_stats(synthetic_corpus[0])
    assert s["dialogues"] == 1000 and s["persona_archetypes"] == 47
    assert 10.0 <= s["turns_mean"] <= 11.0 and 1.0 <= s["turns_sd"] <= 2.0
    assert 8 <= s["turns_min"] and s["turns_max"] <= 12
    assert 3.0 <= s["pois_recommended_mean"] <= 4.5
    assert 0.26 <= s["rejection_rate"] <= 0.34  # paper: 29.4% of user turns
    assert 0.55 <= s["recommendation_turns_with_alternatives"] <= 0.80  # paper: 60%; see docs
    assert 0.45 <= s["dialogues_with_price_words"] <= 0.80
    assert s["splits"] == {"train": 700, "validation": 150, "test": 150}
