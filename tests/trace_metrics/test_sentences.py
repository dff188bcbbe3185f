"""Sentence splitting and the calibration-audit categories (App. L)."""

from __future__ import annotations

import pytest

from trace_metrics.lib.sentences import CATEGORIES, categorize, claim_text, split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("   \n\n  ", []),
        ("One sentence without a full stop", ["One sentence without a full stop"]),
        ("First one. Second one! Third one? Fourth.", ["First one.", "Second one!", "Third one?", "Fourth."]),
        # a quote with inner sentences stays whole; the label stays with the sentence it cites
        (
            'A reviewer said "Great food. Loved it." [R1] Then we left.',
            ['A reviewer said "Great food. Loved it." [R1]', "Then we left."],
        ),
        (
            "\u201cCozy spot. Nice staff.\u201d [R2] Worth it.",
            ["\u201cCozy spot. Nice staff.\u201d [R2]", "Worth it."],
        ),
        ("Try Joe's Diner [R1]. It is cheap.", ["Try Joe's Diner [R1].", "It is cheap."]),
        # abbreviations, initials and decimals do not end sentences
        (
            "Dr. Smith runs it on St. Charles Ave. near J. Smith Park.",
            ["Dr. Smith runs it on St. Charles Ave. near J. Smith Park."],
        ),
        (
            "It has 4.5 stars. Go early, e.g. before noon.",
            ["It has 4.5 stars.", "Go early, e.g. before noon."],
        ),
        # line breaks end sentences; list markers stay with their item; symbol-only lines are dropped
        (
            "Here are two options:\n1. Cafe A is cozy.\n2. Cafe B is loud.\n---",
            ["Here are two options:", "1. Cafe A is cozy.", "2. Cafe B is loud."],
        ),
        # lower-case continuation is not a new sentence
        ("Great place. really great.", ["Great place. really great."]),
        ("Wow... Nice view.", ["Wow...", "Nice view."]),
    ],
)
def test_split_sentences(text, expected):
    assert split_sentences(text) == expected


def test_split_keeps_all_text():
    text = 'I recommend Cafe A [R1]. The beignets are "hot. fresh." [R1] It is rated 4.5 stars!\nEnjoy.'
    assert "".join(split_sentences(text)).replace(" ", "") == text.replace(" ", "").replace("\n", "")


@pytest.mark.parametrize(
    ("sentence", "category"),
    [
        ('The patio is "quiet and cozy" [R2].', "Quote"),
        (
            'I recommend it, one reviewer said "best tacos in town" and it has 5 stars.',
            "Quote",
        ),  # Quote first
        ("It has a 4.5-star rating.", "Rating-meta"),
        ("Rated 4/5 by guests.", "Rating-meta"),
        ("The price range is $$.", "Rating-meta"),
        ("I'd suggest Cafe Du Monde.", "Framing"),
        ("Here are two options for you.", "Framing"),
        ("You might enjoy the rooftop bar.", "Framing"),
        ("Both are great choices for a date night.", "Framing"),
        ("Would you prefer something closer to downtown?", "Framing"),
        ("The rooftop overlooks the river.", "Other-claim"),
        ("Breakfast is served until noon.", "Other-claim"),
    ],
)
def test_categorize(sentence, category):
    assert categorize(sentence) == category
    assert category in CATEGORIES


def test_claim_text_strips_labels_and_markdown():
    assert claim_text('**Cafe A** serves "fresh beignets" [R1] [R2].') == 'Cafe A serves "fresh beignets".'
    assert claim_text("- It is quiet [R3].") == "It is quiet."
    assert claim_text("[R1]") == ""
