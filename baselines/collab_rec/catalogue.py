"""Collab-REC's own data in the authors' CSV formats, and which filters a city satisfies (M(c), §3.5.1).

Knowledge base (`eu-cities-database.csv`): one row per city x point of interest with the columns of
`KB_COLUMNS`; a city's attributes must be the same on all its rows. Queries (`queries.csv`): `config_id`,
`config` (a Python-literal dict with `filters`, optionally `p_id` and `persona`), `city` (a Python-literal list
of the cities satisfying the filters) and `query_v` (the query text). The paper's 900 SynthTRIPs queries are
not public; any file with these columns works. Bad input raises `TraceDataError` naming file, line and column.

M(c), the paper's reading (docs/collab_rec.md lists the choices): budget, popularity, walkability and aqi
compare the KB attribute case-insensitively ("not specified" matches nothing); month: the KB lists the month in
one of the city's season lists; seasonality X: the query's month is in the city's X-season list (without a
month: that list is non-empty); interests: a point of interest of the city matches the category's entry in
`interests.json`. A value "a or b" accepts either. A name outside the catalogue satisfies nothing.
`filters_always_match` (the authors' code) makes month match any name and seasonality any catalogue city.
"""

from __future__ import annotations

import ast
import calendar
import csv
import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from trace_dataset.io import TraceDataError, sha256_file

KB_COLUMNS: tuple[str, ...] = (
    "city",
    "country",
    "budget",
    "walkability",
    "aqi",
    "popularity",
    "low_season",
    "medium_season",
    "high_season",
    "interest_type",
    "interest_title",
    "interest_text",
)
CITY_ATTRIBUTES: tuple[str, ...] = ("country", "budget", "walkability", "aqi", "popularity")
SEASONS: tuple[str, ...] = ("low", "medium", "high")
QUERY_COLUMNS: tuple[str, ...] = ("config_id", "config", "city", "query_v")
MONTHS: tuple[str, ...] = tuple(calendar.month_name[1:])
LEVELS: tuple[str, ...] = ("low", "medium", "high")
INTERESTS_FILE = Path(__file__).with_name("interests.json")
# filter name -> allowed values (lower case); interests come from interests.json, aqi from the KB
FILTER_VALUES: dict[str, tuple[str, ...]] = {
    "popularity": LEVELS,
    "budget": LEVELS,
    "seasonality": SEASONS,
    "month": tuple(m.lower() for m in MONTHS),
    "walkability": ("great", "okay", "bad"),
    "aqi": ("great", "good", "moderate", "unhealthy for some", "unhealthy"),
}
NO_VALUE = "not specified"


@dataclass(frozen=True)
class City:
    name: str
    country: str
    budget: str
    walkability: str
    aqi: str
    popularity: str
    seasons: dict[str, tuple[str, ...]]  # "low" | "medium" | "high" -> month names
    n_pois: int
    interests: frozenset[str]  # interest categories (interests.json) the city's points of interest match


@dataclass(frozen=True)
class CityKB:
    """The closed catalogue: cities in file order, with the attributes the filters are checked on."""

    cities: dict[str, City]
    path: str
    sha256: str
    interests_sha256: str

    @property
    def names(self) -> list[str]:
        return list(self.cities)


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    filters: dict[str, str]  # name -> value as written (lower-cased)
    persona: str = ""
    cities: tuple[str, ...] = ()  # the file's list of cities satisfying the filters
    line: int = 0


@cache
def interests_lexicon() -> tuple[dict[str, tuple[frozenset[str], re.Pattern[str] | None]], int, str]:
    """(category -> (interest types, pattern), minimum matching POIs, the file's SHA-256)."""
    raw = INTERESTS_FILE.read_bytes()
    data = json.loads(raw)
    lexicon = {
        name: (
            frozenset(entry.get("interest_types", ())),
            re.compile(entry["pattern"]) if entry.get("pattern") else None,
        )
        for name, entry in data["categories"].items()
    }
    return lexicon, int(data.get("min_pois", 1)), hashlib.sha256(raw).hexdigest()


