"""System names of submitted rows: the one normalisation behind their slug and look-alike key, which
invisible characters a name may hold, and the script check. The Unicode data is the table beside this package
(spaces_app/unicode_data.py: UTS #39 confusables.txt 13.0.0, UCD and emoji data 15.0.0).

- `fold(name)`: NFKC, default-ignorable code points dropped (variation selectors, the combining grapheme
  joiner, Hangul fillers, soft hyphen, zero-width characters, bidirectional controls, tags, ...), NFKC again.
  Both keys below start from it, so an invisible character never makes a name another row.
- `slug(name)`: the key a row is stored under: `fold`, case-folded; letters lose the accents written above or
  below them (combining class 200 and up: `Café` -> `cafe`, `Ωμέγα` -> `ωμεγα`; kana voicing marks, Indic
  viramas and Hebrew or Arabic points are part of the letter and stay); letters and digits of every script are
  kept (`数据系统` stays `数据系统`); every other run of characters becomes one `-`. An ASCII name keeps the slug it
  always had.
- `lookalike_key(name)`: UTS #39's skeleton (NFD, default-ignorables removed, each character mapped to the
  prototype of its confusable class, NFD; repeated until it no longer changes) of `fold(name)`, taken before
  and after case folding, then slugged. Two names with one key look the same on a page ("Alice" in Latin and
  "Аlice" with a Cyrillic A, "B0b" and "Bob", "rn" and "m", "0lga" and "Olga"): a submission whose key equals
  an existing row's, under another slug, is refused.
- `invisible_char(text)`: the first default-ignorable code point that nothing needs where it stands. Needed
  (so allowed) are only: a ZWNJ or ZWJ right after a virama (Indic conjuncts: `क्‍ष`, `ශ්‍රී`), a ZWNJ between
  letters that would otherwise join (Arabic script: `می‌خواهم`; the rules of IDNA, RFC 5892 A.1 and A.2), a
  ZWJ between two pictographs of an emoji ZWJ sequence (`👩🏽‍🚀`, UTS #51), VS15/VS16 after a character that
  has a text and an emoji style (`❤️`), and the tags of an emoji tag sequence (a flag such as England's).
  Every other one is refused by the name check (`Alice` + U+FE0F, `Al` + ZWJ + `ice`, Hangul fillers).
- `too_new_char(text)`: the first character newer than the confusables' Unicode version (13.0): the look-alike
  data does not know it, so a name may not hold it yet.
- `mixed_script_word(name)`: the first word that mixes scripts the way no real word does (TR39's "highly
  restrictive" level, per word: one script, or Latin with Han and the Japanese kana, Han with Bopomofo, or Han
  with Hangul); Common and Inherited characters (digits, punctuation, combining marks) belong to any script.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Iterator

from spaces_app.unicode_data import emoji_variation_bases, prototypes, ranges

SLUG_MAX_BYTES = 200  # UTF-8 bytes of a slug: `<slug>__<pool>.json` stays within a file name's 255
ALLOWED_SCRIPT_SETS: tuple[frozenset[str], ...] = (
    frozenset({"Latin", "Han", "Hiragana", "Katakana"}),
    frozenset({"Latin", "Han", "Bopomofo"}),
    frozenset({"Latin", "Han", "Hangul"}),
)
ANY_SCRIPT = frozenset({"Common", "Inherited"})
ACCENT_CLASS = 200  # canonical combining classes from here up are accents placed above, below or beside
VIRAMA_CLASS = 9  # the canonical combining class of viramas (RFC 5892's "Virama")
ZWNJ, ZWJ = "\u200c", "\u200d"
VARIATION_STYLES = ("\ufe0e", "\ufe0f")  # VS15 text style, VS16 emoji style
TAGS = ("\U000e0020", "\U000e007f")  # TAG SPACE .. CANCEL TAG: an emoji tag sequence ends with CANCEL TAG
SKELETON_ROUNDS = 4  # a prototype's NFD can hold characters that map again; 13 of confusables.txt do, once


def default_ignorable(char: str) -> bool:
    return char in ranges("default_ignorable")


def fold(text: str) -> str:
    """NFKC with every default-ignorable code point dropped (module docstring)."""
    kept = "".join(c for c in unicodedata.normalize("NFKC", text) if not default_ignorable(c))
    return unicodedata.normalize("NFKC", kept)


def _word_chars(text: str) -> Iterator[str | None]:
    """Each character of `text`, or None where a separator stands (anything but letters, digits, marks)."""
    for c in text:
        yield c if c.isalnum() or unicodedata.category(c)[0] == "M" else None


def _words(text: str) -> list[str]:
    return "".join(c or " " for c in _word_chars(text)).split()


def slug(name: str) -> str:
    """The file-name key of `name` (module docstring); ValueError when it has no letter or digit."""
    folded = unicodedata.normalize("NFKD", fold(name).casefold())
    bare = unicodedata.normalize("NFC", "".join(c for c in folded if unicodedata.combining(c) < ACCENT_CLASS))
    out = "-".join(_words(bare))
    if not out:
        raise ValueError(f"system name {name!r} has no letters or digits")
    while len(out.encode("utf-8")) > SLUG_MAX_BYTES:
        out = out[:-1]
    return out.rstrip("-")


def skeleton(text: str) -> str:
    """UTS #39's skeleton of `text`: NFD, default-ignorables removed, each character replaced by its
    prototype, NFD; repeated until it no longer changes (at most SKELETON_ROUNDS times)."""
    table = prototypes()
    out = unicodedata.normalize("NFD", text)
    for _ in range(SKELETON_ROUNDS):
        mapped = "".join(table.get(c, c) for c in out if not default_ignorable(c))
        mapped = unicodedata.normalize("NFD", mapped)
        if mapped == out:
            break
        out = mapped
    return out


@functools.lru_cache(maxsize=8192)
def lookalike_key(name: str) -> str:
    """The key two names share when they look the same (module docstring)."""
    return "-".join(_words(skeleton(skeleton(fold(name)).casefold())))


def _joining(char: str) -> str | None:
    return ranges("joining_type").get(char)


def _joins_across(text: str, i: int) -> bool:
    """RFC 5892 A.1's joining context of the ZWNJ at `i`: (L|D) T* ZWNJ T* (R|D)."""
    left = i - 1
    while left >= 0 and _joining(text[left]) == "T":
        left -= 1
    right = i + 1
    while right < len(text) and _joining(text[right]) == "T":
        right += 1
    return (
        left >= 0
        and _joining(text[left]) in ("L", "D")
        and right < len(text)
        and _joining(text[right]) in ("R", "D")
    )


