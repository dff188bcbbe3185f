"""One Yelp JSON line -> a typed record (`YelpBusiness`, `YelpReview`), or an entry in the malformed-line log.

Malformed: bad UTF-8, broken JSON, JSON nested too deeply, a number JSON does not allow (`NaN`, `Infinity`) or
that is not finite (`1e999`), an integer too long to convert, a field of the wrong type, coordinates off the
globe. Each is counted with its file and line (`MalformedLog`); with `strict=True` the first one raises
`TraceDataError`. `trace_dataset.yelp.reader` finds the lines in a bundle and re-exports these names.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from trace_dataset.constants import CITY_ALIASES, CITY_NAMES
from trace_dataset.io import TraceDataError
from trace_dataset.yelp.attributes import normalise_attributes, parse_price

try:  # the fast parser (the `fast` extra); without it every line goes through the stdlib's
    import orjson
except ImportError:  # pragma: no cover - exercised where orjson is absent
    orjson = None  # type: ignore[assignment]

log = logging.getLogger("trace_dataset.yelp.reader")  # one logger name for everything the reader reports


# ---------------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class YelpBusiness:
    """One business line, typed. `city` is canonical for the 8 Trace cities, else Yelp's (stripped)."""

    business_id: str
    name: str
    address: str
    city: str
    raw_city: str
    state: str
    postal_code: str
    latitude: float | None
    longitude: float | None
    stars: float
    review_count: int
    is_open: int | None
    categories: tuple[str, ...]
    attributes: dict[str, Any] = field(hash=False, compare=False)  # canonical, schema.ATTRIBUTE_FEATURES
    price: int | None = None
    hours: dict[str, str] | None = field(default=None, hash=False, compare=False)

    @property
    def in_trace_city(self) -> bool:
        return self.city in CITY_NAMES


@dataclass(frozen=True, slots=True)
class YelpReview:
    review_id: str
    business_id: str
    user_id: str
    stars: float
    date: str
    text: str
    useful: int = 0
    funny: int = 0
    cool: int = 0


def canonical_city(city: str | None) -> str:
    """Yelp's spelling -> the canonical Trace city ("St. Louis" -> "Saint Louis"); others stripped."""
    if not city:
        return ""
    key = " ".join(city.split()).lower()
    return CITY_ALIASES.get(key, " ".join(city.split()))


def split_categories(categories: str | list | None) -> tuple[str, ...]:
    """Yelp's one comma-separated string (or null) -> a tuple of names in Yelp's order, deduplicated."""
    if not categories:
        return ()
    parts = categories.split(",") if isinstance(categories, str) else categories
    seen: dict[str, None] = {}
    for p in parts:
        name = " ".join(str(p).split())
        if name:
            seen.setdefault(name, None)
    return tuple(seen)


# ---------------------------------------------------------------------------------------------------
# Malformed lines
# ---------------------------------------------------------------------------------------------------
@dataclass
class MalformedLog:
    """Counts malformed lines per file and keeps the first few (file, line, reason) for the report."""

    strict: bool = False
    keep: int = 20
    counts: Counter = field(default_factory=Counter)
    examples: list[dict[str, Any]] = field(default_factory=list)

    def add(self, file: str, line: int, reason: str) -> None:
        if self.strict:
            raise TraceDataError(
                f"malformed line: {reason} (--strict stops at the first one)", path=file, line=line
            )
        self.counts[file] += 1
        if len(self.examples) < self.keep:
            self.examples.append({"file": file, "line": line, "reason": reason})
        if self.counts[file] <= 5:
            log.warning("%s:%d: skipping malformed line: %s", file, line, reason)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "by_file": dict(sorted(self.counts.items())),
            "examples": list(self.examples),
        }


class _Bad(Exception):
    """A malformed line (internal: turned into a MalformedLog entry)."""


def _no_constant(name: str) -> float:
    raise _Bad(f"{name} is not a number JSON allows (expected a finite number)")


