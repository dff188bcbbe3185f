"""The interactive view's columns and the per-turn table come from the metric declarations, and a Trace
metric declared only once (here, in the test) is on every leaderboard row and in a board view's cells."""

from __future__ import annotations

from trace_harness.leaderboard.build import result_row
from trace_harness.leaderboard.interactive import SECTIONS, TF_COLUMNS, VIEWS, source
from trace_harness.leaderboard.render import row_cells
from trace_harness.protocols.interactive.report import TURN_COLUMNS
from trace_metrics import specs, tables


def test_the_interactive_columns_are_their_declarations():
    own_labels = {}
    for c in (*VIEWS["trace"], *VIEWS["sniprec"], *TF_COLUMNS, *TURN_COLUMNS):
        s = specs.spec(c.id)
        assert (c.group, c.higher_is_better) == (tables.axis(s), s.higher_is_better), c
        if c.label != s.label:
            own_labels[(c.metric, c.label)] = s.label
    assert set(own_labels) == {
        ("success", "Live success (TSR)"),  # stored as "success" in the interactive rows
        ("hit@1", "Live Hit@1"),
        ("mrr", "Live MRR"),
        ("t2r", "Live T2R"),
        ("rejection_recovery", "Live rej. rec."),
        ("cgs", "Live CGS"),
        ("hit@1", "TF Hit@1"),
        ("tsr", "TF TSR"),
        ("rejection_recovery", "TF rej. rec."),
        ("sniprec_mrr", "Avg MRR"),  # SnipRec's Table 4 header
    }
    # where metrics.json holds each value follows from its metric's benchmark
    assert [source("trace", c) for c in VIEWS["trace"]][:3] == [
        ("dialogue", "success_rate"),
        ("dialogue", "turns_to_success"),
        ("trace", "hit@1"),
    ]
    assert source("trace", VIEWS["trace"][-1]) == ("overall", "avg_position")
    assert {source("sniprec", c)[0] for c in VIEWS["sniprec"]} == {"overall"}
    assert set(SECTIONS) == {specs.spec(c.id).benchmark for c in VIEWS["trace"]}


def test_a_trace_metric_declared_once_is_on_the_board(data_dir, reference_rows):
    import dataclasses

    from trace_metrics.lib import suite

    cited = dataclasses.replace(
        specs.spec("recall@1"),
        id="cited_reviews",
        label="Cited",
        family="grounding",
        item=lambda item: float(len(set(item.turn.citations.values()))),
        arguments={},
    )
    result = suite.evaluate_rows(data_dir, reference_rows, metrics=(*specs.SUITE_METRICS, cited))
    row = result_row(result, system="Ref", family="non-LLM", source="baseline", n_boot=200)
    assert row["metrics"]["cited_reviews"] == 7 / 6
    assert "cited_reviews" in row["ci"] and row["n"]["cited_reviews"] == 6
    view = tables.metric_view((*specs.SUITE_METRICS, cited))  # the board's view, with it declared
    assert tables.header(view[-1]) == "Grounding: Cited ↑"
    value, ci, _ = row_cells(row, view, {})[-1]
    assert value == row["metrics"]["cited_reviews"] and ci == row["ci"]["cited_reviews"]
