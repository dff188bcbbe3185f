"""The registry of metrics: one keyword-only declaration per canonical id, and it drives scoring.

The habit: a metric's definition lives apart from what runs it (its id, parameters, direction, description and
paper reference declared once, as plain data), its id is the data key everywhere (display labels are mapped at
the edge only), and the declaration carries its computation (its per-item function and aggregation), so
every scoring loop iterates over declarations instead of listing ids again.

A declaration (`MetricSpec`) says what the metric is (id, label, direction, range, description, paper
reference, benchmark, level of its items) and how it is computed: its per-item function (`item`: one item and
the metric's parameters in, a float or None out; Trace's in `trace_metrics.lib.items`, the other benchmarks'
in `trace_metrics.lib.benchmark_items`) with fixed `arguments` (Recall@1: k=1), and its aggregation
(`aggregate`, by default `mean_or_none`: the mean of the defined item values). A composite (`cgs`, `cgs_ent`)
has no item function: its aggregation takes the values of its `components` (the CGS formula on the GS or
entailment, CD and PC means, as the paper's Tables 5, 22, 26). Every declaration has one or the other.

The ids are the keys of results files, leaderboard columns (`trace_metrics.tables`, which reads each
column's label, axis and direction from here) and the Space. Every benchmark computes its declarations
through the one loop of `trace_metrics.lib.scoring`: the Trace suite (`lib.suite`) those of benchmark
"trace" at the levels it builds items of (`SUITE_METRICS`), the human evaluation (`lib.human`) Trace's
`human_*`, `lib.interactive` SnipRec's and the live dialogues', `lib.collab_rec` Collab-REC's and
`core.scoring` CoRE's; so a metric is added by one declaration plus its per-item function
(docs/development.md, "Adding a metric").

A metric's parameters are those of its functions (after the item, and keyword-only ones of its aggregation)
that are not fixed `arguments`. Each is declared once in `OPTIONS` (`Option`: type, admissible values, help):
its default is read from the signature of the library function that defines it (never written here), and the
suite's keyword arguments, the options of `trace-bench evaluate` and those of the `evaluate` modules all come
from that one declaration.

Modules: `options` (the options), `metric` (`MetricSpec`), `trace` (Trace's declarations), `benchmarks` (the
other benchmarks' declarations); this package holds the registry and its lookups.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from trace_metrics.specs.benchmarks import BENCHMARK_SPECS
from trace_metrics.specs.metric import (
    BENCHMARKS,
    SUITE_LEVELS,
    Benchmark,
    Family,
    Level,
    MetricSpec,
    Need,
    item_parameters,
    keyword_only,
)
from trace_metrics.specs.options import OPTIONS, SUITE_OPTIONS, MetricOptionError, Option, resolve_options
from trace_metrics.specs.trace import TRACE_SPECS

__all__ = [
    "BENCHMARKS",
    "METRICS",
    "METRIC_IDS",
    "MODEL_FREE_METRIC_IDS",
    "OPTIONS",
    "SUITE_LEVELS",
    "SUITE_METRICS",
    "SUITE_OPTIONS",
    "Benchmark",
    "Family",
    "Level",
    "MetricOptionError",
    "MetricSpec",
    "Need",
    "Option",
    "by_family",
    "by_module",
    "item_parameters",
    "keyword_only",
    "module_options",
    "of_benchmark",
    "parameters",
    "resolve_options",
    "spec",
    "to_dict",
]

_SPECS: tuple[MetricSpec, ...] = (*TRACE_SPECS, *BENCHMARK_SPECS)
METRICS: Mapping[str, MetricSpec] = MappingProxyType({s.id: s for s in _SPECS})
METRIC_IDS: tuple[str, ...] = tuple(METRICS)
# what the Trace suite computes from the declarations, in results order (the human evaluation's are computed
# from annotations, `lib.human`)
SUITE_METRICS: tuple[MetricSpec, ...] = tuple(
    s for s in _SPECS if s.benchmark == "trace" and s.level in SUITE_LEVELS
)
# the Trace metrics a run without an NLI model, a judge or annotations reports (`trace-bench evaluate`'s
# default)
MODEL_FREE_METRIC_IDS: tuple[str, ...] = tuple(s.id for s in SUITE_METRICS if s.needs is None)


def spec(metric_id: str) -> MetricSpec:
    """The spec of a metric id; a parametrised id (`spatial_coherence@1.5km`) gets its family's spec."""
    try:
        return METRICS[metric_id]
    except KeyError:
        if metric_id.startswith("spatial_coherence@") and metric_id.endswith("km"):
            return METRICS["spatial_coherence@2km"]
        raise KeyError(f"unknown metric id {metric_id!r}; expected one of {METRIC_IDS}") from None


def by_family(family: str) -> tuple[MetricSpec, ...]:
    return tuple(s for s in _SPECS if s.family == family)


def by_module(module: str) -> tuple[MetricSpec, ...]:
    return tuple(s for s in _SPECS if s.module == module)


def of_benchmark(benchmark: str) -> tuple[MetricSpec, ...]:
    if benchmark not in BENCHMARKS:
        raise KeyError(f"unknown benchmark {benchmark!r}; expected one of {BENCHMARKS}")
    return tuple(s for s in _SPECS if s.benchmark == benchmark)


def module_options(module: str) -> tuple[str, ...]:
    """The suite options the metrics of an evaluate module take (their components' too), in declared order."""
    names: set[str] = set()
    for s in by_module(module):
        names.update(s.option_names)
        for c in s.components:
            names.update(METRICS[c].option_names)
    return tuple(o for o in SUITE_OPTIONS if o in names)


def parameters(s: MetricSpec) -> Mapping[str, Any]:
    """Every parameter of a metric with its default, for display: its options and its components', the
    grounding turns of a grounded metric, its settings, fixed arguments and constants."""
    names = set(s.option_names) | set(s.settings)
    for c in s.components:
        names |= set(METRICS[c].option_names) | set(METRICS[c].settings)
    if s.level == "grounded_turn":
        names.add("grounding_turns")
    defaults = {o: OPTIONS[o].default for o in OPTIONS if o in names}
    return MappingProxyType({**s.arguments, **s.constants, **defaults})


def to_dict(s: MetricSpec) -> dict[str, Any]:
    """A declaration as plain data (what the Space's About tab and the docs show)."""
    return {
        "id": s.id,
        "label": s.label,
        "benchmark": s.benchmark,
        "family": s.family,
        "module": s.module,
        "higher_is_better": s.higher_is_better,
        "range": list(s.range),
        "level": s.level,
        "description": s.description,
        "paper": s.paper,
        "parameters": dict(parameters(s)),
        "novel": s.novel,
        "components": list(s.components),
        "needs": s.needs,
        "former_id": s.former_id or None,
    }
