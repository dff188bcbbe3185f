"""The Unicode tables behind submitted names (spaces_app/names.py), read from `unicode_names.json` beside
this module, and the builder that makes that file from Unicode's own data files.

The table holds, from the sources it names in its `sources` entry (versions, dates, SHA-256 of each file):
- `confusables`: UTS #39's confusables.txt, every line: a code point -> its prototype (the skeleton's map);
- `default_ignorable`: DerivedCoreProperties.txt's Default_Ignorable_Code_Point ranges;
- `assigned`: the code points assigned in the confusables' Unicode version (DerivedAge.txt, ages up to it):
  a newer character has no look-alike data yet;
- `scripts`: Scripts.txt ranges and their script;
- `joining_type`: DerivedJoiningType.txt ranges of the types L, D, R and T (where a ZWNJ may stand);
- `extended_pictographic`, `emoji_modifier`: emoji-data.txt ranges (emoji ZWJ and tag sequences);
- `emoji_variation_bases`: the characters emoji-variation-sequences.txt gives a text or emoji style (FE0E/FE0F).
Code points are hex strings as in the sources; a range is [first, last]. Nothing is fetched at run time.

Regenerate (the files named in `sources`, the UCD folder laid out as Unicode's UCD.zip with emoji/ inside):
    python -m spaces_app.unicode_data --confusables confusables.txt --ucd /usr/share/unicode \\
        [--confusables-from TEXT] [--ucd-from TEXT] --out spaces_app/unicode_names.json
"""

from __future__ import annotations

import argparse
import bisect
import functools
import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from trace_dataset.datafiles import read_table

TABLE_FILE = Path(__file__).with_name("unicode_names.json")
JOINING_TYPES = ("L", "D", "R", "T")  # RFC 5892 A.1: (L|D) T* ZWNJ T* (R|D)
UCD_FILES = {  # table entry -> the UCD file it comes from (relative to the UCD folder)
    "default_ignorable": "DerivedCoreProperties.txt",
    "assigned": "DerivedAge.txt",
    "scripts": "Scripts.txt",
    "joining_type": "extracted/DerivedJoiningType.txt",
    "extended_pictographic": "emoji/emoji-data.txt",
    "emoji_variation_bases": "emoji/emoji-variation-sequences.txt",
}
_VERSION = re.compile(r"^#\s*(?:Version:\s*|[A-Za-z]+-|Used with Emoji Version\s+)(\d+\.\d+(?:\.\d+)?)")
_DATE = re.compile(r"^#\s*Date:\s*(.+?)\s*$")
_COPYRIGHT = re.compile(r"^#\s*(©.*?)\s*$")
LICENSE = (
    "The tables are derived (modified: selected fields, merged ranges) from Unicode Data Files by "
    "spaces_app/unicode_data.py; the sources are named above.",
    "COPYRIGHT AND PERMISSION NOTICE: Copyright © 1991-2022 Unicode, Inc. All rights reserved. Distributed "
    "under the Terms of Use in https://www.unicode.org/copyright.html.",
    "Permission is hereby granted, free of charge, to any person obtaining a copy of the Unicode data files and "
    'any associated documentation (the "Data Files") or Unicode software and any associated documentation (the '
    '"Software") to deal in the Data Files or Software without restriction, including without limitation the '
    "rights to use, copy, modify, merge, publish, distribute, and/or sell copies of the Data Files or Software, "
    "and to permit persons to whom the Data Files or Software are furnished to do so, provided that either (a) "
    "this copyright and permission notice appear with all copies of the Data Files or Software, or (b) this "
    "copyright and permission notice appear in associated Documentation.",
    'THE DATA FILES AND SOFTWARE ARE PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, '
    "INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND "
    "NONINFRINGEMENT OF THIRD PARTY RIGHTS. IN NO EVENT SHALL THE COPYRIGHT HOLDER OR HOLDERS INCLUDED IN THIS "
    "NOTICE BE LIABLE FOR ANY CLAIM, OR ANY SPECIAL INDIRECT OR CONSEQUENTIAL DAMAGES, OR ANY DAMAGES WHATSOEVER "
    "RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS "
    "ACTION, ARISING OUT OF OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THE DATA FILES OR SOFTWARE.",
    "Except as contained in this notice, the name of a copyright holder shall not be used in advertising or "
    "otherwise to promote the sale, use or other dealings in these Data Files or Software without prior written "
    "authorization of the copyright holder.",
)


