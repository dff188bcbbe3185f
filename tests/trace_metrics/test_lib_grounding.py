"""Grounding functions: hand-computed GS, CD, PC, CGS; edge cases; Algorithm 1 agreement; properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trace_dataset.constants import ASPECT_TERMS
from trace_dataset.quotes import CITATION_LABEL_RE, extract_quotes
from trace_metrics.lib import grounding as g
from trace_metrics.lib.tokenize import WORD_RE, word_count, word_tokens

R1 = "The seafood gumbo was rich and smoky, and the staff were quick. Cheap and cheerful."
R2 = "Lovely outdoor seating under the oaks and a lively crowd at night."


def test_hand_computed_mixed_quotes():
    # quote 1 verbatim from R1 (5 tokens), quote 2 from R2 with one word changed (fuzzy, not verbatim),
    # quote 3 invented; labels [R1] [R2]; 22 word tokens once the 2 labels are removed
    response = (
        'Gumbo House: "seafood gumbo was rich and" [R1]. Bayou Grill has "Lovely outdoor seating under '
        'the elms" [R2] and "free valet parking for everyone".'
    )
    a = g.analyse(response, [R1, R2])
    assert a.verbatim == (True, False, False)
    assert a.supports[0] == 1.0 and a.supports[1] >= 0.8 and a.supports[2] < 0.8
    assert a.grounding_score() == pytest.approx(2 / 3)
    assert a.grounding_score(0.99) == pytest.approx(1 / 3) and a.grounding_score("exact") == pytest.approx(
        1 / 3
    )
    assert (a.quote_tokens, a.tokens) == (5, 22)
    assert a.citation_density() == pytest.approx(5 / 22)
    # aspect terms, each with its distance to the nearest label: seafood -> [R1] after it, outdoor seating ->
    # [R1] before it (closer than [R2] after it), parking -> [R2] before it
    r1, r2 = response.index("[R1]"), response.index("[R2]")
    seafood, outdoor, parking = (response.index(t) for t in ("seafood", "outdoor", "parking"))
    expected = [r1 - seafood, min(outdoor - r1, r2 - outdoor), parking - r2]
    assert sorted(a.term_distances) == sorted(expected) == [21, 28, 30]
    assert a.provenance_coverage() == 1.0 and a.provenance_coverage(25) == pytest.approx(1 / 3)
    assert a.cgs() == pytest.approx((2 / 3) * 1.0 * 1.0)


def test_no_quotes_is_vacuously_grounded_but_gets_no_cgs():
    a = g.analyse("Gumbo House is cheap [R1].", [R1])
    assert a.grounding_score() == 1.0 and a.citation_density() == 0.0 and a.cgs() == 0.0
    assert a.provenance_coverage() == 1.0  # "cheap" is 13 characters from [R1]


def test_no_citations():
    a = g.analyse('They say "The seafood gumbo was rich" and it is quiet.', [])
    assert a.grounding_score() == 0.0  # a quote with nothing cited to support it
    assert a.citation_density() == 0.0 and a.provenance_coverage() == 0.0 and a.labels == 0


def test_unknown_label_cites_nothing():
    a = g.analyse('Great: "The seafood gumbo was rich" [R9].', [R1])
    assert a.unresolved_labels == 1 and a.grounding_score() == 0.0 and a.citation_density() == 0.0
    # a resolved label elsewhere makes its review available to every quote of the response
    b = g.analyse('Great: "The seafood gumbo was rich" [R9]. Also [R1].', [R1])
    assert b.grounding_score() == 1.0 and b.unresolved_labels == 1
    # a None entry is a label that points nowhere too
    assert g.analyse('"The seafood gumbo" [R2]', [R1, None]).grounding_score() == 0.0
    assert g.analyse('"x" [R0]', [R1]).unresolved_labels == 1


def test_curly_quotes():
    a = g.analyse("It has \u201cLovely outdoor seating under the oaks\u201d [R1].", [R2])
    assert a.verbatim == (True,) and a.quote_tokens == 6 and a.citation_density() == 6 / 8


def test_whitespace_only_quote_is_not_a_quote():
    assert g.analyse('a " " b [R1]', [R1]).supports == ()


def test_pc_window_is_inclusive_and_duplicates_merge():
    assert g.analyse("quiet " + "x" * 75 + "[R1]", [R1]).term_distances == (81,)
    window_hit = g.analyse("quiet" + " " * 75 + "[R1]", [R1])  # label at offset 80
    assert window_hit.provenance_coverage(80) == 1.0 and window_hit.provenance_coverage(79) == 0.0
    # "quiet" twice: one far, one next to the label -> one mention, covered
    text = "quiet " + "y" * 200 + " quiet [R1]"
    a = g.analyse(text, [R1])
    assert len(a.term_distances) == 1 and a.provenance_coverage() == 1.0
    # label before the mention counts too
    assert g.analyse("[R1] is very quiet", [R1]).provenance_coverage() == 1.0


def test_pc_whole_word_case_insensitive():
    found = g.DEFAULT_MATCHER.mentions("Pools, a POOL and cheapest cheap-ish Outdoor Seating")
    assert sorted(found) == [("cheap", 27), ("outdoor seating", 37), ("pool", 9)]


def test_overlapping_terms_each_count_once():
    m = g.AspectMatcher(["outdoor", "outdoor seating", "family-friendly", "friendly cafe"])
    found = sorted(m.mentions("A family-friendly cafe with outdoor seating"))
    assert found == sorted(
        [("family-friendly", 2), ("friendly cafe", 9), ("outdoor", 28), ("outdoor seating", 28)]
    )
    assert found == sorted(m.mentions_reference("A family-friendly cafe with outdoor seating"))
    with pytest.raises(ValueError, match="start and end"):
        g.AspectMatcher(["-dash"])


def test_41_aspect_terms():
    assert len(ASPECT_TERMS) == 41 and len(g.DEFAULT_MATCHER.terms) == 41


_PIECES = list(ASPECT_TERMS) + [
    "Seafood",
    "PARKING",
    "outdoor",
    "seating",
    "gluten",
    "free",
    "non",
    "x",
    "\u0130",
    "é",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_PIECES), st.sampled_from(["", " ", "-", "_", ".", "a", "[R1] "])),
        max_size=14,
    )
)
def test_fast_mentions_equal_algorithm_1(parts):
    text = "".join(a + b for a, b in parts)
    assert sorted(g.DEFAULT_MATCHER.mentions(text)) == sorted(g.DEFAULT_MATCHER.mentions_reference(text))
    mentions, n_words = g.DEFAULT_MATCHER.scan(text)
    assert mentions == g.DEFAULT_MATCHER.mentions(text) and n_words == len(WORD_RE.findall(text))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.text(alphabet="abcé_-Ω\u0130 ", min_size=1, max_size=12))
def test_mentions_of_any_terms_in_any_text(filler, term):
    # any term list (first words that are prefixes of other words, non-ASCII, underscores) in any text
    term = term.strip(" -") or "a"
    low = term.lower()
    if not (low[0].isalnum() or low[0] == "_") or not (low[-1].isalnum() or low[-1] == "_"):
        term = "a"
    m = g.AspectMatcher([term, "abc", "ab-c", "ab c", "é"])
    text = filler + " " + term + filler[:5] + term.upper() + " ab c ab-c"
    assert sorted(m.mentions(text)) == sorted(m.mentions_reference(text))
    assert m.scan(text)[1] == len(WORD_RE.findall(text))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_word_count_is_the_regex_count(s):
    assert word_count(s) == len(WORD_RE.findall(s)) == len(word_tokens(s))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(['"', "\u201c", "\u201d", "a b", " ", "\n", "[R1]", "x_y", "é"]), max_size=16)
)
def test_quotes_are_extract_quotes(parts):
    # analyse reads quotes with QUOTE_RE.findall; they must be trace_dataset.quotes.extract_quotes' quotes
    response = "".join(parts) + " [R1]"
    quotes = [q.text for q in extract_quotes(response) if q.text.strip()]
    a = g.analyse(response, [response])  # [R1] cites the response itself: every quote is verbatim
    assert len(a.supports) == len(quotes) and all(a.verbatim)
    expected = sum(len(WORD_RE.findall(q)) - len(CITATION_LABEL_RE.findall(q)) for q in quotes)
    assert a.quote_tokens == expected


def test_composite_formula():
    assert g.composite(0.9, 0.02, 0.5) == pytest.approx(0.9 * 0.4 * 0.75)
    assert g.composite(1.0, 0.5, 1.0) == 1.0  # CD above the gate: no penalty
    assert g.composite(1.0, 0.5, 0.0) == 0.5  # the PC floor
    assert g.composite(0.8, 0.02, 0.5, gate=0.1) == pytest.approx(0.8 * 0.2 * 0.75)
    arr = g.composite(np.array([1.0, 0.5]), np.array([0.05, 0.0]), np.array([1.0, 1.0]))
    assert arr.tolist() == [1.0, 0.0]
    with pytest.raises(ValueError, match="gate"):
        g.composite(1, 1, 1, gate=0)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1)),
        max_size=30,
    ),
    st.sampled_from([0.03, 0.05, 0.1, 0.07]),
)
def test_vectorised_composite_is_the_scalar_formula_bit_for_bit(items, gate):
    # `aggregate` computes per-item CGS with the numpy path: it must equal the scalar path exactly
    gs, cd, pc = ([x[i] for x in items] for i in range(3))
    assert g.composite(gs, cd, pc, gate).tolist() == [g.composite(a, b, c, gate) for a, b, c in items]


def test_score_cgs_mean_vs_of_means():
    preds = ['"The seafood gumbo was rich and smoky" [R1]', "no quotes, no labels"]
    out = g.score(preds, [[R1], []], return_per_item=True)
    assert out["cgs_per_item"] == [1.0, 0.0] and out["cgs_turn_mean"] == 0.5
    # cgs is the formula on the means: GS 1, CD (1 + 0)/2 = 0.5 -> gate passed, PC 1 -> 1.0
    assert out["citation_density"] == pytest.approx(0.5 * 7 / 7) and out["cgs"] == 1.0
    assert out["n"] == 2 and out["n_quotes"] == 1


def test_parameter_errors():
    with pytest.raises(ValueError, match="fuzzy_threshold"):
        g.score(["x"], [[]], fuzzy_threshold=1.5)
    with pytest.raises(ValueError, match="pc_window"):
        g.score(["x"], [[]], pc_window=-1)
    with pytest.raises(ValueError, match="one per response"):
        g.score(["x"], [])


_WORDS = st.sampled_from(
    [
        "the",
        "gumbo",
        "quiet",
        "cozy",
        "parking",
        '"',
        "\u201c",
        "\u201d",
        "[R1]",
        "[R2]",
        "[R7]",
        "rich",
        "smoky",
        ".",
        "seafood",
        "outdoor seating",
        "Cheap",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORDS, max_size=40), st.sampled_from([0.7, 0.8, 0.9, "exact"]), st.integers(0, 200))
def test_values_in_range(words, threshold, window):
    a = g.analyse(" ".join(words), [R1, R2])
    for v in (
        a.grounding_score(threshold),
        a.citation_density(),
        a.provenance_coverage(window),
        a.cgs(threshold, 0.05, window),
    ):
        assert 0.0 <= v <= 1.0 and not math.isnan(v)
    assert a.grounding_score("exact") <= a.grounding_score(0.9) <= a.grounding_score(0.7)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(_WORDS, max_size=15), max_size=8), st.randoms())
def test_means_are_order_invariant(responses, rnd):
    items = [(" ".join(w), [R1, R2]) for w in responses]
    shuffled = list(items)
    rnd.shuffle(shuffled)
    a = g.score([p for p, _ in items], [s for _, s in items])
    b = g.score([p for p, _ in shuffled], [s for _, s in shuffled])
    assert a == b
