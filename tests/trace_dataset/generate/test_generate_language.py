"""Generated text reads right: no a/an slip ("I'm after a elegant feel") and no doubled word ("no sign of a pool
to cool off in in its reviews") in the authored text of generated dialogues, in the template grammar, or in
the predictions validator's messages.

Review quotes are not ours (they are left out of the scan), and neither are the names of a real Yelp knowledge
base, which may hold "Bora Bora" (masked, per dialogue, by the names of its city-and-type cell). The synthetic
bundle's names are ours: they repeat no word ("Forest Park Park" was one), and its 1,000-dialogue corpus is
scanned with nothing masked.
"""

from __future__ import annotations

import dataclasses
import re
import string

import pytest

from trace_dataset.generate import phrases as P
from trace_dataset.generate.template_backend import display_name, indefinite_article
from trace_dataset.quotes import QUOTE_RE

ARTICLE = re.compile(r"\b(a|an)\s+([A-Za-z0-9][\w'-]*)", re.I)
DOUBLED = re.compile(r"\b(\w+)\s+\1\b", re.I)
NAME_MASK = "<name>"


def language_slips(text: str) -> list[str]:
    """The a/an slips and doubled words of one text (quotes removed first)."""
    text = QUOTE_RE.sub(" ", text)
    slips = [
        f"{m.group(0)!r}: expected '{indefinite_article(m.group(2))}'"
        for m in ARTICLE.finditer(text)
        if m.group(1).lower() != indefinite_article(m.group(2)) and m.group(2) != NAME_MASK.strip("<>")
    ]
    slips += [f"{m.group(0)!r}: doubled word" for m in DOUBLED.finditer(text)]
    return slips


def test_the_scanner_catches_what_it_is_for():
    assert language_slips("I'm after a elegant feel.") == ["'a elegant': expected 'an'"]
    assert language_slips("Try an hotel? No: an hour, a unique place, an 8-seat bar.") == [
        "'an hotel': expected 'a'"
    ]
    assert language_slips("It gives no sign of a pool to cool off in in its reviews.") == [
        "'in in': doubled word"
    ]
    assert language_slips('One guest wrote "the the soup was a event" [R1].') == []  # a quote is not ours


def _corpus_slips(dialogues, kb) -> list[str]:
    out = []
    for d in dialogues:
        names = sorted({display_name(kb.poi(b).name) for b in d["open_set_poi_ids"]}, key=len, reverse=True)
        for t in d["turns"]:
            text = t["text"]
            for name in names:
                text = text.replace(name, NAME_MASK)
            out += [f"{d['dialogue_id']}/{t['turn_id']}: {s}" for s in language_slips(text)]
    return out


def test_fixture_corpus_reads_right(fixture_dialogues, fixture_kb):
    from trace_dataset.kb.store import KnowledgeBase

    slips = _corpus_slips(fixture_dialogues, KnowledgeBase.load(fixture_kb))
    assert slips == [], slips[:10]


def test_synthetic_corpus_reads_right(synthetic_corpus, synthetic_kb):
    from trace_dataset.datadir import iter_dialogues
    from trace_dataset.kb.store import KnowledgeBase

    dialogues = list(iter_dialogues(synthetic_corpus[0]))
    assert len(dialogues) == 1000
    slips = _corpus_slips(dialogues, KnowledgeBase.load(synthetic_kb))
    assert slips == [], slips[:10]


@pytest.mark.slow
def test_built_in_corpus_has_no_doubled_word_even_in_names(full_scale_corpus):
    """Before the names were fixed, 1,000 dialogues of the built-in corpus said "Park Park" or "House House"
    dozens of times (242 times in the main job's 10,000)."""
    from trace_dataset.datadir import iter_dialogues

    dialogues = list(iter_dialogues(full_scale_corpus))
    assert len(dialogues) == 1000
    doubled = [
        f"{d['dialogue_id']}/{t['turn_id']}: {m.group(0)!r}"
        for d in dialogues
        for t in d["turns"]
        for m in DOUBLED.finditer(QUOTE_RE.sub(" ", t["text"]))
    ]
    assert doubled == [], doubled[:10]


def test_synthetic_names_repeat_no_word():
    from trace_dataset.yelp.synth import generate_businesses, repeats_a_word

    assert repeats_a_word("Forest Park Park") and repeats_a_word("Oak House Public House")
    assert not repeats_a_word("Forest Park Pizza") and not repeats_a_word("Baker's Bakery")
    names = [
        b.record["name"] for b in generate_businesses(seed=42, scale=1.0)
    ]  # the built-in corpus's bundle
    assert len(names) > 3000
    assert [n for n in names if repeats_a_word(n) or DOUBLED.search(n)] == []


