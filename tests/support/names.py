"""Names of the Space's submission tests: the issue's invisible impersonations and names that need a joiner."""

from __future__ import annotations

# The names: each was stored as a new row beside "Alice" / "Bob"
INVISIBLE_IMPERSONATIONS = [
    ("Alice\ufe0f", "U+FE0F VARIATION SELECTOR-16", "Alice"),
    ("Bob\ufe00", "U+FE00 VARIATION SELECTOR-1", "Bob"),
    ("Bob\U000e0100", "U+E0100 VARIATION SELECTOR-17", "Bob"),
    ("Alice\u034f", "U+034F COMBINING GRAPHEME JOINER", "Alice"),
    ("Alice\u3164", "U+3164 HANGUL FILLER", "Alice"),
    ("Alice\u115f", "U+115F HANGUL CHOSEONG FILLER", "Alice"),
    ("Al\u200dice", "U+200D ZERO WIDTH JOINER", "Alice"),
]
MORE_INVISIBLES = [
    "Alice\u1160",  # Hangul jungseong filler
    "Alice\uffa0",  # halfwidth Hangul filler
    "Al\u00adice",  # soft hyphen
    "Al\u200bice",  # zero-width space
    "Al\u200cice",  # ZWNJ between Latin letters
    "Alice\u2060",  # word joiner
    "Alice\u2061",  # function application (invisible operator)
    "Alice\u180e",  # Mongolian vowel separator
    "Alice\U000e0041",  # a tag outside an emoji tag sequence
    "Alice\U000e0001",  # language tag
]
# Names that need a ZWNJ or ZWJ, or an emoji's joiners and selectors: accepted as written
NEEDED_JOINERS = [
    "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian می‌خواهم (ZWNJ between joining letters)
    "\u06a9\u062a\u0627\u0628\u200c\u0647\u0627",  # Persian کتاب‌ها
    "\u0915\u094d\u200d\u0937",  # Devanagari क्‍ष: ZWJ after the virama (half form)
    "\u0915\u094d\u200c\u0937",  # क्‌ष: ZWNJ after the virama (explicit virama)
    "\u0dc1\u0dca\u200d\u0dbb\u0dd3 \u0dbd\u0d82\u0d9a\u0dcf",  # Sinhala ශ්‍රී ලංකා
    "\u0d28\u0d4d\u200d bot",  # Malayalam chillu with ZWJ after the virama
    "Crew \U0001f469\U0001f3fd\u200d\U0001f680",  # woman astronaut, medium skin tone
    "Pride \U0001f3f3\ufe0f\u200d\U0001f308",  # rainbow flag: VS16 then ZWJ
    "Love \u2764\ufe0f bot",  # VS16 after a character with an emoji style
    "England \U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",  # emoji tag sequence
    "Keycap 1\ufe0f\u20e3",
]
