"""Retrieval units: spans point back into their reviews, the name post-check, App. A.1 templates."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baselines.sniprec.llm_snippets import clean_snippets, still_named
from baselines.sniprec.store import RulesExtractor
from baselines.sniprec.units import (
    Unit,
    align,
    attribute_units,
    clause_spans,
    needs_name_check,
    rules_units,
    sentence_spans,
    strip_names,
)


@pytest.mark.parametrize("kind", ["rules", "sentence", "document"])
def test_every_review_unit_points_back_into_its_review(kb, kind):
    units = RulesExtractor(kind).extract(kb, sorted(kb.pois))
    n_review = 0
    for pid, (us, stats) in units.items():
        assert stats["reviews"] == len(kb.reviews_of(pid))
        for u in us:
            if not u.from_review:
                assert u.start is None and u.end is None
                continue
            n_review += 1
            assert kb.review_business[u.review_id] == pid
            span = kb.review_text(u.review_id)[u.start : u.end]
            assert span.strip() == span and span
            # only the rules' name post-check rewrites a unit's text
            assert u.text == (strip_names(span, kb.pois[pid].name) if kind == "rules" else span)
    assert n_review > 0


def test_rules_clauses_and_the_name_post_check():
    text = (
        "Harbor Fish House is great, but the service at Harbor Fish House's bar was slow; parking is hard. "
        "The reviewer loved it. Tip: order more."
    )
    units = rules_units("r1", text, "Harbor Fish House")
    assert [u.text for u in units] == [
        "This place is great",
        "the service at this place's bar was slow",
        "parking is hard.",
        "a visitor loved it.",
        "Tip: order more.",
    ]
    assert [text[u.start : u.end] for u in units][:2] == [
        "Harbor Fish House is great",
        "the service at Harbor Fish House's bar was slow",
    ]
    assert not any(still_named(u.text, "Harbor Fish House") for u in units)


def test_name_post_check_handles_a_leading_article_and_case():
    assert (
        strip_names("We loved the market kitchen's brunch", "The Market Kitchen")
        == "We loved this place's brunch"
    )
    assert strip_names("Market Kitchen is cozy", "The Market Kitchen") == "This place is cozy"
    assert (
        strip_names("Supermarket Kitchenware sold out", "The Market Kitchen")
        == "Supermarket Kitchenware sold out"
    )


def test_clauses_are_cut_only_where_both_sides_keep_three_words():
    text = "Good food but slow. The pasta was rich, and the wine list was long."
    spans = [clause_spans(text, a, b) for a, b in sentence_spans(text)]
    assert [[text[a:b] for a, b in s] for s in spans] == [
        ["Good food but slow."],
        ["The pasta was rich", "the wine list was long."],
    ]


def test_llm_snippets_align_to_the_sentence_sharing_most_words():
    review = "We came for brunch. The pancakes were fluffy and huge! Service was slow."
    a, b = align("Pancakes are fluffy.", review)
    assert review[a:b] == "The pancakes were fluffy and huge!"
    assert align("Great parking garage.", review) is None


def test_name_check_flags_names_reviewers_and_capitalised_words():
    assert needs_name_check("The Cow and The Curd food truck is recommended", "The Cow and The Curd")
    assert needs_name_check("the reviewer was impressed", "X Bar")
    assert needs_name_check("server Linda was friendly", "X Bar")
    assert not needs_name_check("Fresh bread is served daily", "X Bar")
    assert clean_snippets(["  Fresh bread. ", "fresh bread.", "ok", "", "Pasta is rich"]) == [
        "Fresh bread.",
        "Pasta is rich",
    ]


def test_attribute_templates_follow_appendix_a1():
    units = attribute_units(
        ["Restaurants", "Vegan"],
        {"noise_level": "very_loud", "good_for_kids": False, "ambience": ["romantic", "quiet"], "wifi": None},
        1,
    )
    assert [u.text for u in units] == [
        "This place is categorized as Restaurants.",
        "This place is categorized as Vegan.",
        "it has price range as under $10.",
        "it has ambience as romantic.",
        "it has ambience as quiet.",
        "it has good for kids as no.",
        "it has noise level as very loud.",
    ]
    assert all(u.review_id is None for u in units)


def test_units_round_trip_through_lists():
    u = Unit("text", "r1", 3, 9)
    assert Unit.from_list(u.to_list()) == u


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab cX.!?;:,\n'\"-")), max_size=120))
def test_spans_of_any_text_are_inside_it_and_non_empty(text):
    for a, b in sentence_spans(text):
        assert 0 <= a < b <= len(text)
        for ca, cb in clause_spans(text, a, b):
            assert a <= ca < cb <= b
    for u in rules_units("r", text, "Ab"):
        assert text[u.start : u.end]
