"""Template responses: every action, verbatim quotes, labels, the quote-choice rule."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from baselines import BASELINES, NON_LLM_BASELINES, pipeline
from baselines.toolkit.responses import Citations, EvidenceIndex
from tests.support.baselines import REST, SMALL_POIS, poi, row, turn, write_kb
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.quotes import CITATION_LABEL_RE, extract_quotes

MINE = ("popularity", "tfidf", "spatial", "itinerary")
ACTIONS = ("ask_preference", "recommend", "compare", "farewell")


def assert_grounded(pred: dict, kb: KnowledgeBase) -> None:
    """Every quote is a substring of a cited review; every label used is in citations and vice versa."""
    text = pred["response"]
    cited = [kb.review_text(rid) for rid in pred["citations"].values()]
    quotes = extract_quotes(text)
    for q in quotes:
        assert any(q.text in c for c in cited), (q.text, text)
        assert len(q.text.split()) <= 20
    labels = {f"R{n}" for n in (int(m.group(1)) for m in CITATION_LABEL_RE.finditer(text))}
    assert labels == set(pred["citations"])
    assert len(quotes) == len(CITATION_LABEL_RE.findall(text))  # one label per quote
    for label, rid in pred["citations"].items():
        # the label right after a quote cites a review holding that quote
        for q in quotes:
            after = text[q.end + 1 : q.end + 3 + len(label)]
            if after.strip() == f"[{label}]":
                assert q.text in kb.review_text(rid)


@pytest.mark.parametrize("name", MINE)
@pytest.mark.parametrize("action", ACTIONS)
def test_every_action_is_answered_and_grounded(small_kb, name, action):
    # Popularity ignores the dialogue, rejections included, unless asked (App. N "no adaptation")
    p = pipeline(name, kb=small_kb, **({"drop_rejected": True} if name == "popularity" else {}))
    h = [
        turn(0, "user", "greet_and_seek", "Fresh seafood and oysters near Old City, something cheap."),
        turn(1, "system", "recommend", "Try Smoky Pit BBQ.", refs=("p_bbq",)),
        turn(2, "user", "reject_and_refine", "Not Smoky Pit BBQ, too loud. Something quiet?"),
    ]
    pred = next(iter(p([row(h, action)])))
    assert pred["response"]
    assert "p_bbq" not in pred["ranked_poi_ids"]
    assert_grounded(pred, small_kb)
    if action == "farewell":
        assert pred["ranked_poi_ids"] == [] and pred["citations"] == {}
    else:
        assert sorted(pred["ranked_poi_ids"]) == ["p_caf", "p_sea", "p_veg"]
    if action in ("recommend", "compare"):
        assert pred["citations"], "recommend/compare turns quote evidence"
        assert pred["response"].startswith("Understood, Smoky Pit BBQ is off the list.")
    if action == "compare":
        top2 = pred["ranked_poi_ids"][:2]
        names = {p["business_id"]: p["name"] for p in SMALL_POIS}
        assert names[top2[0]] in pred["response"] and names[top2[1]] in pred["response"]
    if action == "ask_preference":
        assert pred["response"].endswith("?") and pred["citations"] == {}


def test_ask_preference_asks_only_what_is_missing(small_kb):
    p = pipeline("tfidf", kb=small_kb)

    def ask(text):
        return next(iter(p([row([turn(0, "user", "greet_and_seek", text)], "ask_preference")])))["response"]

    assert "your budget" in ask("seafood please") and "part of town" in ask("seafood please")
    assert "your budget" not in ask("cheap seafood") and "part of town" in ask("cheap seafood")
    assert "part of town" not in ask("cheap seafood near Fishtown")
    assert "what matters most" in ask("cheap seafood near Fishtown")


def test_no_candidates_left(small_kb):
    p = pipeline("tfidf", kb=small_kb)
    pred = next(
        iter(
            p(
                [
                    row(
                        [turn(0, "user", "greet_and_seek", "x")],
                        "recommend",
                        candidates=("p_sea",),
                        rejected=("p_sea",),
                    )
                ]
            )
        )
    )
    assert pred["ranked_poi_ids"] == [] and pred["citations"] == {} and "relax" in pred["response"]


def test_quote_rule_prefers_query_overlap_then_stars_then_order(tmp_path):
    reviews = {
        "q1": [
            ("Terrible service. Cold soup and rude staff everywhere tonight.", 1.0),
            ("Great ramen bowls. The broth was rich and the noodles chewy!", 5.0),
            ("Okay place. Ramen was fine and the broth was rich enough for me.", 3.0),
        ]
    }
    kb = KnowledgeBase.load(write_kb(tmp_path / "kb", [poi("q1", "Q One")], reviews))
    ev = EvidenceIndex(kb)
    best = ev.best("q1", ["ramen", "broth", "rich"])
    assert (best.review_id, best.span) == ("r_q1_2", "Ramen was fine and the broth was rich enough for me.")
    assert best.overlap == 3
    # no overlap anywhere: the best-starred review's first usable sentence ("Great ramen bowls." has 3 words,
    # fewer than min_words=4)
    fallback = ev.best("q1", ["pizza"])
    assert (fallback.review_id, fallback.span) == ("r_q1_1", "The broth was rich and the noodles chewy!")
    two = ev.evidence("q1", ["ramen", "broth", "rich"], n=2)
    assert [e.review_id for e in two] == ["r_q1_2", "r_q1_1"]  # different reviews
    for e in two:
        assert kb.review_text(e.review_id)[e.start : e.end] == e.span


def test_long_sentences_use_the_best_window(tmp_path):
    words = [f"w{i}" for i in range(40)]
    words[30] = "lobster"
    reviews = {"q1": [" ".join(words) + "."]}
    kb = KnowledgeBase.load(write_kb(tmp_path / "kb", [poi("q1", "Q")], reviews))
    ev = EvidenceIndex(kb, max_words=10).best("q1", ["lobster"])
    assert ev.span.split()[0] == "w21" and "lobster" in ev.span and len(ev.span.split()) == 10


def test_citations_reuse_labels():
    c = Citations()
    assert [c.cite("a"), c.cite("b"), c.cite("a")] == ["R1", "R2", "R1"]
    assert c.mapping == {"R1": "a", "R2": "b"}


_texts = st.text(
    alphabet=st.sampled_from(list('abc xyz.!?,"\u201c\u201d\n[]R1:;-')), min_size=0, max_size=200
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(_texts, min_size=1, max_size=4), terms=st.lists(st.sampled_from(["abc", "xyz", "ab"])))
def test_spans_are_always_verbatim_and_quote_safe(tmp_path_factory, texts, terms):
    root = tmp_path_factory.mktemp("kb")
    kb = KnowledgeBase.load(write_kb(root, [poi("q1", "Q")], {"q1": texts}))
    ev = EvidenceIndex(kb, max_words=6, min_words=2)
    for e in ev.evidence("q1", terms, n=4):
        text = kb.review_text(e.review_id)
        assert text[e.start : e.end] == e.span and e.span
        assert not any(ch in e.span for ch in '"\u201c\u201d\n')
        assert 2 <= len(e.span.split()) <= 6  # words: whitespace-separated runs of the trimmed span
        assert e.span == e.span.strip() and e.span[-1] not in ",;:-([{" and e.span[0] not in ",;:-)]}("
        assert extract_quotes(f'says "{e.span}" [R1]')[0].text == e.span


def _best_by_reading_every_piece(ev: EvidenceIndex, poi_id: str, terms, excluded=()) -> tuple | None:
    """The quote rule as the module docstring states it: the smallest (-overlap, -stars, review, piece)."""
    keyed = []
    for j, piece in enumerate(ev.pieces(poi_id)):
        if piece.review_id not in excluded:
            overlap, start, end = ev._best_window(piece, frozenset(terms))
            keyed.append(
                ((-overlap, -piece.stars, piece.review_pos, j), (piece.review_id, start, end, overlap))
            )
    return min(keyed)[1] if keyed else None


_reviews = st.lists(
    st.tuples(
        st.lists(
            st.sampled_from(
                [
                    "ramen broth",
                    "rich quiet",
                    "cozy view",
                    "the staff was",
                    "ramen",
                    "view.",
                    "quiet room!",
                    "broth\n",
                    "x y z w",
                ]
            ),
            min_size=0,
            max_size=12,
        ).map(" ".join),
        st.sampled_from([1.0, 3.0, 4.0, 5.0]),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    reviews=_reviews,
    terms=st.lists(st.sampled_from(["ramen", "broth", "rich", "quiet", "cozy", "view", "staff"]), max_size=5),
    n_excluded=st.integers(0, 2),
)
def test_best_skips_reviews_without_changing_the_choice(tmp_path_factory, reviews, terms, n_excluded):
    """`best` cuts only reviews that could beat the best piece so far; the choice is the full rule's."""
    kb = KnowledgeBase.load(write_kb(tmp_path_factory.mktemp("kb"), [poi("q1", "Q")], {"q1": reviews}))
    excluded = {r.review_id for r in kb.reviews_of("q1")[:n_excluded]}
    ev = EvidenceIndex(kb, max_words=5, min_words=2)
    got = ev.best("q1", terms, excluded)
    want = _best_by_reading_every_piece(EvidenceIndex(kb, max_words=5, min_words=2), "q1", terms, excluded)
    assert (None if got is None else (got.review_id, got.start, got.end, got.overlap)) == want