# -- reading the shipped table ------------------------------------------------------------------------------
class Ranges:
    """Sorted, non-overlapping code point ranges, each with a value; `get(c)` is the value of `c`'s range."""

    def __init__(self, rows: Iterable[tuple[str, ...]]):
        items = sorted((int(r[0], 16), int(r[1], 16), r[2] if len(r) > 2 else "") for r in rows)
        self.starts = [first for first, _, _ in items]
        self.ends = [last for _, last, _ in items]
        self.values = [value for _, _, value in items]

    def get(self, char: str) -> str | None:
        cp = ord(char)
        i = bisect.bisect_right(self.starts, cp) - 1
        return self.values[i] if i >= 0 and cp <= self.ends[i] else None

    def __contains__(self, char: object) -> bool:
        return isinstance(char, str) and len(char) == 1 and self.get(char) is not None


@functools.cache
def table() -> dict[str, Any]:
    """The shipped table (read once)."""
    return read_table(TABLE_FILE)


@functools.cache
def ranges(entry: str) -> Ranges:
    """One range entry of the table (`default_ignorable`, `assigned`, `scripts`, `joining_type`, ...)."""
    return Ranges(table()[entry])


@functools.cache
def prototypes() -> dict[str, str]:
    """character -> its TR39 prototype (characters that are their own prototype are absent)."""
    return {chr(int(k, 16)): _chars(v) for k, v in table()["confusables"].items()}


@functools.cache
def emoji_variation_bases() -> frozenset[str]:
    return frozenset(chr(int(c, 16)) for c in table()["emoji_variation_bases"])


def confusables_version() -> str:
    return str(table()["sources"]["confusables.txt"]["version"])


def _chars(hex_codes: str) -> str:
    return "".join(chr(int(h, 16)) for h in hex_codes.split())


# -- building it from Unicode's files -----------------------------------------------------------------------
def _data_lines(path: Path) -> Iterator[list[str]]:
    """The `;`-separated fields of each data line of a UCD-format file (comments dropped)."""
    with open(path, encoding="utf-8-sig") as f:
        for line in f:
            data = line.split("#", 1)[0].strip()
            if data:
                yield [field.strip() for field in data.split(";")]


def _span(field: str) -> tuple[int, int]:
    first, _, last = field.partition("..")
    return int(first, 16), int(last or first, 16)


def _merged(spans: Iterable[tuple[int, int, str]]) -> list[list[str]]:
    """Adjacent spans with one value joined; rows [first, last] (or [first, last, value] when values differ)."""
    out: list[tuple[int, int, str]] = []
    for first, last, value in sorted(spans):
        if out and out[-1][2] == value and out[-1][1] + 1 == first:
            out[-1] = (out[-1][0], last, value)
        else:
            out.append((first, last, value))
    return [[f"{a:04X}", f"{b:04X}", *([v] if v else [])] for a, b, v in out]


