"""Names without impersonation: the one normalisation (default-ignorables dropped, NFKC) behind slugs and
look-alike keys, the invisible characters a name may hold only where a script or an emoji sequence needs them,
the Unicode table beside the code and its builder, and a fuzz test that two names with one key never both
store."""

from __future__ import annotations

import json
import re
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from spaces_app import unicode_data
from spaces_app.names import (
    fold,
    invisible_char,
    lookalike_key,
    mixed_script_word,
    skeleton,
    slug,
    too_new_char,
)
from spaces_app.owners import Owner, OwnerError
from spaces_app.store import LocalStore, check_description, check_name
from spaces_app.submissions import SubmissionError, refuse_lookalike
from tests.support.names import INVISIBLE_IMPERSONATIONS, MORE_INVISIBLES, NEEDED_JOINERS


@pytest.mark.parametrize(("name", "char", "plain"), INVISIBLE_IMPERSONATIONS)
def test_the_issues_invisible_characters_are_refused_and_fold_away(name, char, plain):
    with pytest.raises(ValueError, match=re.escape(f"invisible character ({char})")):
        check_name(name)
    assert fold(name) == plain and slug(name) == slug(plain) and lookalike_key(name) == lookalike_key(plain)


@pytest.mark.parametrize("name", MORE_INVISIBLES)
def test_other_default_ignorables_are_refused(name):
    with pytest.raises(ValueError, match=r"invisible character \(U\+[0-9A-F]{4,5} "):
        check_name(name)
    assert slug(name) == "alice" and lookalike_key(name) == lookalike_key("Alice")


@pytest.mark.parametrize("name", NEEDED_JOINERS)
def test_joiners_a_script_or_an_emoji_needs_are_accepted(name):
    assert check_name(name) == name and invisible_char(name) is None
    assert check_description(f"about {name}") == f"about {name}"
    assert "\u200c" not in slug(name) and "\u200d" not in slug(name)  # the slug and the key drop them
    assert lookalike_key(name) == lookalike_key(name.replace("\u200c", "").replace("\u200d", ""))


def test_joiners_are_refused_where_no_script_joins():
    for name in (
        "\u0648\u200c\u0628",  # after WAW (joins on the right only): nothing to break
        "\u0628\u200c",  # at the end
        "\u200c\u0628\u0628",  # at the start
        "a\u200db",  # ZWJ between Latin letters
        "\U0001f469\u200d bot",  # ZWJ after an emoji, before a space
        "\u0628\u200d\u0628",  # ZWJ between Arabic letters (RFC 5892: only after a virama)
        "Alice\ufe0f",  # VS16 after a letter without an emoji style
        "\u2764\ufe0e\ufe0f x",  # a second selector
    ):
        assert invisible_char(name) is not None, name
        with pytest.raises(ValueError, match="invisible character"):
            check_name(name)


def test_lookalikes_of_the_issue_share_a_key():
    keys = {lookalike_key(n) for n in ("Olga", "0lga", "OIga", "O1ga", "olga", "\u041elga")}
    assert len(keys) == 1 and {slug(n) for n in ("Olga", "0lga", "OIga", "O1ga")} == {
        "olga",
        "0lga",
        "oiga",
        "o1ga",
    }
    assert lookalike_key("\uff2f\uff4c\uff47\uff41") == lookalike_key("Olga")  # fullwidth: NFKC
    assert lookalike_key("Alice") != lookalike_key("Alicia") and lookalike_key("Bob") != lookalike_key("Rob")


def test_characters_newer_than_the_lookalike_data_are_refused():
    assert unicode_data.confusables_version() == "13.0.0"
    name = "\ua7c0lga"  # LATIN CAPITAL LETTER OLD POLISH O, Unicode 14.0: confusables.txt 13.0 lacks it
    assert too_new_char(name) == "U+A7C0 LATIN CAPITAL LETTER OLD POLISH O"
    with pytest.raises(ValueError, match=r"U\+A7C0 .* newer than Unicode 13\.0\.0"):
        check_name(name)
    assert too_new_char("Caf\u00e9 \U0001f9ed \u6570\u636e \u0dc1\u0dca\u200d\u0dbb\u0dd3") is None


