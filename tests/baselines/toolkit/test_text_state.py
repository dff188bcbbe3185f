from __future__ import annotations

from baselines.toolkit.state import dialogue_state, find_mentions, rejected_pois
from baselines.toolkit.text import STOP_WORDS, content_tokens, query_terms, tokenize, user_query
from tests.support.baselines import row, turn


def test_stop_list_has_80_words_all_lowercase_single_tokens():
    assert len(STOP_WORDS) == 80
    assert all(w == w.lower() and tokenize(w) == [w] for w in STOP_WORDS)


def test_tokenize_and_content_tokens():
    assert tokenize("Gluten-free PIZZA, isn't it?") == ["gluten", "free", "pizza", "isn", "t", "it"]
    # stop words and one-character tokens go; content words stay, order kept
    assert content_tokens("The quiet cafe and a very cozy patio, near the B&B") == [
        "quiet",
        "cafe",
        "very",
        "cozy",
        "patio",
        "near",
    ]


def test_query_is_all_user_turns_so_far_in_order():
    history = [
        turn(0, "user", "greet_and_seek", "Seafood please"),
        turn(1, "system", "ask_preference", "Budget? seafood is pricey"),
        turn(2, "user", "provide_preference", "Cheap seafood, quiet"),
    ]
    assert user_query(history) == "Seafood please\nCheap seafood, quiet"
    assert query_terms(user_query(history)) == ["seafood", "please", "cheap", "quiet"]


NAMES = {"p_sea": "Harbor Fish House", "p_veg": "Green Leaf Kitchen", "p_bbq": "Smoky Pit BBQ"}


def test_state_price_latest_mention_sets_the_ceiling():
    h = [
        turn(0, "user", "greet_and_seek", "Something cheap, nothing upscale"),
        turn(1, "system", "ask_preference", "luxury?"),  # system words never count
        turn(2, "user", "provide_preference", "Actually mid-range is fine, even moderate."),
    ]
    s = dialogue_state(row(h), NAMES)
    assert s.price_words == ("cheap", "upscale", "mid-range", "moderate")
    assert s.price_ceiling == 3
    assert dialogue_state(row(h[:1]), NAMES).price_ceiling == 4  # "upscale" comes after "cheap"
    assert (
        dialogue_state(row([turn(0, "user", "greet_and_seek", "budgetary cheapness")]), NAMES).price_ceiling
        is None
    )


def test_state_anchor_latest_landmark_of_the_city_without_leading_the():
    h = [
        turn(0, "user", "greet_and_seek", "We stay near Old City"),
        turn(2, "user", "provide_preference", "or maybe close to art museum, or fishtown"),
    ]
    s = dialogue_state(row(h), NAMES)
    assert s.anchor == "Fishtown" and s.anchor_coords == (39.9710, -75.1340)
    s2 = dialogue_state(row(h[:1]), NAMES)
    assert s2.anchor == "Old City"
    # a landmark of another city is not an anchor here
    assert (
        dialogue_state(row([turn(0, "user", "greet_and_seek", "near the French Quarter")]), NAMES).anchor
        is None
    )


def test_state_aspects_whole_word_first_mention_order():
    h = [
        turn(0, "user", "greet_and_seek", "Quiet, cozy, with outdoor seating and wifi. Quiet!"),
        turn(2, "user", "provide_preference", "pet-friendly too; no pooling"),
    ]
    assert dialogue_state(row(h), NAMES).aspects == (
        "quiet",
        "cozy",
        "outdoor seating",
        "wifi",
        "pet-friendly",
    )


def test_rejections_from_row_names_and_fallback():
    h = [
        turn(0, "user", "greet_and_seek", "Seafood"),
        turn(1, "system", "recommend", "Try Smoky Pit BBQ", refs=("p_bbq",)),
        turn(2, "user", "reject_and_refine", "No thanks, something else."),  # names nothing: fallback
        turn(3, "system", "recommend", "Try Harbor Fish House", refs=("p_sea",)),
        turn(4, "user", "reject_and_refine", "Not harbor fish house, too loud."),  # a name mention
        turn(5, "system", "recommend", "Green Leaf Kitchen", refs=("p_veg",)),
        turn(6, "user", "accept", "Green Leaf Kitchen sounds good"),
    ]  # not a rejection
    r = row(h, rejected=("p_caf",))
    assert rejected_pois(r, NAMES) == ["p_caf", "p_bbq", "p_sea"]
    s = dialogue_state(r, NAMES)
    assert s.rejected_poi_ids == ("p_caf", "p_bbq", "p_sea")
    assert s.after_rejection is False
    assert dialogue_state(row(h[:5]), NAMES).after_rejection is True


def test_rejection_with_referenced_ids_does_not_fall_back():
    h = [
        turn(1, "system", "compare", "A or B", refs=("p_bbq", "p_sea")),
        turn(2, "user", "reject_and_refine", "Neither of those.", refs=("p_sea",)),
    ]
    # the row carries p_sea (referenced); the fallback must not add p_bbq
    assert rejected_pois(row(h, rejected=("p_sea",)), NAMES) == ["p_sea"]


def test_mentions_are_cached_but_every_caller_gets_its_own_list():
    first = find_mentions("Quiet patio, great view and a quiet room", ("quiet", "view", "great view"))
    assert first == [(0, "quiet"), (13, "great view"), (30, "quiet")]
    first.clear()
    assert find_mentions("Quiet patio, great view and a quiet room", ["quiet", "view", "great view"]) == [
        (0, "quiet"),
        (13, "great view"),
        (30, "quiet"),
    ]
