"""The template backend's paraphrase grammar: several wordings for every slot of both roles.

All of it is authored here (never review text), so the non-quote text of a dialogue is ours to release.
Placeholders: {name} POI name, {city}, {type}, {L} landmark, {cat} category, {word} price word, {d} distance,
{price} dollar signs, {stars}, {n} review count, {what} the human name of an aspect, {a_what} the same with its
indefinite article ("an elegant"), {context}. A template never writes an article before a placeholder itself
("a {what}" would give "a elegant"), and no name ends with the word a template puts after it
(tests/trace_dataset/generate/test_generate_language.py checks both, and scans generated dialogues for a/an and doubled words).
Price words (constants.PRICE_KEYWORDS) appear only where the user states a price constraint ({word}).
The tables are data: phrases.json beside this module, read on first use by `bank()`; corpus.json records its
SHA-256 (`trace_dataset.datafiles`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from trace_dataset.datafiles import read_table

PHRASES_FILE = Path(__file__).with_name("phrases.json")


@dataclass(frozen=True)
class Phrases:
    """Every slot's wordings (the keys of phrases.json)."""

    # names of constraint values
    amenity_names: dict[str, tuple[str, ...]]
    aspect_names: dict[str, tuple[str, ...]]
    ambience_names: dict[str, tuple[str, ...]]
    dietary_names: dict[str, tuple[str, ...]]
    meal_names: dict[str, tuple[str, ...]]
    noise_names: dict[str, tuple[str, ...]]
    type_nouns: dict[str, tuple[str, ...]]
    type_short: dict[str, str]
    rating_phrases: tuple[str, ...]
    # (never "from {L}": reviews say "a short walk from <landmark> ...", and six shared words would be a copy)
    radius_phrases: dict[float, tuple[str, ...]]  # radius in km -> phrasings
    # user side
    greetings: dict[str, tuple[str, ...]]
    context_sentences: tuple[str, ...]
    requests: tuple[str, ...]
    # a stated constraint, one sentence, keyed by kind (with {what}) or by constraint key
    state: dict[str, tuple[str, ...]]
    answer_leads: tuple[str, ...]
    reject_leads: tuple[str, ...]
    reject_bridges: tuple[str, ...]
    revise_leads: tuple[str, ...]
    revise: dict[str, tuple[str, ...]]
    reason_explicit: dict[str, tuple[str, ...]]
    reason_missing: tuple[str, ...]
    reason_missing_adj: tuple[str, ...]
    reason_price_unknown: tuple[str, ...]
    extra_leads: tuple[str, ...]
    compare_asks: tuple[str, ...]
    priority: tuple[str, ...]
    accept: dict[str, tuple[str, ...]]
    # system side
    ask: dict[str, tuple[str, ...]]
    ask_leads: tuple[str, ...]
    persona_nods: tuple[str, ...]
    rec_openers: tuple[str, ...]
    after_reject: tuple[str, ...]
    after_revision: tuple[str, ...]
    facts: tuple[str, ...]
    quote_intros: tuple[str, ...]
    quote_same: tuple[str, ...]
    quote_adds: tuple[str, ...]
    claim_evidence: tuple[str, ...]
    claim_evidence_adj: tuple[str, ...]
    claim_attr: tuple[str, ...]
    claim: dict[str, tuple[str, ...]]
    claim_join: tuple[str, ...]
    claim_leads: tuple[str, ...]
    rec_closers: tuple[str, ...]
    compare_openers: tuple[str, ...]
    compare_both_fit: tuple[str, ...]
    compare_miss_explicit: tuple[str, ...]
    compare_miss_evidence: tuple[str, ...]
    compare_miss_evidence_adj: tuple[str, ...]
    violation: dict[str, tuple[str, ...]]
    verdict_strong: tuple[str, ...]
    verdict_tie: tuple[str, ...]
    verdict_both: tuple[str, ...]
    farewells: dict[str, tuple[str, ...]]
    farewell_context: tuple[str, ...]


@functools.cache
def bank() -> Phrases:
    """The paraphrase grammar, read from phrases.json once."""
    table = read_table(PHRASES_FILE)
    table["radius_phrases"] = {float(k): v for k, v in table["radius_phrases"].items()}
    return Phrases(**table)