_JSON = json.JSONDecoder(parse_constant=_no_constant)  # NaN, Infinity, -Infinity: malformed, never stored
_WS = " \t\n\r"
# 19 digits in a row: possibly an integer past 64 bits, which orjson reads as a float where the stdlib keeps it
# exact, so such a line goes to the stdlib (digits in a string send it there too: slower, never different)
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
# Brackets past which a line may nest deeper than the stdlib's recursion allows (orjson allows 1,024 levels): such
# a line goes to the stdlib too, so that "nested too deeply" means what it meant without orjson
_MAX_FAST_BRACKETS = 256


def _decode(raw: bytes) -> dict[str, Any]:
    """One line -> its JSON object. orjson reads the lines it accepts as an object (the same object the stdlib
    gives); any other line (malformed, not an object, or one that may hold an integer past 64 bits or nest
    deeply, where the two parsers differ) goes through the stdlib, which names the reason."""
    if (
        orjson is not None
        and raw.count(b"[") + raw.count(b"{") <= _MAX_FAST_BRACKETS
        and _LONG_DIGITS.search(raw) is None
    ):
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
        else:
            if type(obj) is dict:
                return obj
    return _decode_stdlib(raw)


def _decode_stdlib(raw: bytes) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _Bad(f"bad UTF-8 (byte 0x{raw[e.start]:02x} at byte offset {e.start})") from None
    try:
        # json.loads without its wrapper: the C scanner, then nothing but whitespace may follow
        text = text.strip(_WS)
        obj, end = _JSON.raw_decode(text)
        if end != len(text):
            raise json.JSONDecodeError("Extra data", text, end)
    except json.JSONDecodeError as e:
        raise _Bad(f"broken JSON ({e.msg} at column {e.colno})") from None
    except RecursionError:
        raise _Bad("JSON nested too deeply (expected a flat Yelp record)") from None
    except ValueError as e:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        raise _Bad(f"unreadable number ({str(e).split(': value')[0]}); expected an ordinary number") from None
    if not isinstance(obj, dict):
        raise _Bad(f"expected a JSON object, got {type(obj).__name__}")
    return obj


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _string(obj: dict, key: str, *, required: bool = False) -> str:
    value = obj.get(key)
    if value is None:
        if required:
            raise _Bad(f"missing {key}")
        return ""
    if not isinstance(value, str):
        raise _Bad(f"wrong type for {key!r}: expected a string, got {_type_name(value)}")
    if required and not value.strip():
        raise _Bad(f"missing {key} (empty string)")
    return value


def _finite(value: int | float, key: str) -> float:
    """A JSON number as a finite float; 1e999 (infinite) and integers past float range are malformed."""
    try:
        x = float(value)
    except OverflowError:
        raise _Bad(f"{key!r} is out of range: expected a finite number") from None
    if not math.isfinite(x):
        raise _Bad(f"{key!r} is {x}: expected a finite number")
    return x


COORDINATE_RANGES = {"latitude": 90.0, "longitude": 180.0}


@overload
def _number(obj: dict, key: str, *, required: Literal[True]) -> float: ...
@overload
def _number(obj: dict, key: str, *, required: Literal[False]) -> float | None: ...
def _number(obj: dict, key: str, *, required: bool) -> float | None:
    value = obj.get(key)
    if value is None:
        if required:
            raise _Bad(f"missing {key!r}: expected a number")
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Bad(f"wrong type for {key!r}: expected a number, got {_type_name(value)}")
    x = _finite(value, key)
    limit = COORDINATE_RANGES.get(key)
    if limit is not None and not -limit <= x <= limit:
        raise _Bad(f"{key!r} is {x}: expected a coordinate in [-{limit:g}, {limit:g}]")
    return x


@overload
def _integer(obj: dict, key: str, default: int = 0) -> int: ...
@overload
def _integer(obj: dict, key: str, default: None) -> int | None: ...
def _integer(obj: dict, key: str, default: int | None = 0) -> int | None:
    value = obj.get(key)
    if value is None:
        return default
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or (isinstance(value, float) and (not math.isfinite(value) or value != int(value)))
    ):
        raise _Bad(f"wrong type for {key!r}: expected an integer, got {_type_name(value)} {value!r:.40}")
    return int(value)