def test_mixed_scripts_from_the_shipped_script_table():
    assert mixed_script_word("\u0410lice bot") == ("\u0410lice", ["Cyrillic", "Latin"])
    assert (
        mixed_script_word("GPT-4o \u6570\u636e") is None
        and mixed_script_word("\u30c7\u30fc\u30bf\u7cfb") is None
    )
    assert mixed_script_word(NEEDED_JOINERS[0]) is None and mixed_script_word(NEEDED_JOINERS[4]) is None


# -- the Unicode table beside the code -----------------------------------------------------------------------
def test_the_shipped_table_names_its_sources_and_versions():
    sources = unicode_data.table()["sources"]
    assert sources["confusables.txt"]["version"] == "13.0.0"
    assert sources["confusables.txt"]["date"].startswith("2020-02-13")
    for name in unicode_data.UCD_FILES.values():
        assert sources[name]["version"] == ("15.0" if name.startswith("emoji/") else "15.0.0"), name
    assert all(len(s["sha256"]) == 64 and s["from"] for s in sources.values())
    assert len(unicode_data.prototypes()) == 6311  # every line of confusables.txt 13.0.0
    assert any("Unicode, Inc." in line for line in unicode_data.table()["license"])


def test_default_ignorables_agree_with_pythons_unicodedata():
    """The derivation of Default_Ignorable_Code_Point: every format character (Cf) except the interlinear
    annotations, the Egyptian format controls and the prepended concatenation marks, and every variation
    selector; the other members are the fillers and the combining grapheme joiner."""
    table = unicode_data.ranges("default_ignorable")
    excluded = {*range(0xFFF9, 0xFFFC), *range(0x13430, 0x13441), *range(0x600, 0x606), 0x6DD, 0x70F}
    excluded |= {0x890, 0x891, 0x8E2, 0x110BD, 0x110CD}
    for cp in range(0x110000):
        c = chr(cp)
        category = unicodedata.category(c)
        if category == "Cf" and cp not in excluded:
            assert c in table, f"U+{cp:04X}"
        if c in table:
            assert category in ("Cf", "Mn", "Lo", "Cn"), f"U+{cp:04X} {category}"
    selectors = [*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0), *range(0x180B, 0x1810)]
    others = [0x034F, 0x3164, 0x115F, 0x1160, 0xFFA0, 0x00AD, 0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0xE0001]
    assert all(chr(cp) in table for cp in [*selectors, *others, *range(0xE0020, 0xE0080)])
    assert not any(c in table for c in "Aa 0\u3000\u2800\u00a0")  # visible or spacing: not ignorable


def test_confusables_map_to_their_prototypes():
    p = unicode_data.prototypes()
    assert (p["0"], p["1"], p["I"], p["m"], p["\u0430"], p["\u0421"]) == ("O", "l", "l", "rn", "a", "C")
    assert "a" not in p and "O" not in p  # prototypes map to themselves
    assert skeleton("B0b") == skeleton("BOb") == "BOb" and skeleton("rnodel") == skeleton("model") == "rnodel"


