"""The LLM baselines' prompt files and prompt blocks: POI cards, history, citations of a response (the file
format itself: tests/trace_llm/test_prompts.py)."""

from __future__ import annotations

from baselines import BASELINES, LLM_BASELINES, identity
from baselines.llm.prompting import (
    PROMPTS_DIR,
    LabelMap,
    candidate_labels,
    clip,
    format_history,
    load_prompt,
    poi_cards,
    response_citations,
)

ACTIONS = ("ask_preference", "recommend", "compare", "farewell")


def test_every_baseline_has_its_prompt_file_with_the_sections_it_renders():
    files = {p.stem for p in PROMPTS_DIR.glob("*.txt")}
    for name in LLM_BASELINES:
        cls = BASELINES[name]
        assert name in files and identity(name).family == "LLM" and cls.name == name
        prompt = load_prompt(name)
        assert prompt.describe() == {"file": f"{name}.txt", "sha256": prompt.sha256}
        assert set(ACTIONS) <= set(prompt.sections)
    assert {"extract_system", "extract_user", "respond_system", "respond_user", "no_candidates"} <= set(
        load_prompt("dst").sections
    )
    assert "retry" in load_prompt("rag_citation").sections


def test_clip_cuts_at_a_word_boundary():
    assert clip("a  b\nc", 10) == "a b c"
    assert clip("alpha beta gamma", 11) == "alpha beta…"
    assert clip("abcdefghij", 4) == "abcd…"


def test_history_lines():
    history = [{"role": "user", "text": "Hi\nthere"}, {"role": "system", "text": "Hello"}]
    assert format_history(history) == "Traveler: Hi there\nRecommender: Hello"
    assert "not said anything" in format_history([])


def test_cards_number_reviews_across_the_prompt(kb):
    labels = LabelMap()
    cards = poi_cards(kb, candidate_labels(["p_veg", "p_sea"]), labels, reviews_per_poi=1, review_chars=30)
    lines = cards.splitlines()
    assert lines[0].startswith("P1. Green Leaf Kitchen - Vegan, Restaurants - 4.5 stars (10 reviews) - $$")
    assert lines[1].startswith("  [R1] (5 stars) The vegan bowls are fresh and")
    assert lines[1].endswith("…")
    assert lines[2].startswith("P2. Harbor Fish House") and lines[3].startswith("  [R2] ")
    assert labels.review_ids == {"R1": "r_p_veg_0", "R2": "r_p_sea_0"}


def test_citations_are_the_prompt_labels_the_response_uses():
    labels = {"R1": "a", "R2": "b"}
    cited, unknown = response_citations('"x" [R2] and "y" [R7], again [R2] [R01]', labels)
    assert cited == {"R2": "b", "R1": "a"}
    assert unknown == ["R7"]
