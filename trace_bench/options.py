"""argparse types shared by every command: numbers refused when the options are parsed, naming the range.

`number_in(int, 0)` for a seed, `number_in(float, 0, 1)` for a weight, `positive_seconds` for a timeout: a
non-number, NaN, an infinity or a value out of range stops the command at once with argparse's usage line
(`argument --seed: expected a value >= 0, got '-1'`), before anything is loaded or written.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any


def number_in(
    kind: type,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> Callable[[str], Any]:
    """argparse type: a finite int or float in [low, high] (open ends with low_open / high_open), refused with
    the range otherwise."""

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except (ValueError, OverflowError):
            what = "an integer" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        below = value <= low if low_open else value < low
        above = value >= high if high_open else value > high
        if not math.isfinite(value) or below or above:
            raise argparse.ArgumentTypeError(
                f"expected {_range(kind, low, high, low_open, high_open)}, got {text!r}"
            )
        return value

    parse.__name__ = kind.__name__  # argparse names the type in its messages; the CLI walk classifies by it
    return parse


def _range(kind: type, low: float, high: float, low_open: bool, high_open: bool) -> str:
    noun = "an integer" if kind is int else "a finite number"
    if math.isfinite(low) and math.isfinite(high):
        return f"{noun} in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if math.isfinite(low):
        return f"{noun} {'>' if low_open else '>='} {low:g}"
    if math.isfinite(high):
        return f"{noun} {'<' if high_open else '<='} {high:g}"
    return noun


def positive_seconds(text: str) -> float:
    """argparse type: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds > 0, got {text!r}")
    return value


def byte_size(text: str) -> int:
    """argparse type: a number of bytes > 0, plain or with a binary suffix (`512K`, `2M`, `1G`)."""
    units = {"k": 2**10, "m": 2**20, "g": 2**30}
    body, scale = text.strip(), 1
    if body[-1:].lower() in units:
        body, scale = body[:-1], units[body[-1].lower()]
    try:
        value = float(body) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a size in bytes (e.g. 1048576, 512K, 2M), got {text!r}"
        ) from None
    if not 1 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"expected a size of at least 1 byte, got {text!r}")
    return int(value)


__all__ = ["byte_size", "number_in", "positive_seconds"]