UCD_EXCERPTS = {
    "DerivedCoreProperties.txt": "# DerivedCoreProperties-15.0.0.txt\n# Date: 2022-08-05\n"
    "0041..005A    ; Alphabetic # L&  [26]\n00AD          ; Default_Ignorable_Code_Point # Cf\n"
    "034F          ; Default_Ignorable_Code_Point # Mn\n115F..1160    ; Default_Ignorable_Code_Point # Lo\n"
    "1161          ; Default_Ignorable_Code_Point # (adjacent: merged)\n",
    "DerivedAge.txt": "# DerivedAge-15.0.0.txt\n0000..001F    ; 1.1 #\n0020..007E    ; 1.1 #\n"
    "0221          ; 4.0 #\nA7C0..A7C1    ; 14.0 #\n",
    "Scripts.txt": "# Scripts-15.0.0.txt\n0041..005A    ; Latin # L&\n0061..007A    ; Latin # L&\n"
    "005B..0060    ; Common # Po\n0400..0481    ; Cyrillic #\n",
    "extracted/DerivedJoiningType.txt": "# DerivedJoiningType-15.0.0.txt\n0622..0625    ; R # Lo\n"
    "0626          ; D # Lo\n0640          ; C # Lm\n064B..065F    ; T # Mn\n",
    "emoji/emoji-data.txt": "# emoji-data.txt\n# Used with Emoji Version 15.0 and subsequent minor revisions\n"
    "0023          ; Emoji # E0.0\n1F3FB..1F3FF  ; Emoji_Modifier # E1.0\n"
    "1F300..1F30C  ; Extended_Pictographic# E0.6\n",
    "emoji/emoji-variation-sequences.txt": "# emoji-variation-sequences.txt\n"
    "0023 FE0E  ; text style;  # (1.1) NUMBER SIGN\n0023 FE0F  ; emoji style; # (1.1) NUMBER SIGN\n"
    "2764 FE0F  ; emoji style; # (1.1) HEAVY BLACK HEART\n",
}
CONFUSABLES_EXCERPT = (
    "\ufeff# confusables.txt\n# Date: 2020-02-13, 01:38:49 GMT\n# \u00a9 2020 Unicode\u00ae, Inc.\n"
    "# Version: 13.0.0\n#\n0030 ;\t004F ;\tMA\t# ( 0 \u2192 O ) DIGIT ZERO \u2192 LATIN CAPITAL LETTER O\n\n"
    "006D ;\t0072 006E ;\tMA\t# ( m \u2192 rn )\n"
)


def test_the_builder_reads_unicodes_file_formats(tmp_path):
    for rel, text in UCD_EXCERPTS.items():
        (tmp_path / "ucd" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "ucd" / rel).write_text(text, encoding="utf-8")
    (tmp_path / "confusables.txt").write_text(CONFUSABLES_EXCERPT, encoding="utf-8")
    assert (
        unicode_data.main(
            [
                "--confusables",
                str(tmp_path / "confusables.txt"),
                "--ucd",
                str(tmp_path / "ucd"),
                "--ucd-from",
                "excerpts",
                "--out",
                str(tmp_path / "table.json"),
            ]
        )
        == 0
    )
    data = json.loads((tmp_path / "table.json").read_text(encoding="utf-8"))
    assert data["confusables"] == {"0030": "004F", "006D": "0072 006E"}
    assert data["default_ignorable"] == [["00AD", "00AD"], ["034F", "034F"], ["115F", "1161"]]
    assert data["assigned"] == [["0000", "007E"], ["0221", "0221"]]  # up to 13.0, the confusables' version
    assert data["scripts"] == [
        ["0041", "005A", "Latin"],
        ["005B", "0060", "Common"],
        ["0061", "007A", "Latin"],
    ] + [["0400", "0481", "Cyrillic"]]
    assert data["joining_type"] == [["0622", "0625", "R"], ["0626", "0626", "D"], ["064B", "065F", "T"]]
    assert data["extended_pictographic"] == [["1F300", "1F30C"]]
    assert data["emoji_modifier"] == [["1F3FB", "1F3FF"]]
    assert data["emoji_variation_bases"] == ["0023", "2764"]
    about = data["sources"]["confusables.txt"]
    assert (about["version"], about["date"], about["copyright"]) == (
        "13.0.0",
        "2020-02-13, 01:38:49 GMT",
        "\u00a9 2020 Unicode\u00ae, Inc.",
    )
    assert data["sources"]["emoji/emoji-data.txt"]["version"] == "15.0"
    assert data["sources"]["Scripts.txt"] == {
        "version": "15.0.0",
        "from": "excerpts",
        "sha256": data["sources"]["Scripts.txt"]["sha256"],
    }
    (tmp_path / "confusables.txt").write_text("0030 ;\t004F ;\tMA\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no 'Version:' line"):
        unicode_data.build_table(tmp_path / "confusables.txt", tmp_path / "ucd")


