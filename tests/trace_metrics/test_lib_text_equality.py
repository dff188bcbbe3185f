"""The fast BLEU-4 / ROUGE-L code equals nltk and rouge-score on thousands of random pairs and on every branch.

`text._bleu4` counts only what matches (runs of matching bigrams, substring search, clipping by excess) and
`text.score_pairs` shortcuts identical texts; `tokenize.token_bytes` tokenises with `bytes.translate`. Each
must give the reference libraries' values to the last bit.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from rouge_score import rouge_scorer, tokenize

from trace_metrics.lib import text
from trace_metrics.lib.tokenize import bleu_tokens, token_bytes

SMOOTH = SmoothingFunction(epsilon=0.1).method1
ROUGE = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
SEPARATORS = [" ", " ", " ", ", ", ". ", " - ", ' "', '" ', " [R1] ", "\n", " \u2014 ", "'"]


def _nltk(prediction: str, reference: str) -> float:
    return sentence_bleu([bleu_tokens(reference)], bleu_tokens(prediction), smoothing_function=SMOOTH)


def _rouge(prediction: str, reference: str) -> float:
    return ROUGE.score(reference, prediction)["rougeL"].fmeasure


def _render(rng: random.Random, words: list[str]) -> str:
    out = []
    for w in words:
        out.append(w.capitalize() if rng.random() < 0.1 else w)
        out.append(rng.choice(SEPARATORS))
    return "".join(out)


def _random_pairs(n: int, seed: int = 42) -> list[tuple[str, str]]:
    """Pairs with small and large vocabularies, shared spans (runs of matching n-grams), repeats, punctuation,
    capitals and labels, copies and near-copies: what the fast paths branch on."""
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        vocab = [f"w{i}" for i in range(rng.choice([1, 2, 3, 5, 8, 30, 300]))] + ["caf\u00e9", "na\u00efve"]
        hyp = [rng.choice(vocab) for _ in range(rng.randint(0, 45))]
        kind = rng.random()
        if kind < 0.05:
            ref = list(hyp)  # same tokens, maybe other separators or case
        elif kind < 0.6 and hyp:
            ref = []
            target = rng.randint(0, 50)
            while len(ref) < target:
                if rng.random() < 0.5:
                    i = rng.randrange(len(hyp))
                    ref.extend(hyp[i : i + rng.randint(1, 8)])
                else:
                    ref.append(rng.choice(vocab))
        else:
            ref = [rng.choice(vocab) for _ in range(rng.randint(0, 45))]
        prediction = _render(rng, hyp)
        pairs.append((prediction, prediction if kind < 0.02 else _render(rng, ref)))
    return pairs


RANDOM_PAIRS = _random_pairs(3000)


def test_score_pairs_equal_nltk_and_rouge_score_on_random_pairs():
    predictions, references = [p for p, _ in RANDOM_PAIRS], [r for _, r in RANDOM_PAIRS]
    bleu, rouge = text.score_pairs(predictions, references)
    for (p, r), b, rl in zip(RANDOM_PAIRS, bleu, rouge, strict=True):
        assert b == _nltk(p, r), (p, r)
        assert rl == _rouge(p, r), (p, r)


def test_generic_token_bleu_equals_nltk_on_random_token_lists():
    rng = random.Random(7)
    for _ in range(1500):
        vocab = [("a",), "b c", 3, "d", "", " "][: rng.randint(1, 6)]  # any hashable tokens, spaces included
        hyp = [rng.choice(vocab) for _ in range(rng.randint(0, 30))]
        ref = [rng.choice(vocab) for _ in range(rng.randint(0, 30))]
        assert text.bleu4_tokens(hyp, ref) == sentence_bleu([ref], hyp, smoothing_function=SMOOTH)


@pytest.mark.parametrize(
    ("prediction", "reference"),
    [
        ("a b c d e", "x a b c d e y"),  # one run of matching bigrams, found whole in the reference
        ("a b c d", "a b x b c y c d"),  # a run whose span is not in the reference: n-gram by n-gram
        ("a b c x b c d", "z a b c y b c d z"),  # two runs, the second partly matching at order 4
        ("a b a b a b", "a b"),  # a repeated matching bigram, clipped
        ("a b c q a b c q a b c", "a b c q a b c"),  # repeated matching trigrams and 4-grams, clipped
        ("a a a a a a", "a a a a"),  # periodic n-grams: overlapping occurrences in the reference
        ("a a a a a a", "a a x a a"),
        ("a b a b a b a", "b a b a b"),
        ("one two three four", "one two three four"),  # identical: the shortcut
        ("One, two; three four!", "one two three four"),  # same tokens, other text
        ("a b c", "a b c"),  # identical but shorter than 4 tokens: general code
        ("a", "a"),
        ("a", "a b"),
        ("", ""),
        ("", "a b"),
        ("a b", ""),
        ("zzz yyy", "xxx www"),  # no unigram match: 0
    ],
)
def test_every_branch_equals_nltk(prediction, reference):
    assert text.bleu4(prediction, reference) == _nltk(prediction, reference)
    bleu, rouge = text.score_pairs([prediction], [reference])
    assert bleu == [_nltk(prediction, reference)]
    assert rouge == [_rouge(prediction, reference)]


def test_overlapping_count():
    assert text._count(b" a a ", b" a a a a ") == 3  # bytes.count would say 2
    assert text._count(b" a b ", b" a b a b ") == 2
    assert text._count(b" c ", b" a b ") == 0


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_token_bytes_is_rouge_scores_tokenizer(s):
    assert token_bytes(s) == [t.encode("ascii") for t in tokenize.tokenize(s, None)]


def test_token_bytes_non_ascii_and_lone_surrogates():
    for s in ["a\ud800b Caf\u00e9", "\u0130stanbul K\u212a", "x\u00a0y\u2003z", "ABC_def-12"]:
        assert token_bytes(s) == [t.encode("ascii") for t in tokenize.tokenize(s, None)]