def parse_business_obj(obj: dict[str, Any]) -> YelpBusiness:
    business_id = _string(obj, "business_id", required=True)
    attributes = obj.get("attributes")
    if attributes is not None and not isinstance(attributes, dict):
        raise _Bad(f"wrong type for 'attributes': expected an object or null, got {_type_name(attributes)}")
    categories = obj.get("categories")
    if (
        categories is not None
        and not isinstance(categories, str)
        and not (isinstance(categories, list) and all(isinstance(c, str) for c in categories))
    ):
        raise _Bad(
            f"wrong type for 'categories': expected a comma-separated string or null, got {_type_name(categories)}"
        )
    hours = obj.get("hours")
    if hours is not None and not isinstance(hours, dict):
        raise _Bad(f"wrong type for 'hours': expected an object or null, got {_type_name(hours)}")
    raw_city = _string(obj, "city")
    return YelpBusiness(
        business_id=business_id,
        name=_string(obj, "name"),
        address=_string(obj, "address"),
        city=canonical_city(raw_city),
        raw_city=raw_city,
        state=_string(obj, "state").strip(),
        postal_code=_string(obj, "postal_code"),
        latitude=_number(obj, "latitude", required=False),
        longitude=_number(obj, "longitude", required=False),
        stars=_number(obj, "stars", required=True),
        review_count=_integer(obj, "review_count"),
        is_open=_integer(obj, "is_open", default=None),
        categories=split_categories(categories),
        attributes=normalise_attributes(attributes),
        price=parse_price(attributes),
        hours=hours,
    )


def parse_review_obj(obj: dict[str, Any]) -> YelpReview:
    review_id = _string(obj, "review_id", required=True)
    business_id = _string(obj, "business_id", required=True)
    text = obj.get("text")
    if not isinstance(text, str):
        raise _Bad(f"wrong type for 'text': expected a string, got {_type_name(text)}")
    return YelpReview(
        review_id=review_id,
        business_id=business_id,
        user_id=_string(obj, "user_id"),
        stars=_number(obj, "stars", required=True),
        date=_string(obj, "date"),
        text=text,
        useful=_integer(obj, "useful"),
        funny=_integer(obj, "funny"),
        cool=_integer(obj, "cool"),
    )


def parse_review_core(
    raw: bytes, file: str, lineno: int, malformed: MalformedLog
) -> tuple[str, str, float, str, str] | None:
    """(review_id, business_id, stars, date, text) of a review line, the fields a knowledge base uses,
    validated like `parse_review_obj` does; None (counted in `malformed`) when the line is malformed."""
    try:
        obj = _decode(raw)
        review_id = obj.get("review_id")
        business_id = obj.get("business_id")
        stars = obj.get("stars")
        date = obj.get("date")
        text = obj.get("text")
        if (
            type(review_id) is str
            and review_id.strip()
            and type(business_id) is str
            and business_id.strip()
            and (type(stars) is float or type(stars) is int)
            and type(text) is str
            and (date is None or type(date) is str)
        ):
            return review_id, business_id, _finite(stars, "stars"), date or "", text
        r = parse_review_obj(obj)  # raises _Bad with the precise reason
        return r.review_id, r.business_id, r.stars, r.date, r.text
    except _Bad as e:
        malformed.add(file, lineno, str(e))
        return None


def parse_line(kind: str, raw: bytes, file: str, lineno: int, malformed: MalformedLog) -> Any:
    """One raw line -> YelpBusiness / YelpReview, or None (counted in `malformed`)."""
    try:
        obj = _decode(raw)
        return parse_business_obj(obj) if kind == "business" else parse_review_obj(obj)
    except _Bad as e:
        malformed.add(file, lineno, str(e))
        return None