def _csv_records(path: Path, columns: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """(first line of the record, row) for each CSV record; the header must hold `columns`. A file that is not
    UTF-8 text, or a field past the csv module's limit (131,072 characters), is a TraceDataError naming the line."""
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        try:
            yield from _records(reader, path, columns)
        except UnicodeDecodeError:
            raise TraceDataError(
                "not UTF-8 text; save the CSV as UTF-8", path=path, line=_first_bad_line(path)
            ) from None
        except csv.Error as e:
            raise TraceDataError(
                f"not a readable CSV record ({e})", path=path, line=reader.line_num
            ) from None


def _first_bad_line(path: Path) -> int | None:
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return None


def _records(reader: Any, path: Path, columns: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    header = next(reader, None)
    if header is None:
        raise TraceDataError(f"empty file; expected a CSV header with {list(columns)}", path=path, line=1)
    header = [h.strip().lstrip("\ufeff") for h in header]
    missing = [c for c in columns if c not in header]
    if missing:
        raise TraceDataError(f"missing column(s) {missing}; expected {list(columns)}", path=path, line=1)
    index = {c: header.index(c) for c in columns}
    start = reader.line_num + 1
    for values in reader:
        if not any(v.strip() for v in values):
            start = reader.line_num + 1
            continue
        if len(values) != len(header):
            raise TraceDataError(
                f"{len(values)} fields where the header has {len(header)}", path=path, line=start
            )
        yield start, {c: values[i] for c, i in index.items()}
        start = reader.line_num + 1


def _literal(text: str, path: Path, line: int, column: str, kind: type) -> Any:
    try:
        value = ast.literal_eval(text) if text.strip() else kind()
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):  # TypeError: `{[1]: 2}`
        raise TraceDataError(
            f"column {column!r}: not a Python literal {kind.__name__}: {text[:60]!r}", path=path, line=line
        ) from None
    if not isinstance(value, kind):
        raise TraceDataError(
            f"column {column!r}: expected a {kind.__name__}, got {type(value).__name__}", path=path, line=line
        )
    return value


def load_city_kb(path: str | os.PathLike) -> CityKB:
    """The city knowledge base of a CSV in the authors' format (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise TraceDataError("knowledge base file not found", path=path)
    stat = path.stat()
    return _load_city_kb(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4)
def _load_city_kb(resolved: str, mtime_ns: int, size: int) -> CityKB:
    """Parsed once per file version (matching the interest patterns over every row takes about a second)."""
    path = Path(resolved)
    lexicon, min_pois, lexicon_sha = interests_lexicon()
    attrs: dict[str, dict[str, Any]] = {}
    counts: dict[str, dict[str, int]] = {}
    parsed: dict[str, tuple[str, ...]] = {}  # season-list text -> months (the same lists repeat on every row)
    for line, row in _csv_records(path, KB_COLUMNS):
        name = row["city"].strip()
        if not name:
            raise TraceDataError("column 'city': empty city name", path=path, line=line)
        seasons = {}
        for season in SEASONS:
            text = row[f"{season}_season"]
            if text not in parsed:
                months = _literal(text, path, line, f"{season}_season", list)
                bad = [m for m in months if m not in MONTHS]
                if bad:
                    raise TraceDataError(
                        f"column '{season}_season': {bad[0]!r} is not a month name; expected "
                        f"English month names",
                        path=path,
                        line=line,
                    )
                parsed[text] = tuple(months)
            seasons[season] = parsed[text]
        city = {**{k: row[k].strip() for k in CITY_ATTRIBUTES}, "seasons": seasons}
        if name not in attrs:
            attrs[name], counts[name] = city, {}
        elif attrs[name] != city:
            differing = sorted(k for k in city if city[k] != attrs[name][k])
            raise TraceDataError(
                f"city {name!r}: column(s) {differing} differ from its earlier rows; a city's "
                "attributes must be the same on all its rows",
                path=path,
                line=line,
            )
        text = f"{row['interest_title']} {row['interest_text']}".lower()
        for category, (types, pattern) in lexicon.items():
            if row["interest_type"].strip() in types or (pattern is not None and pattern.search(text)):
                counts[name][category] = counts[name].get(category, 0) + 1
        counts[name][""] = counts[name].get("", 0) + 1
    if not attrs:
        raise TraceDataError("no city rows", path=path)
    cities = {
        name: City(
            name=name,
            **a,
            n_pois=counts[name][""],
            interests=frozenset(c for c, n in counts[name].items() if c and n >= min_pois),
        )
        for name, a in attrs.items()
    }
    return CityKB(cities, str(path), sha256_file(path), lexicon_sha)


def check_filters(filters: Any, path: Path, line: int) -> dict[str, str]:
    """A query's filters, lower-cased and checked against `FILTER_VALUES` and the interests lexicon."""
    if not isinstance(filters, dict):
        raise TraceDataError(
            f"column 'config': 'filters' must be a dict, got {type(filters).__name__}", path=path, line=line
        )
    allowed = {**FILTER_VALUES, "interests": tuple(c.lower() for c in interests_lexicon()[0])}
    out = {}
    for key, value in filters.items():
        if key not in allowed:
            raise TraceDataError(
                f"column 'config': unknown filter {key!r}; expected some of {sorted(allowed)}",
                path=path,
                line=line,
            )
        if value is None:
            continue
        if not isinstance(value, str):
            raise TraceDataError(
                f"column 'config': filter {key!r} must be a string, got {type(value).__name__}",
                path=path,
                line=line,
            )
        for option in value.lower().split(" or "):
            if option.strip() not in allowed[key]:
                raise TraceDataError(
                    f"column 'config': filter {key}={value!r}; expected one of {list(allowed[key])}",
                    path=path,
                    line=line,
                )
        out[key] = value.strip().lower()
    return out


def load_queries(path: str | os.PathLike) -> list[Query]:
    """Queries of a CSV in the authors' format; config ids must be unique."""
    path = Path(path)
    if not path.is_file():
        raise TraceDataError("query file not found", path=path)
    out: list[Query] = []
    seen: dict[str, int] = {}
    for line, row in _csv_records(path, QUERY_COLUMNS):
        qid = row["config_id"].strip()
        if not qid:
            raise TraceDataError("column 'config_id': empty", path=path, line=line)
        if qid in seen:
            raise TraceDataError(
                f"column 'config_id': {qid!r} already used on line {seen[qid]}", path=path, line=line
            )
        seen[qid] = line
        config = _literal(row["config"], path, line, "config", dict)
        if "filters" not in config:
            raise TraceDataError("column 'config': no 'filters' key", path=path, line=line)
        filters = check_filters(config["filters"], path, line)
        cities = _literal(row["city"], path, line, "city", list)
        text = row["query_v"].strip().strip('"').strip()
        if not text:
            raise TraceDataError("column 'query_v': empty query text", path=path, line=line)
        out.append(Query(qid, text, filters, str(config.get("persona") or ""), tuple(map(str, cities)), line))
    if not out:
        raise TraceDataError("no query rows", path=path)
    return out


def city_matcher(
    kb: CityKB, query_filters: dict[str, str], always_match: bool = False
) -> Callable[[str, str, Any], bool]:
    """M(c) for one query: satisfies(city, filter name, value) on the knowledge base (module docstring)."""
    month = query_filters.get("month")
    month = month.capitalize() if month and " or " not in month else None
    lexicon_names = {c.lower(): c for c in interests_lexicon()[0]}

    def satisfies(name: str, key: str, value: Any) -> bool:
        if always_match and key == "month":
            return True
        city = kb.cities.get(name)
        if city is None:
            return False
        options = [o.strip() for o in str(value).lower().split(" or ")]
        if key in CITY_ATTRIBUTES:
            have = getattr(city, key).strip().lower()
            return have != NO_VALUE and have in options
        if key == "month":
            listed = {m.lower() for months in city.seasons.values() for m in months}
            return any(o in listed for o in options)
        if key == "seasonality":
            if always_match:
                return True
            if month is None:
                return any(city.seasons.get(o) for o in options)
            return any(month in city.seasons.get(o, ()) for o in options)
        if key == "interests":
            return any(lexicon_names.get(o) in city.interests for o in options)
        raise ValueError(f"unknown filter {key!r}; expected one of {sorted([*FILTER_VALUES, 'interests'])}")

    return satisfies