def _header(path: Path) -> dict[str, str]:
    """What the file says about itself: version, date, copyright line; and its SHA-256."""
    about: dict[str, str] = {"sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    with open(path, encoding="utf-8-sig") as f:
        for line in f:
            if not line.startswith("#"):
                break
            for key, pattern in (("version", _VERSION), ("date", _DATE), ("copyright", _COPYRIGHT)):
                match = pattern.match(line)
                if match and key not in about:
                    about[key] = match.group(1)
    return about


def read_confusables(path: Path) -> dict[str, str]:
    """confusables.txt -> {source code point: prototype code points}, hex as in the file."""
    out: dict[str, str] = {}
    for fields in _data_lines(path):
        source, target = fields[0], " ".join(fields[1].split())
        if " " in source or source in out:
            raise ValueError(f"{path}: {source}: a source is one code point, listed once")
        out[source] = target
    return dict(sorted(out.items(), key=lambda kv: int(kv[0], 16)))


def read_property(path: Path, prop: str) -> list[list[str]]:
    """The merged ranges of the code points `path` gives the binary property `prop`."""
    return _merged((*_span(f[0]), "") for f in _data_lines(path) if f[1] == prop)


def read_valued(path: Path, keep: Iterable[str] | None = None) -> list[list[str]]:
    """The merged ranges of a `range ; value` file, each with its value (only the values in `keep`)."""
    wanted = None if keep is None else set(keep)
    return _merged((*_span(f[0]), f[1]) for f in _data_lines(path) if wanted is None or f[1] in wanted)


def read_assigned(path: Path, version: str) -> list[list[str]]:
    """DerivedAge.txt: the ranges assigned in `version` or before."""
    limit = tuple(int(p) for p in version.split(".")[:2])
    return _merged(
        (*_span(f[0]), "") for f in _data_lines(path) if tuple(int(p) for p in f[1].split(".")) <= limit
    )


def read_variation_bases(path: Path) -> list[str]:
    """emoji-variation-sequences.txt: the bases of its sequences (each takes FE0E or FE0F)."""
    return sorted({f[0].split()[0] for f in _data_lines(path)}, key=lambda h: int(h, 16))


def build_table(
    confusables: Path, ucd: Path, confusables_from: str = "", ucd_from: str = ""
) -> dict[str, Any]:
    """The table `unicode_names.json` holds, from confusables.txt and a UCD folder."""
    about = _header(confusables)
    if "version" not in about:
        raise ValueError(f"{confusables}: no 'Version:' line in its header")
    files = {name: ucd / rel for name, rel in UCD_FILES.items()}
    sources = {"confusables.txt": {**about, "from": confusables_from}}
    for rel in sorted(set(UCD_FILES.values())):
        sources[rel] = {**_header(ucd / rel), "from": ucd_from}
    emoji = files["extended_pictographic"]
    return {
        "about": "Unicode data behind submitted names (spaces_app/unicode_data.py, spaces_app/names.py)",
        "license": list(LICENSE),
        "sources": sources,
        "confusables": read_confusables(confusables),
        "default_ignorable": read_property(files["default_ignorable"], "Default_Ignorable_Code_Point"),
        "assigned": read_assigned(files["assigned"], about["version"]),
        "scripts": read_valued(files["scripts"]),
        "joining_type": read_valued(files["joining_type"], JOINING_TYPES),
        "extended_pictographic": read_property(emoji, "Extended_Pictographic"),
        "emoji_modifier": read_property(emoji, "Emoji_Modifier"),
        "emoji_variation_bases": read_variation_bases(files["emoji_variation_bases"]),
    }


def write_table(data: dict[str, Any], out: Path) -> None:
    """`data` as JSON with one table row (or one confusable) per line: diffs of a regenerated file stay
    readable."""
    parts = []
    for key, value in data.items():
        if isinstance(value, list):
            body = ",\n".join(json.dumps(v, ensure_ascii=False) for v in value)
            text = f"[\n{body}\n]"
        elif key == "confusables":
            body = ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            text = f"{{\n{body}\n}}"
        else:
            text = json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True)
        parts.append(f"{json.dumps(key)}: {text}")
    out.write_text("{\n" + ",\n".join(parts) + "\n}\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spaces_app.unicode_data", description=__doc__)
    parser.add_argument("--confusables", type=Path, required=True, help="UTS #39 confusables.txt")
    parser.add_argument("--ucd", type=Path, required=True, help="UCD folder (with emoji/ and extracted/)")
    parser.add_argument("--confusables-from", default="", help="where that confusables.txt came from")
    parser.add_argument("--ucd-from", default="", help="where that UCD folder came from")
    parser.add_argument("--out", type=Path, default=TABLE_FILE)
    args = parser.parse_args(argv)
    write_table(build_table(args.confusables, args.ucd, args.confusables_from, args.ucd_from), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
