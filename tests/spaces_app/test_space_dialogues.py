"""The dialogue browser's logic: picking, quotes linked to review spans, baseline answers with their scores."""

from __future__ import annotations

import copy
import re

import pytest

from spaces_app.browser import TURN_SCORES, DialogueIndex
from trace_dataset.quotes import extract_quotes
from trace_metrics.lib.suite import evaluate_run


@pytest.fixture(scope="module")
def index(space_world) -> DialogueIndex:
    return DialogueIndex(space_world["data"], "test", space_world["runs"])


def test_picking_by_city_type_tier_and_id(index):
    all_ids = index.ids()
    assert len(all_ids) == len(index.dialogues) > 0
    d = index.dialogues[all_ids[0]]
    s = d["scenario"]
    picked = index.ids(s["city"], s["poi_type"], s["difficulty"])
    assert d["dialogue_id"] in picked
    assert all(
        index.dialogues[i]["scenario"]["city"] == s["city"]
        and index.dialogues[i]["scenario"]["poi_type"] == s["poi_type"]
        and index.dialogues[i]["scenario"]["difficulty"] == s["difficulty"]
        for i in picked
    )
    assert index.ids(query=d["dialogue_id"][-5:].upper()) == [d["dialogue_id"]]
    assert index.ids(city="Atlantis") == []
    label, value = index.choices([d["dialogue_id"]])[0]
    assert value == d["dialogue_id"] and s["city"] in label and s["difficulty"] in label
    turns = index.system_turns(d["dialogue_id"])
    assert [t for _, t in turns] == [t["turn_id"] for t in d["turns"] if t["role"] == "system"]
    assert index.default_turn(d["dialogue_id"]) == next(
        t["turn_id"] for t in d["turns"] if t["action"] in ("recommend", "compare")
    )


def test_every_quote_is_highlighted_and_linked_to_its_review_span(index):
    checked = 0
    for did in index.ids()[:10]:
        d = index.dialogues[did]
        page = index.render_dialogue(did)
        quotes = [q.text for t in d["turns"] for q in extract_quotes(t["text"])]
        marks = re.findall(
            r'<a href="#trace-q(\d+)"[^>]*><mark class="trace-quote"[^>]*>(.*?)</mark></a>', page
        )
        assert [int(n) for n, _ in marks] == list(range(1, len(quotes) + 1))
        for (n, shown), span in zip(marks, d["quote_spans"], strict=True):
            block = re.search(
                rf'<div class="trace-review" id="trace-q{n}" data-review-id="([^"]+)">.*?'
                r'<mark class="trace-span">(.*?)</mark>',
                page,
                re.S,
            )
            assert block is not None, f"quote {n} of {did} has no review span block"
            assert block.group(1) == span["review_id"]
            assert block.group(2) == shown  # the highlighted span of the review is the quoted text
            assert index.kb.reviews[span["review_id"]].text[span["start"] : span["end"]] == quotes[int(n) - 1]
            checked += 1
    assert checked > 0


def test_text_is_escaped(index):
    did = index.ids()[0]
    evil = copy.deepcopy(index.dialogues[did])
    evil["turns"][0]["text"] = '<script>alert(1)</script> <img src=x onerror=alert(2)> "a <b>quote</b>"'
    evil["scenario"]["persona"] = "<iframe src=//evil>"
    local = copy.copy(index)
    local.dialogues = {did: evil}
    page = local.render_dialogue(did)
    assert "<script>" not in page and "<img" not in page and "<iframe" not in page and "<b>quote" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_unhydrated_release_text_shows_placeholders(index):
    did = index.ids()[0]
    d = copy.deepcopy(index.dialogues[did])
    n = 0
    for t in d["turns"]:
        for q in reversed(extract_quotes(t["text"])):
            t["text"] = t["text"][: q.start] + "[Q:0]" + t["text"][q.end :]
        count = t["text"].count("[Q:0]")
        for _ in range(count):
            n += 1
            t["text"] = t["text"].replace("[Q:0]", f"[Q:{n}]", 1)
    local = copy.copy(index)
    local.dialogues = {did: d}
    page = local.render_dialogue(did)
    assert page.count('class="trace-quote unhydrated"') == n == len(d["quote_spans"]) > 0
    assert f'href="#trace-q{n}"' in page


def test_answers_show_each_baseline_with_the_metric_librarys_per_turn_scores(index, space_world):
    assert sorted(index.runs) == ["Popularity", "TF-IDF"]
    result = evaluate_run(space_world["data"], space_world["runs"] / "tfidf.jsonl", with_std=False)
    rec = result["per_item"]["recommendation_turns"]
    system = result["per_item"]["system_turns"]
    checked = 0
    for i in range(0, len(rec["dialogue_id"]), 7):
        did, tid = rec["dialogue_id"][i], rec["turn_id"][i]
        turn = next(t for t in index.dialogues[did]["turns"] if t["turn_id"] == tid)
        scores = index.turn_scores(turn, index.runs["TF-IDF"][(did, tid)])
        for metric in (
            "hit@1",
            "hit@3",
            "mrr",
            "grounding_score",
            "citation_density",
            "provenance_coverage",
            "cgs",
        ):
            # a turn's CGS is an item of the per-turn mean (the headline cgs is the formula of the means)
            item = "cgs_turn_mean" if metric == "cgs" and "cgs_turn_mean" in rec else metric
            if rec[item][i] is None:
                assert metric not in scores
            else:
                assert scores[metric] == pytest.approx(rec[item][i]), (did, tid, metric)
        j = next(
            k
            for k in range(len(system["dialogue_id"]))
            if (system["dialogue_id"][k], system["turn_id"][k]) == (did, tid)
        )
        assert (scores["bleu4"], scores["rouge_l"]) == pytest.approx(
            (system["bleu4"][j], system["rouge_l"][j])
        )
        checked += 1
    assert checked > 3
    did = rec["dialogue_id"][0]
    page = index.render_predictions(did, rec["turn_id"][0])
    assert page.count('class="trace-turn system trace-answer"') == 2
    assert 'data-system="Popularity"' in page and 'data-system="TF-IDF"' in page
    for label in ("Hit@1", "RR", "GS", "CGS", "BLEU-4"):
        assert label in page
    assert set(TURN_SCORES) <= set(result["values"]) | {"hit@1", "hit@3"}


def test_non_recommendation_turns_have_text_scores_only(index):
    did = index.ids()[0]
    turn = next(
        t for t in index.dialogues[did]["turns"] if t["role"] == "system" and t["action"] == "ask_preference"
    )
    scores = index.turn_scores(turn, index.runs["TF-IDF"][(did, turn["turn_id"])])
    assert set(scores) == {"bleu4", "rouge_l"}
    assert index.render_predictions(did, 10_000) == "" and index.render_predictions("nope", 1) == ""


def test_without_runs(space_world):
    bare = DialogueIndex(space_world["data"], "test", None)
    did = bare.ids()[0]
    assert "No baseline runs loaded" in bare.render_predictions(did, bare.default_turn(did))
