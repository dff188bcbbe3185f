"""The declaration of a metric (`MetricSpec`) and the vocabularies its fields take."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from types import MappingProxyType
from typing import Any, Literal

from trace_metrics.lib._util import mean_or_none
from trace_metrics.specs.options import OPTIONS

Benchmark = Literal["trace", "live", "sniprec", "collab_rec", "core"]
# trace: `trace-bench evaluate` and the leaderboard (teacher-forced; also run on live turns); live: the
# `trace` protocol of `trace-bench interact`; sniprec: SnipRec's per-turn ranking protocol; collab_rec:
# Collab-REC's benchmark (`trace-bench collab-rec`); core: the CoRE LLM evaluator (`trace-bench core`)
BENCHMARKS: tuple[str, ...] = ("trace", "live", "sniprec", "collab_rec", "core")
Family = Literal[
    "accuracy",
    "grounding",
    "judge",
    "text",
    "practical",
    "recovery",
    "human",
    "ranking",
    "outcome",
    "collaboration",
    "exposure",
    "evaluator",
]
Level = Literal[
    "recommendation_turn",  # a recommend/compare system turn (by the reference action)
    "grounded_turn",  # a recommend/compare turn, or any system turn with grounding_turns="system"
    "system_turn",
    "dialogue",
    "rejection_episode",  # a reject_and_refine turn with a following recommend/compare turn
    "human_item",  # an annotated response
    "human_quote",  # a quote of an annotated response, with its majority label
    "ranked_turn",  # a live system turn asked for a ranking (its target's position)
    "live_dialogue",  # a live dialogue's record (the `trace` protocol)
    "query",  # a Collab-REC query: one system's final list
    "catalogue_item",  # a Collab-REC catalogue item: how often the lists recommend it (its exposure)
    "agent_round",  # a Collab-REC agent in one round
    "conversation_log",  # a conversation CoRE rates (its record)
]
# the levels the Trace suite builds items of (`lib.suite`): the Trace metrics it computes are those at them
SUITE_LEVELS: tuple[str, ...] = (
    "recommendation_turn",
    "grounded_turn",
    "system_turn",
    "dialogue",
    "rejection_episode",
)
Need = Literal[
    "nli", "judge", "debate"
]  # computed only when the run has an NLI model, a judge, CoRE's debate


@cache
def keyword_only(fn: Callable | None) -> tuple[str, ...]:
    """The keyword-only parameters of a function: an aggregation's parameters."""
    if fn is None:
        return ()
    return tuple(p.name for p in inspect.signature(fn).parameters.values() if p.kind is p.KEYWORD_ONLY)


@cache
def item_parameters(fn: Callable | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A per-item function's parameters after the item: (those it takes by position, in order; its
    keyword-only ones). The scoring loop passes the first kind positionally (a keyword call costs several times
    more, and runs once per item), the second by name."""
    if fn is None:
        return (), ()
    params = list(inspect.signature(fn).parameters.values())[1:]
    positional = tuple(p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD)
    return positional, tuple(p.name for p in params if p.kind is p.KEYWORD_ONLY)


@dataclass(frozen=True, kw_only=True)
class MetricSpec:
    id: str  # canonical id: the key in results files
    label: str  # default display label (the UI may map its own)
    benchmark: Benchmark
    family: Family
    higher_is_better: bool
    range: tuple[float, float | None]  # (low, high); high None = unbounded
    level: Level  # what one item is
    description: str
    paper: str  # where the paper defines or reports it
    item: Callable[..., float | None] | None = None  # per-item function: (item, *parameters)
    arguments: Mapping[str, Any] = field(default_factory=dict)  # fixed keyword arguments of `item`
    aggregate: Callable[..., float | None] = mean_or_none  # item values (or component values) -> the value
    components: tuple[str, ...] = ()  # ids whose values `aggregate` combines (a formula of means)
    needs: Need | None = None  # computed only when the run has it (an NLI model, an LLM judge, a debate)
    result_id: Callable[..., str] | None = None  # the results key when a parameter is part of it
    module: str | None = None  # the evaluate module (trace_metrics/<module>/) that reports it
    settings: tuple[str, ...] = ()  # options outside the suite that shape it (NLI model and threshold)
    constants: Mapping[str, Any] = field(default_factory=dict)  # fixed settings of the definition, shown
    novel: bool = False  # marked novel (star) in the paper's Table 7
    former_id: str = ""  # its key in results files of earlier versions (docs/metrics.md, "Changed ids")

    def __post_init__(self) -> None:
        if (self.item is None) == (not self.components):
            raise ValueError(
                f"metric {self.id!r}: declare a per-item function (`item`) or the `components` its "
                "aggregation combines, not both and not neither"
            )
        object.__setattr__(self, "arguments", MappingProxyType(dict(self.arguments)))
        object.__setattr__(self, "constants", MappingProxyType(dict(self.constants)))

    @cached_property
    def option_names(self) -> tuple[str, ...]:
        """The options its item function and aggregation take, in `OPTIONS` order."""
        own = {*self.item_parameter_names, *keyword_only(self.aggregate)} - set(self.arguments)
        return tuple(o for o in OPTIONS if o in own)

    @property
    def item_parameter_names(self) -> tuple[str, ...]:
        """Every parameter of its per-item function after the item (fixed arguments and options)."""
        positional, keyword = item_parameters(self.item)
        return positional + keyword

    @property
    def item_function(self) -> Callable[..., float | None]:
        """Its per-item function; TypeError for a composite (it has components instead)."""
        if self.item is None:
            raise TypeError(f"metric {self.id} has no per-item function")
        return self.item

    def key(self, options: Mapping[str, Any]) -> str:
        """Its results key under `options` (`spatial_coherence@1.5km` with radius_km=1.5)."""
        if self.result_id is None:
            return self.id
        return self.result_id(**{p: options[p] for p in inspect.signature(self.result_id).parameters})
