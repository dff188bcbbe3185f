"""The tokenisers the text and grounding metrics share, each named so results can state which was used.

- `word_tokens` / `word_count`: maximal runs of Unicode word characters (`\\w+`), case kept. Citation
  density counts these (a `[Rn]` label is one such token, which the grounding code subtracts).
- `bleu_tokens`: the same tokens as `rouge_tokens` without stemming (lower-cased runs of [a-z0-9];
  punctuation and non-ASCII letters separate tokens), so both surface metrics see one tokenisation and a turn
  is tokenised once. (nltk's `word_tokenize` needs the punkt download, which fails offline.)
- `rouge_tokens`: exactly rouge-score's `DefaultTokenizer` (lower-case, runs of [a-z0-9]; Porter stemming of
  tokens longer than 3 characters when asked), rewritten as one `findall` plus a cached stemmer for speed.
"""

from __future__ import annotations

import re
from functools import lru_cache

WORD_RE = re.compile(r"\w+")
ROUGE_TOKEN_RE = re.compile(r"[a-z0-9]+")

BLEU_TOKENIZER = "rouge_score DefaultTokenizer without stemming (lowercase, [a-z0-9]+ runs)"
ROUGE_TOKENIZER = "rouge_score DefaultTokenizer (lowercase, [a-z0-9]+ runs)"


def word_tokens(text: str) -> list[str]:
    return WORD_RE.findall(text)


def word_count(text: str) -> int:
    return len(WORD_RE.findall(text))


def bleu_tokens(text: str) -> list[str]:
    return ROUGE_TOKEN_RE.findall(text.lower())


@lru_cache(maxsize=1)
def _porter():
    from nltk.stem import porter

    return porter.PorterStemmer()


@lru_cache(maxsize=200_000)
def _stem(token: str) -> str:
    return _porter().stem(token)


def rouge_tokens(text: str, use_stemmer: bool = False) -> list[str]:
    """rouge-score's tokenisation: lower-case, non-[a-z0-9] runs are separators, optional Porter stems."""
    tokens = ROUGE_TOKEN_RE.findall(text.lower())
    if use_stemmer:
        # rouge-score stems tokens longer than 3 characters, then keeps only [a-z0-9]+ results
        tokens = [_stem(t) if len(t) > 3 else t for t in tokens]
        tokens = [t for t in tokens if ROUGE_TOKEN_RE.fullmatch(t)]
    return tokens
