"""The offline rules extractor on the rules traveler's own phrasings (trace_dataset/generate/phrases.py, which
trace_harness/protocols/interactive/simulator/language.py speaks): every stated preference comes out as the preference
alone, and no lead, greeting, bridge, reason or acceptance becomes one."""

from __future__ import annotations

import itertools

import pytest

import trace_dataset.generate.phrases as P
from baselines.sniprec.queries import rules_query_snippets
from baselines.toolkit.text import content_tokens
from trace_dataset.generate.template_backend import indefinite_article

PLACE = "this place"  # what a rejected POI's name becomes before extraction
# Words a cleaned snippet may keep beside the preference itself (they add nothing to retrieval).
TOLERATED = frozenset({"somewhere", "something", "feel", "side", "place"})

# Values of each kind of stated preference (phrases.py's own names; a few categories and price words).
VALUES: dict[str, list[str]] = {
    "amenity": sorted({w for names in P.bank().amenity_names.values() for w in names}),
    "aspect": sorted({w for names in P.bank().aspect_names.values() for w in names}),
    "ambience": sorted({w for names in P.bank().ambience_names.values() for w in names}),
    "dietary": sorted({w for names in P.bank().dietary_names.values() for w in names}),
    "meal": sorted({w for names in P.bank().meal_names.values() for w in names}),
    "noise": sorted({w for names in P.bank().noise_names.values() for w in names}),
    "category": [
        "Breakfast & Brunch",
        "Sicilian",
        "Italian",
        "Art Museums",
        "Bed & Breakfast",
        "Escape Games",
    ],
    "rating": [p.format(v=v) for p in P.bank().rating_phrases for v in ("four", "4.5")],
    "location": [p.format(L="the Riverwalk") for ps in P.bank().radius_phrases.values() for p in ps],
    "price": ["cheap", "affordable", "moderate", "upscale"],
}


def _fill(template: str, w: str) -> str:
    return template.format(what=w, What=w[:1].upper() + w[1:], a_what=f"{indefinite_article(w)} {w}", word=w)


def statements() -> list[tuple[str, str]]:
    """(sentence, the preference it states) for every STATE and PRIORITY template and value."""
    out = []
    for key, templates in P.bank().state.items():
        if key == "price:budget":
            continue  # no value in the sentence: checked apart
        for template, w in itertools.product(templates, VALUES[key]):
            out.append((_fill(template, w), w))
    for template, kind in itertools.product(P.bank().priority, ("amenity", "aspect", "dietary", "meal")):
        out.extend((_fill(template, w), w) for w in VALUES[kind])
    return out


def _words(text: str) -> set[str]:
    return set(content_tokens(text))


@pytest.mark.parametrize("lead", P.bank().answer_leads)
def test_an_answer_gives_the_preference_and_nothing_of_its_lead(lead):
    """The traveler's answer: a lead ("Let me think.", "Good question.", ...) then the stated preference."""
    bad = []
    for sentence, value in statements():
        text = f"{lead} {sentence}".strip()
        got = rules_query_snippets(text)
        # a value with a comma or an "and" ("near the Riverwalk, say 3 km at most", "cosy and intimate") is two
        # clauses, so two snippets (one topic each, as C.2 asks)
        parts = value.count(", ") + value.count(" and ") + 1
        ignore = TOLERATED | {"right", "say"}
        words = set().union(*(_words(q.text) for q in got)) - ignore if got else set()
        if len(got) != parts or any(q.sign != 1 for q in got) or words != _words(value) - ignore:
            bad.append((text, [(q.sign, q.text) for q in got]))
    assert bad == [], f"{len(bad)} of {len(statements())}: {bad[:8]}"


def test_the_issues_cases():
    assert [(q.sign, q.text) for q in rules_query_snippets("Let me think. Sicilian is what I'm after.")] == [
        (1, "Sicilian")
    ]
    assert [(q.sign, q.text) for q in rules_query_snippets("I'm leaning towards Breakfast & Brunch")] == [
        (1, "Breakfast & Brunch")
    ]


def test_budget_sentences_state_the_budget():
    for sentence in P.bank().state["price:budget"]:
        got = rules_query_snippets(sentence)
        assert (
            len(got) == 1
            and "budget" in got[0].text.lower()
            and _words(got[0].text) <= {"budget", "tight", "friendly"}
        ), sentence


def test_conversation_around_the_preferences_gives_nothing():
    """Greetings, travel context, requests for a type of place, bridges, comparison asks, acceptances."""
    texts = [g for gs in P.bank().greetings.values() for g in gs]
    texts += [
        c.format(city="Tampa", context=ctx)
        for c in P.bank().context_sentences
        for ctx in ("a business trip", "an anniversary weekend")
    ]
    texts += [r.format(type=t) for r in P.bank().requests for ts in P.bank().type_nouns.values() for t in ts]
    texts += [*P.bank().reject_bridges, *P.bank().compare_asks, *P.bank().answer_leads]
    texts += [e.format(name=PLACE) for e in P.bank().extra_leads]
    texts += [a.format(name=PLACE) for acc in P.bank().accept.values() for a in acc]
    said = {t: [(q.sign, q.text) for q in rules_query_snippets(t)] for t in texts if t}
    assert {t: s for t, s in said.items() if s} == {}


def test_a_rejection_gives_its_reason_as_a_dislike_at_most():
    """A reject turn: the lead (the rejected name is "this place" by then), the reason, the restated preference.
    The lead and a reason that describes the place give nothing; "too X" gives the dislike of X."""
    reasons = [
        r.format(what=w, price="$$$", stars="3.5", L="the Riverwalk", d="4.2")
        for rs in (
            *P.bank().reason_explicit.values(),
            P.bank().reason_missing,
            P.bank().reason_missing_adj,
            P.bank().reason_price_unknown,
        )
        for r in rs
        for w in ("free parking", "quiet")
    ]
    bad = []
    for lead, reason in itertools.product(P.bank().reject_leads, sorted(set(reasons))):
        text = f"{lead.format(name=PLACE)} {reason[:1].upper() + reason[1:]}."
        got = rules_query_snippets(text)
        if [(q.sign, q.text) for q in got if not (q.sign == -1 and q.text == "far")]:
            bad.append((text, [(q.sign, q.text) for q in got]))
    assert bad == [], f"{len(bad)}: {bad[:8]}"
    far = rules_query_snippets(
        "I'll pass on this place. The Riverwalk is about 4.2 km away, too far. "
        "It should be close to the Riverwalk."
    )
    assert [(q.sign, q.text) for q in far] == [(-1, "far"), (1, "close to the Riverwalk")]
