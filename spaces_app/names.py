"""System names of submitted rows: their file-name slug, their look-alike key, and the script check.

- `slug(name)`: the key a row is stored under. Case-folded; letters lose the accents written above or below
  them (combining class 200 and up: `Café` -> `cafe`, `Ωμέγα` -> `ωμεγα`; kana voicing marks, Indic viramas
  and Hebrew or Arabic points are part of the letter and stay); letters and digits of every script are kept
  (`数据系统` stays `数据系统`); every other run of characters becomes one `-`. An ASCII name keeps the slug it
  always had.
- `lookalike_key(name)`: Unicode TR39's confusable skeleton (NFD, every character mapped to the prototype of
  its confusable class, NFD again; data of the `confusable-homoglyphs` package), taken before and after case
  folding, then slugged. Two names with one key look the same on a page ("Alice" in Latin and "Аlice" with a
  Cyrillic A, "B0b" and "Bob", "rn" and "m"): a submission whose key equals an existing row's, under another
  slug, is refused.
- `mixed_script_word(name)`: the first word that mixes scripts the way no real word does (TR39's "highly
  restrictive" level, per word: one script, or Latin with Han and the Japanese kana, Han with Bopomofo, or Han
  with Hangul); Common and Inherited characters (digits, punctuation, combining marks) belong to any script.

The package's table maps each character to its confusables in both directions; `_prototypes` reads the TR39
prototype back out of it (a source character has exactly one entry, its prototype; a prototype lists its
sources; a two-character class keeps its smaller code point), which gives the skeleton's classes exactly.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterator

SLUG_MAX_BYTES = 200  # UTF-8 bytes of a slug: `<slug>__<pool>.json` stays within a file name's 255
ALLOWED_SCRIPT_SETS: tuple[frozenset[str], ...] = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)
ANY_SCRIPT = frozenset({"COMMON", "INHERITED"})
ACCENT_CLASS = 200  # canonical combining classes from here up are accents placed above, below or beside
_DIRECTION_MARKS = str.maketrans(
    "", "", "\u200e\u200f"
)  # the package's table wraps right-to-left glyphs in them


def _word_chars(text: str) -> Iterator[str | None]:
    """Each character of `text`, or None where a separator stands (anything but letters, digits, marks)."""
    for c in text:
        yield c if c.isalnum() or unicodedata.category(c)[0] == "M" else None


def slug(name: str) -> str:
    """The file-name key of `name` (module docstring); ValueError when it has no letter or digit."""
    folded = unicodedata.normalize("NFKD", name.casefold())
    bare = unicodedata.normalize("NFC", "".join(c for c in folded if unicodedata.combining(c) < ACCENT_CLASS))
    words: list[str] = []
    current: list[str] = []
    for c in _word_chars(bare):
        if c is None:
            if current:
                words.append("".join(current))
            current = []
        else:
            current.append(c)
    if current:
        words.append("".join(current))
    out = "-".join(words)
    if not out:
        raise ValueError(f"system name {name!r} has no letters or digits")
    while len(out.encode("utf-8")) > SLUG_MAX_BYTES:
        out = out[:-1]
    return out.rstrip("-")


@functools.cache
def _prototypes() -> dict[str, str]:
    """character -> the prototype of its TR39 confusable class (characters that are prototypes are absent)."""
    from confusable_homoglyphs.utils import load

    table = {
        k.translate(_DIRECTION_MARKS): [e["c"].translate(_DIRECTION_MARKS) for e in v]
        for k, v in load("confusables.json").items()
    }
    out: dict[str, str] = {}
    for char, targets in table.items():
        if len(char) != 1 or not targets:
            continue
        longer = [t for t in targets if len(t) != 1]
        if longer:  # sources are single characters: a longer entry is this character's prototype
            out[char] = longer[0]
        elif len(targets) == 1:
            (other,) = targets
            if len(table.get(other, ())) > 1 or (len(table.get(other, ())) == 1 and other < char):
                out[char] = other  # `other` is the prototype of several, or the smaller of a pair
    return out


def skeleton(text: str) -> str:
    """TR39's skeleton of `text`: NFD, each character replaced by its prototype, NFD (twice, so that the
    characters of a multi-character prototype reach their own class's representative)."""
    table = _prototypes()
    out = unicodedata.normalize("NFD", text)
    for _ in range(2):
        out = unicodedata.normalize("NFD", "".join(table.get(c, c) for c in out))
    return out


def lookalike_key(name: str) -> str:
    """The key two names share when they look the same (module docstring)."""
    shape = skeleton(skeleton(unicodedata.normalize("NFKC", name)).casefold())
    return "-".join(w for w in "".join(c or " " for c in _word_chars(shape)).split())


def mixed_script_word(name: str) -> tuple[str, list[str]] | None:
    """(word, its scripts) for the first word that mixes scripts (module docstring), or None."""
    from confusable_homoglyphs.categories import alias

    for word in "".join(c or " " for c in _word_chars(name)).split():
        scripts = {alias(c) for c in word} - ANY_SCRIPT
        if len(scripts) > 1 and not any(scripts <= allowed for allowed in ALLOWED_SCRIPT_SETS):
            return word, sorted(s.title() for s in scripts)
    return None


__all__ = ["lookalike_key", "mixed_script_word", "skeleton", "slug"]
