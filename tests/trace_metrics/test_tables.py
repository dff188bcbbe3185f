"""The leaderboard's columns come from the metric declarations: label, axis and direction are the spec's (a
view's own label only where the paper prints another), and the board's "All Trace metrics" view holds every
metric the suite computes, a new one included."""

from __future__ import annotations

import dataclasses

import pytest

from trace_metrics import specs, tables


def _declared(c: tables.Column) -> specs.MetricSpec:
    return specs.spec(c.id)


def test_every_column_of_every_view_is_its_declaration():
    own_labels = {}
    for view, columns in tables.BOARD_VIEWS.items():
        for c in columns:
            s = _declared(c)
            assert c.id == s.id and c.metric in (s.id, tables.OPEN_PREFIX + s.id), (view, c)
            assert (c.group, c.higher_is_better) == (tables.axis(s), s.higher_is_better), (view, c)
            if c.label != s.label:
                own_labels[c.metric] = c.label
    # the only labels written in a view: the paper's Table 5 header, and the open-pool column's derived one
    assert own_labels == {"citation_density": "Cite. D.", "open:recall@1": "R@1 Open"}
    assert [tables.header(c) for c in tables.TABLE5][-2:] == ["Recovery: TSR ↑", "Recovery: T2R ↓"]
    assert tables.heading(tables.column("route_efficiency_km")) == "Route (km)↓"
    with pytest.raises(KeyError, match="unknown metric id 'recall@10'"):
        tables.column("recall@10")


def test_the_board_shows_every_suite_metric_and_a_new_one_with_no_second_declaration():
    board = tables.BOARD_VIEWS[tables.ALL_METRICS]
    assert [c.metric for c in board] == [m.id for m in specs.SUITE_METRICS]
    assert list(tables.BOARD_VIEWS)[:3] == list(tables.VIEWS)  # the paper's tables first, as printed
    new = dataclasses.replace(
        specs.spec("tsr"), id="recovered_fast", label="Fast rec.", higher_is_better=False
    )
    [column] = tables.metric_view((new,))
    assert column == tables.Column(
        "recovered_fast", "Fast rec.", "Recovery", False, tables.DECIMALS, "recovered_fast"
    )
    assert tables.header(column) == "Recovery: Fast rec. ↓"
