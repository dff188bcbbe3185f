"""Query snippets (§3.2): the deterministic rules, the C.2 reply parser, rejections, expansion, prompts."""

from __future__ import annotations

import hashlib

import pytest

from baselines.sniprec.prompts import PROMPT_DIR, PROMPT_NAMES, first_line, prompt_hashes, render
from baselines.sniprec.queries import (
    OPENING_QUESTION,
    QUERY_SCHEMA,
    QueryExtractor,
    QuerySnippet,
    exchanges,
    expansion_snippets,
    format_intents,
    parse_intents,
    rejection_dislikes,
    rules_query_snippets,
)
from tests.support.sniprec import CANDIDATES, turn
from trace_llm.jsonout import parse_json_output


def snips(text, known=()):
    return [(q.sign, q.text) for q in rules_query_snippets(text, known)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I want a lively spot with good music and maybe outdoor seating. I'm not into anything too formal.",
            [(1, "a lively spot with good music"), (1, "maybe outdoor seating"), (-1, "anything too formal")],
        ),
        ("Easy parking matters most to me. What would be the closest alternative?", [(1, "Easy parking")]),
        ("this place is too loud, anything cozy?", [(-1, "loud"), (1, "anything cozy")]),
        (
            "Hmm, this place isn't quite right. There's no sign of breakfast on site. Breakfast on site would make it "
            "for me.",
            [(1, "Breakfast on site")],
        ),
        ("I'm not specifically looking for desserts.", []),
        ("Parking isn't really an issue for me. I'm just looking for a cozy cafe.", [(1, "a cozy cafe")]),
        ("Okay, this place could work. Is there anything to set beside it?", []),
        ("Good question. Please make sure it has step-free access.", [(1, "step-free access")]),
    ],
)
def test_rules_query_snippets(text, expected):
    assert snips(text) == expected


def test_known_intents_are_not_repeated():
    assert snips("Easy parking, and brunch.", known=["easy parking"]) == [(1, "brunch")]


def test_exchanges_pair_each_user_turn_with_its_question_and_generalise_rejected_names():
    history = [
        turn(0, "user", "greet_and_seek", "Seafood please."),
        turn(1, "system", "recommend", "Try Harbor Fish House.", refs=("p_sea",)),
        turn(2, "user", "reject_and_refine", "Harbor Fish House is too loud."),
        turn(3, "system", "recommend", "Smoky Pit BBQ?", refs=("p_bbq",)),
        turn(4, "user", "reject_and_refine", "No, not that one."),
    ]
    names = {"p_sea": "Harbor Fish House", "p_bbq": "Smoky Pit BBQ"}
    exs = exchanges(history, "restaurant", names)
    assert [(e.turn_id, e.question, e.text, e.rejected) for e in exs] == [
        (0, OPENING_QUESTION.format(noun="restaurant"), "Seafood please.", ()),
        (2, "Try Harbor Fish House.", "this place is too loud.", ("p_sea",)),
        (4, "Smoky Pit BBQ?", "No, not that one.", ("p_bbq",)),  # the fallback: the POI offered just before
    ]


def test_rejection_dislikes_take_the_distinctive_categories(kb):
    got = rejection_dislikes(kb, "p_sea", CANDIDATES)
    assert got == [
        QuerySnippet("This place is categorized as Seafood.", -1, "rejection")
    ]  # not "Restaurants"


def test_the_c2_reply_parser_on_recorded_outputs():
    reply = (
        'Sure! ```json\n[{"prop": "the place is lively", "sentiment": "preference"}, '
        '{"prop": "the place is too formal", "sentiment": "dislike"}, '
        '{"prop": "  the place has good music ", "sentiment": "preference"}]\n```'
    )
    value = parse_json_output(reply, QUERY_SCHEMA)
    known = [QuerySnippet("the place has good music", 1)]
    assert parse_intents(value, known) == [
        QuerySnippet("the place is lively", 1),
        QuerySnippet("the place is too formal", -1),
    ]
    assert parse_intents(parse_json_output("[]", QUERY_SCHEMA)) == []