def _pictograph(char: str) -> bool:
    return char in ranges("extended_pictographic")


def _in_emoji_zwj_sequence(text: str, i: int) -> bool:
    """Whether the ZWJ at `i` joins two emoji: a pictograph (with its VS16 or skin-tone modifier) before it,
    a pictograph after it."""
    left = i - 1
    if left >= 0 and (text[left] == VARIATION_STYLES[1] or text[left] in ranges("emoji_modifier")):
        left -= 1
    return left >= 0 and _pictograph(text[left]) and i + 1 < len(text) and _pictograph(text[i + 1])


def _in_emoji_tag_sequence(text: str, i: int) -> bool:
    """Whether the tag at `i` is in a run of tags after a pictograph that ends with CANCEL TAG."""

    def is_tag(c: str) -> bool:
        return TAGS[0] <= c <= TAGS[1]

    start, end = i, i
    while start > 0 and is_tag(text[start - 1]):
        start -= 1
    while end + 1 < len(text) and is_tag(text[end + 1]):
        end += 1
    return start > 0 and _pictograph(text[start - 1]) and end > start and text[end] == TAGS[1]


def needed_invisible(text: str, i: int) -> bool:
    """Whether the default-ignorable `text[i]` is one that a script or an emoji sequence needs there."""
    char, before = text[i], text[i - 1] if i else ""
    if char in (ZWNJ, ZWJ) and before and unicodedata.combining(before) == VIRAMA_CLASS:
        return True
    if char == ZWNJ:
        return _joins_across(text, i)
    if char == ZWJ:
        return _in_emoji_zwj_sequence(text, i)
    if char in VARIATION_STYLES:
        return before in emoji_variation_bases()
    if TAGS[0] <= char <= TAGS[1]:
        return _in_emoji_tag_sequence(text, i)
    return False


def invisible_char(text: str) -> str | None:
    """The first default-ignorable character of `text` that nothing needs where it stands, as 'U+XXXX NAME'."""
    for i, c in enumerate(text):
        if default_ignorable(c) and not needed_invisible(text, i):
            return describe(c)
    return None


def too_new_char(text: str) -> str | None:
    """The first character not yet assigned in the confusables' Unicode version, as 'U+XXXX NAME'."""
    assigned = ranges("assigned")
    for c in text:
        if c not in assigned:
            return describe(c)
    return None


def describe(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {name}" if name else "")


def mixed_script_word(name: str) -> tuple[str, list[str]] | None:
    """(word, its scripts) for the first word that mixes scripts (module docstring), or None."""
    scripts_of = ranges("scripts")
    for word in _words(name):
        scripts = {scripts_of.get(c) or "Unknown" for c in word} - ANY_SCRIPT
        if len(scripts) > 1 and not any(scripts <= allowed for allowed in ALLOWED_SCRIPT_SETS):
            return word, sorted(s.replace("_", " ") for s in scripts)
    return None


__all__ = [
    "fold",
    "invisible_char",
    "lookalike_key",
    "mixed_script_word",
    "needed_invisible",
    "skeleton",
    "slug",
    "too_new_char",
]