# -- fuzz: one normalisation, one key --------------------------------------------------------------------------
def _confusable_classes() -> dict[str, list[str]]:
    """prototype -> the single characters (assigned in 13.0) that map to it."""
    out: dict[str, list[str]] = {}
    assigned = unicode_data.ranges("assigned")
    for source, proto in unicode_data.prototypes().items():
        if source in assigned:
            out.setdefault(proto, []).append(source)
    return out


CLASSES = _confusable_classes()
BASE = "OolIi1L0rnmaecCdBbpg -"
INVISIBLES = "\ufe0f\ufe00\u034f\u3164\u115f\u200d\u200c\u00ad\u200b\u2060\U000e0100"


@st.composite
def lookalike_pairs(draw):
    """A name, and one written with characters of the same confusable classes, other cases, fullwidth forms
    and invisible characters in between."""
    name = draw(st.text(alphabet=BASE, min_size=1, max_size=10))
    other = []
    for c in name:
        proto = unicode_data.prototypes().get(c, c)
        options = [c, c.upper(), c.lower(), proto, *CLASSES.get(proto, [])]
        if "!" <= c <= "~":
            options.append(chr(ord(c) + 0xFEE0))  # the fullwidth form: NFKC folds it back
        other.append(draw(st.sampled_from(options)))
        if draw(st.integers(0, 5)) == 0:
            other.append(draw(st.sampled_from(INVISIBLES)))
    return name, "".join(other)


def _try_store(store: LocalStore, name: str, owner: Owner, predictions: Path) -> bool:
    """What a submission does with a name, without the scoring: the name check, the early look-alike check
    and the store's put with the check repeated under its lock; whether the row was stored."""
    try:
        name = check_name(name)
        refuse_lookalike(name, store.rows())
        row = {"system": name, "pool": "closed", "source": "submission", "family": "submitted", "metrics": {}}
        store.put(row, predictions, owner, check=lambda rows: refuse_lookalike(name, rows))
    except (ValueError, SubmissionError, OwnerError):
        return False
    return True


@settings(max_examples=150, deadline=None)
@given(lookalike_pairs())
@example(("Olga", "0lga"))
@example(("Olga", "OIga"))
@example(("Alice", "Alice\ufe0f"))
@example(("Alice", "\u0410lice"))
@example(("m", "rn"))
def test_two_names_with_one_lookalike_key_never_both_store(pair):
    first, second = pair
    if lookalike_key(first) != lookalike_key(second):  # a case change can change the key ("rn" / "RN")
        return
    with tempfile.TemporaryDirectory() as tmp:
        store, predictions = LocalStore(Path(tmp) / "store"), Path(tmp) / "p.jsonl"
        predictions.write_text('{"x": 1}\n', encoding="utf-8")
        stored = [
            _try_store(store, n, Owner("hf", user=u), predictions) for n, u in ((first, "a"), (second, "b"))
        ]
        assert not all(stored), pair
        assert len(store.rows()) == sum(stored)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12), st.lists(st.sampled_from(INVISIBLES), max_size=4), st.randoms())
def test_fold_is_idempotent_and_blind_to_invisible_characters(text, invisibles, rnd):
    chars = list(text)
    for c in invisibles:
        chars.insert(rnd.randint(0, len(chars)), c)
    spiked = "".join(chars)
    assert fold(fold(text)) == fold(text)
    assert fold(spiked) == fold(text)
    assert lookalike_key(spiked) == lookalike_key(text)
