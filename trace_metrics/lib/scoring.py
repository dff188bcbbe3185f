"""The one scoring loop: metric declarations (`trace_metrics.specs`) computed on the items of their levels.

Every benchmark scores this way: the Trace suite (`lib.suite`), SnipRec's per-turn ranks and the live
dialogues (`lib.interactive`), Collab-REC (`lib.collab_rec`), CoRE (`core.scoring`) and the human evaluation
(`lib.human`). A driver builds the items of each level it has (`items[level]`), `score` runs each
declaration's per-item function on the items of its level, in declaration order, and aggregates; a composite
(`components`) applies its aggregation to the values of its components. The driver then lays the values out
in its own results file; it holds no list of ids of its own, so a declaration added to the registry is
computed with no second change.

A per-item function gets its parameters by position when they are positional (the loop passes the values
with `itertools.repeat`: a keyword call costs several times more, and runs once per item), keyword-only ones
by name; `options` holds the declared options a run resolved (`specs.resolve_options`), fixed `arguments`
come from the declaration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from itertools import repeat
from types import MappingProxyType
from typing import Any, NamedTuple

from trace_metrics.specs.metric import MetricSpec, item_parameters, keyword_only

NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


class Scores(NamedTuple):
    """What `score` returns; every mapping is keyed by the metric's results key (`MetricSpec.key`), in
    declaration order."""

    values: dict[str, Any]
    n: dict[str, int]  # defined item values behind each value (a composite: its first component's)
    per_item: dict[str, list[float | None]]  # metrics with a per-item function: one value per item
    keys: dict[str, str]  # metric id -> results key


def item_values(m: MetricSpec, items: Sequence[Any], given: Mapping[str, Any]) -> list[float | None]:
    """The declaration's per-item function on every item; `given`: the options and fixed arguments."""
    positional, keyword = item_parameters(m.item)
    fn = m.item_function
    if keyword:
        fn = partial(fn, **{p: given[p] for p in keyword})
    return list(map(fn, items, *(repeat(given[p]) for p in positional)))


def check(metrics: Sequence[MetricSpec], levels: Iterable[str], options: Iterable[str] = ()) -> None:
    """What a driver can compute: per-item functions at the levels it builds items of, components listed
    before the composite, keywords that are fixed arguments or the driver's `options`; ValueError naming the
    metric otherwise."""
    levels, options = tuple(levels), tuple(options)
    seen: set[str] = set()
    for m in metrics:
        if m.item is not None and m.level not in levels:
            raise ValueError(f"metric {m.id!r}: no items of level {m.level!r} here; expected one of {levels}")
        missing = [c for c in m.components if c not in seen]
        if missing:
            raise ValueError(f"metric {m.id!r} combines {missing}, which must be computed before it")
        taken = {*m.item_parameter_names, *keyword_only(m.aggregate)}
        unknown = taken - set(m.arguments) - set(options)
        if unknown:
            raise ValueError(
                f"metric {m.id!r}: keyword(s) {sorted(unknown)} are neither fixed arguments nor "
                f"declared options {options}"
            )
        seen.add(m.id)


def score(
    metrics: Sequence[MetricSpec],
    items: Mapping[str, Sequence[Any]],
    options: Mapping[str, Any] = NO_OPTIONS,
) -> Scores:
    """Each declaration computed on `items[its level]` under `options` (module docstring)."""
    values: dict[str, Any] = {}
    n: dict[str, int] = {}
    per_item: dict[str, list[float | None]] = {}
    keys: dict[str, str] = {}
    for m in metrics:
        key = keys[m.id] = m.key(options)
        aggregate = partial(m.aggregate, **{p: options[p] for p in keyword_only(m.aggregate)})
        if m.components:
            parts = [keys[c] for c in m.components]
            values[key] = aggregate(*(values[p] for p in parts))
            n[key] = n[parts[0]]
            continue
        vals = per_item[key] = item_values(m, items[m.level], {**options, **m.arguments})
        values[key] = aggregate(vals)
        n[key] = len(vals) - vals.count(None)
    return Scores(values, n, per_item, keys)


def by_level(
    metrics: Sequence[MetricSpec], values: Mapping[str, Any], levels: Iterable[str]
) -> dict[str, Any]:
    """The values of the metrics of `levels`, in declaration order (a driver's layout of one section)."""
    wanted = set(levels)
    return {m.id: values[m.id] for m in metrics if m.level in wanted and m.id in values}