def test_known_intents_are_shown_as_in_the_paper():
    assert format_intents([]) == "None"
    assert format_intents(
        [
            QuerySnippet("this place is a cafe.", 1),
            QuerySnippet("the atmosphere is cozy.", 1),
            QuerySnippet("it is noisy.", -1),
        ]
    ) == (
        "\n - preference\n   - this place is a cafe.\n   - the atmosphere is cozy.\n - dislike\n   - it is noisy."
    )


def test_expansion_keeps_the_sign_except_for_the_opposite():
    got = expansion_snippets(
        "service is prompt",
        1,
        {
            "paraphrase": "the service is quick",
            "support": "food arrives within minutes",
            "opposite": "wait time is long",
        },
    )
    assert [(q.sign, q.text, q.origin) for q in got] == [
        (1, "the service is quick", "paraphrase"),
        (1, "food arrives within minutes", "support"),
        (-1, "wait time is long", "opposite"),
    ]
    got = expansion_snippets(
        "it is noisy", -1, {"paraphrase": "It is noisy", "support": "", "opposite": "it is calm"}
    )
    assert [(q.sign, q.text) for q in got] == [(1, "it is calm")]  # echo and empty reply dropped
    with pytest.raises(ValueError, match="expansion"):
        QueryExtractor(None, expansion=True)


def test_rules_extraction_runs_per_dialogue_depth_with_known_intents():
    history = [
        turn(0, "user", "greet_and_seek", "Brunch and easy parking."),
        turn(1, "system", "ask_preference", "Anything else?"),
        turn(2, "user", "provide_preference", "Easy parking, and outdoor seating."),
    ]
    exs = exchanges(history, "restaurant", {})
    out = QueryExtractor().extract([(exs, "restaurant")])
    assert [[q.text for q in s] for s, _ in out[0]] == [["Brunch", "easy parking"], ["outdoor seating"]]
    assert not any(failed for _, failed in out[0])


def test_prompts_render_their_fields_and_are_hashed():
    messages = render(
        "query_snippets", "hotel", question="Budget?", response="Cheap {please}", intents="None"
    )
    assert messages[0] == {"role": "system", "content": "You are a helpful assistant."}
    user = messages[1]["content"]
    assert '- Response: "Cheap {please}"' in user and "hotel recommendations" in user
    assert '{"prop": "the place is lively", "sentiment": "preference"}' in user  # few-shot JSON left alone
    with pytest.raises(TypeError, match="takes fields"):
        render("clarify", "hotel", question="x")
    hashes = prompt_hashes()
    assert set(hashes) == {f"{n}.txt" for n in PROMPT_NAMES} | {"prompts.json"}
    assert hashes["clarify.txt"] == hashlib.sha256((PROMPT_DIR / "clarify.txt").read_bytes()).hexdigest()


def test_item_snippet_prompt_keeps_app_c1_as_printed():
    """C.1's instruction, restored whole: the topic and attitude clause (its examples and our JSON answer stay
    a list of sentences)."""
    system = render("item_snippets", "restaurant", review="Good.")[0]["content"]
    assert (
        "related to a specific aspect of the restaurant, and subsequently you also need to (1) identify the "
        "topic of each atomic sentence and (2) the attitude towards the restaurant in terms of this "
        "proposition. The topics should be the aspects relevant to restaurant domains."
    ) in system
    hotel = render("item_snippets", "hotel", review="Good.")[0]["content"]
    assert "the attitude towards the hotel in terms of this proposition" in hotel


@pytest.mark.parametrize(
    ("reply", "line"),
    [
        (
            "Recommender: What kind of cuisine do you enjoy?\nSeeker: ...",
            "What kind of cuisine do you enjoy?",
        ),
        ('\n\n"The food truck is recommended."', "The food truck is recommended."),
        ("```\nThis place lacks sweet options.\n```", "This place lacks sweet options."),
        ("   \n", ""),
    ],
)
def test_first_line_of_plain_replies(reply, line):
    assert first_line(reply) == line