# ---------------------------------------------------------------------------------------------------
# The grammar itself: every template filled with every name it can receive (as the renderer picks them)
# ---------------------------------------------------------------------------------------------------
NAMES = {
    "amenity": P.bank().amenity_names,
    "aspect": P.bank().aspect_names,
    "ambience": P.bank().ambience_names,
    "dietary": P.bank().dietary_names,
    "meal": P.bank().meal_names,
    "noise": P.bank().noise_names,
}
ADJECTIVE_KINDS = ("noise", "ambience")  # = template_backend.ADJECTIVE_KINDS
NOUN_KINDS = tuple(k for k in NAMES if k not in ADJECTIVE_KINDS)
VALUES: dict[str, list[str]] = {
    **{k: sorted({w for names in table.values() for w in names}) for k, table in NAMES.items()},
    "rating": [p.format(v=v) for p in P.bank().rating_phrases for v in ("four", "4.5")],
    "location": [
        p.format(L=L)
        for ps in P.bank().radius_phrases.values()
        for p in ps
        for L in ("the Riverwalk", "Armory Park")
    ],
    "category": ["Italian", "Art Museums", "Hostels", "Escape Games", "Bed & Breakfast"],  # Yelp categories
}


def _names(kinds) -> list[str]:
    return sorted({w for k in kinds for w in VALUES[k]})


def _templates(obj) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _templates(v)]
    return [t for v in obj for t in _templates(v)]


TEMPLATES = [t for f in dataclasses.fields(P.Phrases) for t in _templates(getattr(P.bank(), f.name))]
# (templates, the kinds whose names fill them): template_backend's state/claim/reason/violation choices
FILLED: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    *((P.bank().state[k], (k,)) for k in VALUES),
    *((P.bank().claim[k], (k,)) for k in NAMES if k in P.bank().claim),
    (P.bank().reason_explicit["noise"], ("noise",)),
    (P.bank().reason_explicit["default"], NOUN_KINDS),
    (P.bank().violation["default"], NOUN_KINDS),
    (P.bank().claim_attr, NOUN_KINDS),
    (P.bank().priority, tuple(NAMES)),
    (P.bank().reason_missing, NOUN_KINDS),
    (P.bank().claim_evidence, NOUN_KINDS),
    (P.bank().compare_miss_evidence, NOUN_KINDS),
    (P.bank().reason_missing_adj, ADJECTIVE_KINDS),
    (P.bank().claim_evidence_adj, ADJECTIVE_KINDS),
    (P.bank().compare_miss_evidence_adj, ADJECTIVE_KINDS),
    *((P.bank().revise[k], (k,)) for k in ADJECTIVE_KINDS),
]
CASES = [(t, kinds) for templates, kinds in FILLED for t in templates]


class _Filler(dict):
    """Names for the placeholders the test does not vary."""

    def __missing__(self, key: str) -> str:
        return "Sample Place" if key in ("name", "a", "b") else "x"


def _fill(template: str, w: str) -> str:
    return template.format_map(
        _Filler(what=w, What=w[:1].upper() + w[1:], a_what=f"{indefinite_article(w)} {w}", old=w, new=w)
    )


def test_no_template_writes_an_article_before_a_placeholder():
    # {price} is dollar signs ("a $$ hotel"); every other value is words, whose first sound decides
    bad = [t for t in TEMPLATES if re.search(r"\b(a|an)\s+\{(?!price\})", t, re.I)]
    assert bad == [], f"use {{a_what}} (the value's own article): {bad}"


def test_every_template_with_a_name_is_checked():
    named = {
        t
        for t in TEMPLATES
        if {f for _, f, _, _ in string.Formatter().parse(t) if f} & {"what", "What", "a_what"}
    }
    assert named <= {t for t, _ in CASES}, named - {t for t, _ in CASES}


@pytest.mark.parametrize(("template", "kinds"), CASES)
def test_every_name_fits_every_template(template, kinds):
    slips = [f"{w!r}: {s}" for w in _names(kinds) for s in language_slips(_fill(template, w))]
    assert slips == []


# ---------------------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("line", ['{"dialogue_id": ', '{"a": 1} {"b": 2}', "[1, 2]", '{"x": nan'])
def test_predictions_validator_messages_have_no_doubled_word(tmp_path, line):
    from trace_dataset.io import TraceDataError
    from trace_metrics.lib.predictions import load_predictions

    path = tmp_path / "predictions.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(TraceDataError) as e:
        load_predictions(path)
    assert not DOUBLED.search(str(e.value).replace(str(path), "")), str(e.value)
