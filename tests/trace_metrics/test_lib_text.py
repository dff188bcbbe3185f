"""Text metrics: exact agreement with nltk (BLEU-4, method1) and rouge-score (ROUGE-L F1)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from rouge_score import rouge_scorer, tokenize

from trace_metrics.lib import text
from trace_metrics.lib.tokenize import bleu_tokens, rouge_tokens

SMOOTH = SmoothingFunction(epsilon=0.1).method1
SCORERS = {stem: rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stem) for stem in (False, True)}

# a test corpus: system/reference turn pairs of the kinds Trace has (quotes, labels, punctuation, repeats)
CORPUS = [
    (
        'Try Gumbo House [R1]: "The seafood gumbo was rich and smoky" [R1]. It is cheap.',
        'Gumbo House fits: one reviewer says "The seafood gumbo was rich and smoky" [R1].',
    ),
    ("What kind of food are you in the mood for?", "Do you prefer a quiet spot or a lively one?"),
    ("Enjoy your trip!", "Enjoy your dinner at Bayou Grill!"),
    ("the the the the the the the", "the cat is on the mat"),
    ("", "Have a great evening."),
    ("Have a great evening.", ""),
    ("Bayou Grill", "Bayou Grill"),
    ("a b c a b c a b c", "a b c d a b c"),
    ("Running runners ran; the running was fun.", "The runner runs and running is fun."),
    ("Café Müller serves crêpes — très bon!", "Cafe Muller serves crepes, tres bon."),
    (
        "I'd suggest Canal Pizza: thin crust, friendly owner, easy parking on the side street.",
        "Canal Pizza: \u201cThin crust pizza, friendly owner\u201d [R1], and parking is easy.",
    ),
]


def _nltk(p: str, r: str) -> float:
    return sentence_bleu([bleu_tokens(r)], bleu_tokens(p), smoothing_function=SMOOTH)


@pytest.mark.parametrize(("prediction", "reference"), CORPUS)
def test_exact_agreement_on_corpus(prediction, reference):
    assert text.bleu4(prediction, reference) == _nltk(prediction, reference)
    for stem, scorer in SCORERS.items():
        assert (
            text.rouge_l(prediction, reference, stem)
            == scorer.score(reference, prediction)["rougeL"].fmeasure
        )
    b, r = text.turn_scores(prediction, reference)
    assert (b, r) == (text.bleu4(prediction, reference), text.rouge_l(prediction, reference))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from("a b c d e f the".split()), max_size=25),
    st.lists(st.sampled_from("a b c d e f the".split()), max_size=25),
)
def test_exact_agreement_random_token_sequences(hyp, ref):
    p, r = " ".join(hyp), " ".join(ref)
    assert text.bleu4(p, r) == _nltk(p, r)
    assert text.rouge_l(p, r) == SCORERS[False].score(r, p)["rougeL"].fmeasure


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_tokenizer_is_rouge_scores(s):
    assert rouge_tokens(s) == tokenize.tokenize(s, None)
    assert bleu_tokens(s) == rouge_tokens(s)


def test_identical_and_empty():
    assert text.bleu4("one two three four five", "one two three four five") == 1.0
    assert text.bleu4("", "x") == 0.0 and text.rouge_l("", "x") == 0.0
    assert text.bleu4("zzz", "yyy") == 0.0  # no unigram match: 0, as nltk


def test_score_and_range():
    preds, refs = [p for p, _ in CORPUS], [r for _, r in CORPUS]
    out = text.score(preds, refs, return_per_item=True)
    assert out["n"] == len(CORPUS)
    assert all(0.0 <= v <= 1.0 for v in out["bleu4_per_item"] + out["rouge_l_per_item"])
    assert out["bleu4"] == pytest.approx(sum(out["bleu4_per_item"]) / len(CORPUS))
    with pytest.raises(ValueError, match="must be strings"):
        text.score([None], ["x"])