MODEL_BACKED = ("dense", "hybrid_rrf")  # load a sentence-transformer: the slow variant below covers them


def test_registry_contract_for_all_present_baselines(small_kb):
    """Every non-LLM baseline present answers every action with grounded quotes and excludes rejections (the LLM
    baselines and the other papers' systems need a model: tests/llm_baselines, tests/sniprec, tests/collab_rec)."""
    _check_contract(small_kb, [n for n in BASELINES if n in NON_LLM_BASELINES and n not in MODEL_BACKED])


@pytest.mark.slow
def test_registry_contract_for_model_backed_baselines(small_kb):
    names = [n for n in BASELINES if n in MODEL_BACKED]
    if not names:
        pytest.skip("no model-backed baseline present")
    _check_contract(small_kb, names)


def _check_contract(small_kb, names):
    h = [
        turn(0, "user", "greet_and_seek", "Vegan food, quiet and cozy, near Rittenhouse Square."),
        turn(1, "system", "recommend", "Try Green Leaf Kitchen.", refs=("p_veg",)),
        turn(2, "user", "reject_and_refine", "Not that one, something with seafood.", refs=("p_veg",)),
    ]
    for name in names:
        # Popularity ignores the dialogue, rejections included, unless asked (App. N "no adaptation")
        p = pipeline(name, kb=small_kb, **({"drop_rejected": True} if name == "popularity" else {}))
        for action in ACTIONS:
            pred = next(iter(p([row(h, action, candidates=REST, rejected=("p_veg",))])))
            assert "p_veg" not in pred["ranked_poi_ids"], name
            assert set(pred["ranked_poi_ids"]) <= set(REST), name
            assert_grounded(pred, small_kb)
