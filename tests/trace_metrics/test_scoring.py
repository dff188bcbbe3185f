"""The registry drives every benchmark (trace_metrics/lib/scoring.py and its drivers): each declaration of each
benchmark is computed from its declaration by its benchmark's driver, which reports exactly the registry's
declarations, a declaration added in a test is computed with no other change, and no declaration lacks a
per-item function or components."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import pytest

from tests.support.llm import ScriptedLLM
from trace_dataset.io import write_jsonl
from trace_metrics import specs
from trace_metrics.lib import scoring
from trace_metrics.specs import MetricSpec

Metrics = Sequence[MetricSpec] | None


class FakeScorer:
    """Stands in for the NLI scorer: every (premise, claim) pair is entailed."""

    threshold = 0.5

    def entailment_probs(self, pairs):
        return [0.9] * len(pairs)


def _judge() -> ScriptedLLM:
    scales = ("relevance", "informativeness", "grounding", "flow", "justification")
    return ScriptedLLM(lambda conversation: dict.fromkeys(scales, 4))


def _suite(world: Mapping[str, Any], metrics: Metrics) -> dict[str, Any]:
    from trace_metrics.lib import suite

    kwargs = {} if metrics is None else {"metrics": metrics}
    r = suite.evaluate_run(world["data"], world["predictions"], nli=FakeScorer(), judge=_judge(), **kwargs)
    return r["values"]


def _human(world: Mapping[str, Any], metrics: Metrics) -> dict[str, Any]:
    from trace_metrics.lib.human import human_metrics_from_rows

    kwargs = {} if metrics is None else {"metrics": metrics}
    result = human_metrics_from_rows(HUMAN_ROWS, **kwargs)
    assert all(
        list(b)[: len(result["values"])] == list(result["values"]) for b in result["per_baseline"].values()
    )
    return result["values"]


def _sniprec(world: Mapping[str, Any], metrics: Metrics) -> dict[str, Any]:
    from trace_metrics.lib.interactive import per_turn_table, ranked_turn_overall

    kwargs = {} if metrics is None else {"metrics": metrics}
    [row] = per_turn_table(RANKED_TURNS, **kwargs)
    overall = ranked_turn_overall(RANKED_TURNS, n_boot=20, **kwargs)
    values = {k: v for k, v in row.items() if k not in ("turn", "n", "n_undefined", "n_unranked")}
    assert list(overall) == list(values)
    return values


def _live(world: Mapping[str, Any], metrics: Metrics) -> dict[str, Any]:
    from trace_metrics.lib.interactive import live_outcomes

    kwargs = {} if metrics is None else {"metrics": metrics}
    return {k: v["mean"] for k, v in live_outcomes(LIVE_RECORDS, n_boot=20, **kwargs).items()}


def _collab_rec(world: Mapping[str, Any], metrics: Metrics) -> dict[str, Any]:
    from trace_metrics.lib.collab_rec import collab_rec_scores

    kwargs = {} if metrics is None else {"metrics": metrics}
    out = collab_rec_scores(
        [["a", "b"], ["c"]], [[1.0, 0.5], [0.0]], ["a", "b", "c", "d"], [0.5, 0.7], [0.0, 0.2], **kwargs
    )
    assert out.pop("out_of_catalogue") == 0 and out.pop("n") == 2
    return out


def _core(world: Mapping[str, Any], metrics: Metrics) -> dict[str, Any]:
    from trace_metrics.core.scoring import summarize

    kwargs = {} if metrics is None else {"metrics": metrics}
    summary = summarize(CORE_RECORDS, **kwargs)
    return {k: v["mean"] for k, v in summary.items() if k not in ("n_logs", "factors", "ratings")}


class Driver(NamedTuple):
    name: str
    covers: Callable[[MetricSpec], bool]  # the declarations it computes
    run: Callable[[Mapping[str, Any], Metrics], dict[str, Any]]  # {id: value} with these declarations


DRIVERS = (
    Driver("suite", lambda m: m.benchmark == "trace" and m.level in specs.SUITE_LEVELS, _suite),
    Driver("human", lambda m: m.benchmark == "trace" and m.level in ("human_item", "human_quote"), _human),
    Driver("sniprec", lambda m: m.benchmark == "sniprec", _sniprec),
    Driver("live", lambda m: m.benchmark == "live", _live),
    Driver("collab_rec", lambda m: m.benchmark == "collab_rec", _collab_rec),
    Driver("core", lambda m: m.benchmark == "core", _core),
)

RANKED_TURNS = [
    {"dialogue_id": "d1", "turn": 1, "position": 1},
    {"dialogue_id": "d2", "turn": 1, "position": 7},
    {"dialogue_id": "d3", "turn": 1, "position": None},
]
LIVE_RECORDS = [
    {
        "dialogue_id": "d1",
        "turns": [
            {"role": "user", "action": "greet_and_seek"},
            {"role": "system", "action": "recommend"},
            {"role": "user", "action": "accept"},
            {"role": "system", "action": "farewell"},
        ],
    },
    {
        "dialogue_id": "d2",
        "turns": [{"role": "user", "action": "greet_and_seek"}, {"role": "system", "action": "recommend"}],
    },
]
CORE_RECORDS = [
    {
        "id": f"log{i}",
        "factors": {"coherence": {"score": score, "status": "ok", "attempts": 1}},
        "factor_mean": float(score),
        "overall": overall,
        "debate": {"rounds": 2, "consensus": True, "n_failed_messages": 0, "n_messages": 8},
    }
    for i, (score, overall) in enumerate(((3, 70.0), (1, None)))
]
HUMAN_ROWS = [
    {
        "item_id": f"d{i}:tfidf",
        "annotator": annotator,
        "baseline": "tfidf",
        "dialogue_id": f"d{i}",
        "quote_labels": labels,
        "errors": ["no_errors"],
        "informativeness": 4 - i,
        "naturalness": 3,
    }
    for i, labels in enumerate((["Supported", "Partial"], ["Supported"]))
    for annotator in ("A1", "A2")
]


@pytest.fixture
def world(data_dir, reference_rows, tmp_path) -> dict[str, Any]:
    path = tmp_path / "predictions.jsonl"
    write_jsonl(path, reference_rows)
    return {"data": data_dir, "predictions": path}


def _marker(value: float) -> Callable[[Sequence[float | None]], float]:
    return lambda values: value


def test_no_declaration_lacks_an_item_function_or_components():
    for m in specs.METRICS.values():
        assert (m.item is not None) != bool(m.components), m.id
    fields = {
        "id": "orphan",
        "label": "Orphan",
        "benchmark": "trace",
        "family": "accuracy",
        "higher_is_better": True,
        "range": (0.0, 1.0),
        "level": "dialogue",
        "description": "(test)",
        "paper": "(test)",
    }
    with pytest.raises(ValueError, match="'orphan': declare a per-item function"):
        MetricSpec(**fields)
    with pytest.raises(ValueError, match="not both"):
        MetricSpec(**fields, item=lambda item: 1.0, components=("recall@1",))


def test_every_declaration_belongs_to_one_driver():
    for m in specs.METRICS.values():
        assert [d.name for d in DRIVERS if d.covers(m)] != [], m.id
        assert len([d for d in DRIVERS if d.covers(m)]) == 1, m.id
    assert [m.id for m in specs.METRICS.values() if DRIVERS[0].covers(m)] == [
        m.id for m in specs.SUITE_METRICS
    ]


@pytest.mark.parametrize("driver", DRIVERS, ids=lambda d: d.name)
def test_every_declaration_is_computed_from_its_declaration(driver, world):
    declared = [m for m in specs.METRICS.values() if driver.covers(m)]
    # by default the driver reports the registry's declarations, in their order, and no other value
    assert list(driver.run(world, None)) == [m.id for m in declared]
    # each value is its declaration's: a copy whose aggregation returns a marker shows the marker
    marked = [
        dataclasses.replace(m, aggregate=_marker(1000.0 + i)) if m.item else m for i, m in enumerate(declared)
    ]
    values = driver.run(world, marked)
    for i, m in enumerate(declared):
        if m.item is not None:
            assert values[m.id] == 1000.0 + i, m.id
    # and a declaration added in a test, at a level of this driver, is computed with no other change
    first = declared[0]
    added = dataclasses.replace(
        first, id="added_in_a_test", item=lambda item: 0.25, arguments={}, result_id=None
    )
    values = driver.run(world, (*declared, added))
    assert values["added_in_a_test"] == 0.25 and set(values) == {m.id for m in (*declared, added)}


def test_the_loop_passes_options_and_arguments_and_refuses_what_it_cannot_compute():
    seen: list[tuple] = []

    def item(x, k, *, scale):
        seen.append((x, k, scale))
        return None if x is None else float(x * k)

    m = dataclasses.replace(specs.spec("recall@1"), id="scaled", item=item, arguments={"k": 2})
    composite = dataclasses.replace(
        specs.spec("cgs"),
        id="sum",
        components=("scaled", "scaled", "scaled"),
        aggregate=lambda a, b, c: a + b + c,
    )
    scores = scoring.score((m, composite), {"recommendation_turn": [1, None, 3]}, {"scale": "s"})
    assert seen == [(1, 2, "s"), (None, 2, "s"), (3, 2, "s")]
    assert scores.per_item == {"scaled": [2.0, None, 6.0]} and scores.values == {"scaled": 4.0, "sum": 12.0}
    assert scores.n == {"scaled": 2, "sum": 2} and scores.keys == {"scaled": "scaled", "sum": "sum"}
    with pytest.raises(ValueError, match="'scaled': no items of level 'recommendation_turn' here"):
        scoring.check((m,), ("dialogue",), ("scale",))
    with pytest.raises(ValueError, match=r"'scaled': keyword\(s\) \['scale'\]"):
        scoring.check((m,), ("recommendation_turn",))
    with pytest.raises(ValueError, match=r"'sum' combines \['scaled'"):
        scoring.check((composite,), ("recommendation_turn",))
