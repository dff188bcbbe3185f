"""The tokenisers the text and grounding metrics share, each named so results can state which was used.

- `word_tokens` / `word_count`: maximal runs of Unicode word characters (`\\w+`), case kept. Citation
  density counts these (a `[Rn]` label is one such token, which the grounding code subtracts). For ASCII
  text, `word_count` counts runs of `bytes.translate`-marked bytes and `ascii_word_tokens` splits them (the
  same runs, as bytes), ~5x faster than the regex.
- `bleu_tokens`: the same tokens as `rouge_tokens` without stemming (lower-cased runs of [a-z0-9];
  punctuation and non-ASCII letters separate tokens), so both surface metrics see one tokenisation and a turn
  is tokenised once. (nltk's `word_tokenize` needs the punkt download, which fails offline.)
- `rouge_tokens`: exactly rouge-score's `DefaultTokenizer` (lower-case, runs of [a-z0-9]; Porter stemming of
  tokens longer than 3 characters when asked), rewritten as one `findall` plus a cached stemmer for speed.
- `token_bytes`: `bleu_tokens` as ASCII `bytes` (one `bytes.translate` + `split`, ~2x faster than the regex),
  what the suite scores BLEU and ROUGE-L on: the metrics only compare tokens, and two texts' tokens are equal
  as bytes exactly when they are equal as strings (tests check `token_bytes` against rouge-score's tokenizer).
"""

from __future__ import annotations

import re
from functools import lru_cache

WORD_RE = re.compile(r"\w+")
ROUGE_TOKEN_RE = re.compile(r"[a-z0-9]+")

BLEU_TOKENIZER = "rouge_score DefaultTokenizer without stemming (lowercase, [a-z0-9]+ runs)"
ROUGE_TOKENIZER = "rouge_score DefaultTokenizer (lowercase, [a-z0-9]+ runs)"


# bytes.translate tables: [a-z0-9] kept, every other byte a separator (after `str.lower`, so A-Z never occur;
# UTF-8 bytes of non-ASCII characters are all >= 0x80 and separate tokens, as rouge-score's [^a-z0-9] does)
_TOKEN_TABLE = bytes(c if (48 <= c <= 57 or 97 <= c <= 122) else 32 for c in range(256))
# ASCII word characters ([A-Za-z0-9_], what `\w` matches below 0x80) -> b"a" (or kept), all else -> b" "
_WORD_MARKS = bytes(97 if c < 128 and (chr(c).isalnum() or c == 95) else 32 for c in range(256))
_WORD_KEEP = bytes(c if c < 128 and (chr(c).isalnum() or c == 95) else 32 for c in range(256))


def word_tokens(text: str) -> list[str]:
    return WORD_RE.findall(text)


def word_count(text: str) -> int:
    """len(word_tokens(text)), without building the tokens for ASCII text (runs of marked bytes)."""
    if text.isascii():
        marks = text.encode("ascii").translate(_WORD_MARKS)
        return marks.count(b" a") + (marks[:1] == b"a")
    return len(WORD_RE.findall(text))


def ascii_word_tokens(text: str) -> list[bytes]:
    """`word_tokens(text)` as bytes, for ASCII text only (the caller checks `text.isascii()`)."""
    return text.encode("ascii").translate(_WORD_KEEP).split()


def bleu_tokens(text: str) -> list[str]:
    return ROUGE_TOKEN_RE.findall(text.lower())


def token_bytes(text: str) -> list[bytes]:
    """`bleu_tokens(text)` with each token as ASCII bytes (lone surrogates are separators, as in the regex)."""
    return text.lower().encode("utf-8", "surrogatepass").translate(_TOKEN_TABLE).split()


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
