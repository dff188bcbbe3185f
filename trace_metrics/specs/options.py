"""The metric options: typed parameters declared once (`Option`), their defaults read from the library."""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any

from trace_bench.errors import TraceBenchError
from trace_metrics.lib.conventions import COMPARE_HITS, GROUNDING_TURNS, SCORED_TURNS, T2R_READINGS


class MetricOptionError(TraceBenchError, ValueError):
    """A metric option with an unknown name or a value outside what its declaration admits."""


@cache
def _signature_default(source: str, argument: str) -> Any:
    module, _, qualname = source.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    default = inspect.signature(obj).parameters[argument].default
    if default is inspect.Parameter.empty:
        raise TypeError(f"{source} has no default for {argument!r}")
    return default


@dataclass(frozen=True, kw_only=True)
class Option:
    """A typed metric parameter, declared once: the keyword of the suite and the `evaluate` modules, and (when
    `suite`) the option `--<name-with-dashes>` of `trace-bench evaluate`."""

    name: str
    type: type  # of a command-line value (int, float, str or bool)
    source: str  # "module:function" whose signature holds the default (read, never restated)
    argument: str = ""  # the parameter's name there, when it is not `name`
    help: str
    low: float | None = None  # admissible numbers: low <= x (low < x when low_open) and x <= high
    low_open: bool = False
    high: float | None = None
    words: tuple[str, ...] = ()  # words admitted besides numbers ("exact")
    choices: tuple[str, ...] = ()  # the values of a str option
    suite: bool = True  # a keyword of the Trace suite and an option of `trace-bench evaluate`

    @property
    def default(self) -> Any:
        return _signature_default(self.source, self.argument or self.name)

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def admits(self) -> str:
        """What the option admits, for messages: "in (0, 1]", "> 0", "one of ('a', 'b')"..."""
        if self.type is bool:
            return "True or False"
        if self.type is str:
            return f"one of {self.choices}" if self.choices else "a non-empty string"
        low, high = self.low, self.high
        if low is not None and high is not None:
            text = f"in {'(' if self.low_open else '['}{low:g}, {high:g}]"
        elif low is not None:
            text = f"{'>' if self.low_open else '>='} {low:g}"
        else:
            text = f"<= {high:g}" if high is not None else "a number"
        return text + "".join(f" or {w!r}" for w in self.words)

    def problem(self, value: Any) -> str | None:
        """None when `value` is admissible, else what is wrong ("must be in (0, 1], got 0")."""
        if self.type is bool:
            ok = isinstance(value, bool)
        elif self.type is str:
            ok = value in self.choices if self.choices else isinstance(value, str) and bool(value)
        elif isinstance(value, str):
            ok = value in self.words
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value):
            ok = self.low is None or (self.low < value if self.low_open else self.low <= value)
            ok = ok and (self.high is None or value <= self.high)
        else:
            ok = False
        return None if ok else f"must be {self.admits()}, got {value!r}"


_GROUNDING_DEFAULTS = "trace_metrics.lib.grounding:aggregate"
_OPTIONS: tuple[Option, ...] = (
    Option(
        name="fuzzy_threshold",
        type=float,
        source=_GROUNDING_DEFAULTS,
        low=0.0,
        high=1.0,
        words=("exact",),
        help="GS: a quote is supported when its rapidfuzz partial_ratio against the cited reviews reaches it",
    ),
    Option(
        name="cd_gate",
        type=float,
        source=_GROUNDING_DEFAULTS,
        low=0.0,
        low_open=True,
        high=1.0,
        help="CGS: the citation density at which CGS stops penalising",
    ),
    Option(
        name="pc_window",
        type=int,
        source=_GROUNDING_DEFAULTS,
        low=0.0,
        help="PC: characters around an aspect mention searched for a citation label",
    ),
    Option(
        name="radius_km",
        type=float,
        source="trace_metrics.lib.practical:spatial_coherence",
        low=0.0,
        low_open=True,
        help="spatial coherence radius in km (the id becomes spatial_coherence@<r>km)",
    ),
    Option(
        name="use_stemmer",
        type=bool,
        source="trace_metrics.lib.text:rouge_l",
        help="ROUGE-L: Porter-stem the tokens (rouge-score's use_stemmer)",
    ),
    Option(
        name="grounding_turns",
        type=str,
        source="trace_metrics.lib.items:grounded_items",
        choices=GROUNDING_TURNS,
        help="turns the grounding metrics average over: recommend/compare turns (App. J) or every system "
        "turn (Table 20's n); docs/leaderboard.md",
    ),
    Option(
        name="compare_hit",
        type=str,
        source="trace_metrics.lib.selection:recovery_turns",
        choices=COMPARE_HITS,
        help="when a compare turn is a hit for TSR, T2R and rejection recovery: a gold POI among its top two or "
        "its top-1 only",
    ),
    Option(
        name="t2r",
        type=str,
        source="trace_metrics.lib.recovery:turns_to_first_hit",
        argument="reading",
        choices=T2R_READINGS,
        help="T2R: recommend/compare turns up to the first hit (App. J as written) or the first hit's turn "
        "index in the dialogue (the reading the paper's 3.00-5.57 fit)",
    ),
    Option(
        name="scored_turns",
        type=str,
        source="trace_metrics.lib.conventions:resolve_scored_turns",
        choices=SCORED_TURNS,
        help="system turns scored: every one, only each dialogue's last (a blind set: TSR, T2R and practical "
        "value have no value), or 'auto', the last where the data directory's period.json says so; "
        "docs/leaderboard.md",
    ),
    Option(
        name="nli_model",
        type=str,
        source="trace_metrics.lib.entailment:NLIScorer",
        argument="model",
        suite=False,
        help="entailment: the NLI model (the suite takes it as `nli`, the CLI as --nli)",
    ),
    Option(
        name="nli_threshold",
        type=float,
        source="trace_metrics.lib.entailment:NLIScorer",
        argument="threshold",
        low=0.0,
        high=1.0,
        suite=False,
        help="entailment: a sentence is entailed from this probability on",
    ),
)
OPTIONS: Mapping[str, Option] = MappingProxyType({o.name: o for o in _OPTIONS})
SUITE_OPTIONS: tuple[str, ...] = tuple(o.name for o in _OPTIONS if o.suite)


def resolve_options(given: Mapping[str, Any], names: Iterable[str] = SUITE_OPTIONS) -> dict[str, Any]:
    """`given` completed with the declared defaults of `names` (in declaration order), every value checked;
    MetricOptionError names an unknown option (and the valid ones) or a value outside the declaration."""
    names = tuple(names)
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise MetricOptionError(f"unknown metric option(s) {unknown}; expected some of {list(names)}")
    out = {}
    for name in names:
        option = OPTIONS[name]
        value = given.get(name, option.default)
        problem = option.problem(value)
        if problem:
            raise MetricOptionError(f"{name} {problem}")
        out[name] = value
    return out
