"""Turn-level text overlap with the reference response (App. J "Text Quality").

- **BLEU-4**: nltk's `sentence_bleu(references=[ref], hypothesis=hyp, weights=(0.25,)*4,
  smoothing_function=SmoothingFunction(epsilon=0.1).method1)` on `tokenize.bleu_tokens` (rouge-score's
  tokens: lower-cased [a-z0-9] runs, punctuation dropped; one tokenisation serves both metrics). Chen & Cherry
  (2014) describe seven smoothings; the paper names none, and method1 (add epsilon = 0.1 to zero n-gram match
  counts) is the one we use. Re-implemented with plain counters (nltk builds `Fraction`s and is ~10x slower);
  tests check equality with nltk to the last bit on a test corpus. As in nltk, a hypothesis with no unigram
  match scores 0.
- **ROUGE-L F1**: rouge-score's `RougeScorer(["rougeL"], use_stemmer=False)` F-measure of the response
  against the reference (rouge-score's default tokenizer; no stemming by default, as `evaluate`'s rouge).
  The longest common subsequence comes from rapidfuzz's `LCSseq` (bit-parallel C++), equal to rouge-score's
  dynamic-programming table.

Both are the mean of per-turn values over the selected turns.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from rapidfuzz.distance import LCSseq

from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.tokenize import bleu_tokens, rouge_tokens

TEXT_IDS: tuple[str, ...] = ("bleu4", "rouge_l")
BLEU_MAX_ORDER = 4
BLEU_EPSILON = 0.1  # nltk SmoothingFunction(epsilon=0.1).method1
BLEU_SMOOTHING = "nltk SmoothingFunction().method1 (epsilon=0.1), Chen & Cherry (2014)"


def _clipped_matches(hyp_counts: Counter, ref_counts: Counter) -> int:
    matched = 0
    for gram in hyp_counts.keys() & ref_counts.keys():
        a, b = hyp_counts[gram], ref_counts[gram]
        matched += a if a < b else b
    return matched


def _runs(tokens: Sequence[str], vocab: Counter) -> list[Sequence[str]]:
    """Maximal runs of consecutive tokens that occur in `vocab`: only they can hold matching n-grams."""
    runs = []
    start = -1
    for i, t in enumerate(tokens):
        if t in vocab:
            if start < 0:
                start = i
        elif start >= 0:
            runs.append(tokens[start:i])
            start = -1
    if start >= 0:
        runs.append(tokens[start:])
    return runs


def _grams(runs: Sequence[Sequence[str]], n: int) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for run in runs:
        if len(run) >= n:
            out.extend(zip(*(run[i:] for i in range(n)), strict=False))
    return out


def bleu4_tokens(hypothesis: Sequence[str], reference: Sequence[str]) -> float:
    """Sentence BLEU-4 of token lists, smoothing method1, single reference (equals nltk's value).

    Same arithmetic as nltk: p_n = clipped matches / max(1, hypothesis n-grams), a zero match count becomes
    epsilon / denominator, BLEU = BP x exp(fsum(0.25 x log p_n)); no unigram match -> 0. Faster because a
    matching n-gram can only lie inside a run of tokens the other side also has (so only those are counted,
    when few tokens match), and no (n+1)-gram matches once no n-gram does.
    """
    hyp_len, ref_len = len(hypothesis), len(reference)
    if hyp_len == 0:
        return 0.0
    hyp_counts, ref_counts = Counter(hypothesis), Counter(reference)
    common = hyp_counts.keys() & ref_counts.keys()
    matched = 0
    covered = 0  # hypothesis tokens whose type occurs in the reference
    for gram in common:
        a, b = hyp_counts[gram], ref_counts[gram]
        matched += a if a < b else b
        covered += a
    if matched == 0:
        return 0.0
    logs = [0.25 * math.log(matched / hyp_len)]
    if 2 * covered > hyp_len:  # most tokens can match: runs would not prune much
        hyp_runs: Sequence[Sequence[str]] = (hypothesis,)
        ref_runs: Sequence[Sequence[str]] = (reference,)
    else:
        hyp_runs, ref_runs = _runs(hypothesis, ref_counts), _runs(reference, hyp_counts)
    for n in range(2, BLEU_MAX_ORDER + 1):
        if hyp_len < n:
            logs.append(0.25 * math.log(BLEU_EPSILON / 1))
            continue
        if matched:
            hyp_grams = _grams(hyp_runs, n)
            if hyp_grams:
                ref_grams = _grams(ref_runs, n)
                distinct = set(hyp_grams)
                if len(distinct) == len(hyp_grams):  # no repeated n-gram: clipping cannot bind
                    matched = len(distinct.intersection(ref_grams))
                else:
                    matched = _clipped_matches(Counter(hyp_grams), Counter(ref_grams))
            else:
                matched = 0
        denominator = hyp_len - n + 1
        p = (matched + BLEU_EPSILON) / denominator if matched == 0 else matched / denominator
        logs.append(0.25 * math.log(p))
    bp = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return bp * math.exp(math.fsum(logs))


def rouge_l_tokens(prediction: Sequence[str], target: Sequence[str]) -> float:
    """ROUGE-L F1 of token lists (rouge-score's `_score_lcs`)."""
    if not target or not prediction:
        return 0.0
    lcs = LCSseq.similarity(target, prediction)
    precision = lcs / len(prediction)
    recall = lcs / len(target)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def bleu4(prediction: str, reference: str) -> float:
    return bleu4_tokens(bleu_tokens(prediction), bleu_tokens(reference))


def rouge_l(prediction: str, reference: str, use_stemmer: bool = False) -> float:
    return rouge_l_tokens(rouge_tokens(prediction, use_stemmer), rouge_tokens(reference, use_stemmer))


def turn_scores(prediction: str, reference: str, use_stemmer: bool = False) -> tuple[float, float]:
    """(BLEU-4, ROUGE-L F1) of one turn, tokenising each text once when ROUGE does not stem."""
    hyp, ref = bleu_tokens(prediction), bleu_tokens(reference)
    if use_stemmer:
        return bleu4_tokens(hyp, ref), rouge_l(prediction, reference, use_stemmer=True)
    return bleu4_tokens(hyp, ref), rouge_l_tokens(hyp, ref)


def score(
    predictions: Sequence[str],
    references: Sequence[str],
    use_stemmer: bool = False,
    return_per_item: bool = False,
) -> dict:
    if len(predictions) != len(references):
        raise ValueError(
            f"{len(predictions)} predictions but {len(references)} references; expected one per turn"
        )
    bleu, rouge = [], []
    for i, (p, r) in enumerate(zip(predictions, references, strict=True)):
        if not isinstance(p, str) or not isinstance(r, str):
            raise ValueError(
                f"item {i}: prediction and reference must be strings; got {type(p).__name__}, {type(r).__name__}"
            )
        b, rl = turn_scores(p, r, use_stemmer)
        bleu.append(b)
        rouge.append(rl)
    out: dict = {"bleu4": mean_or_none(bleu), "rouge_l": mean_or_none(rouge), "n": len(predictions)}
    if return_per_item:
        out["bleu4_per_item"] = bleu
        out["rouge_l_per_item"] = rouge
    return out
