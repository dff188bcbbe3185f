"""The meta-evaluation plots (PNG, deterministic, no markup read from data) and the Space's CoRE tab."""

from __future__ import annotations

import json
from html import unescape

import pytest

from tests.support.tables import cells
from trace_metrics.core.meta import meta_evaluate
from trace_metrics.core.plots import (
    AGREEMENT_PNG,
    COUPLING_PNG,
    agreement_figure,
    coupling_figure,
    paper_reference,
    write_plots,
)
from trace_metrics.core.prompts import FACTOR_IDS

PNG = b"\x89PNG\r\n\x1a\n"
HOSTILE = "$\\evil$ <b>x</b>"  # a system name that is markup and mathtext


@pytest.fixture
def result():
    core, human = {}, {}
    for k in range(8):
        log = f"d{k}:" + ("tfidf", HOSTILE)[k % 2]
        for j, f in enumerate(FACTOR_IDS):
            core[(log, f)] = (k + j) % 5
            human[(log, f)] = (k * j + 1) % 5 if f != "diversity" else 2  # constant: undefined cells
        core[(log, "overall")], human[(log, "overall")] = 10.0 * k, 12.0 * k + (k % 3)
        core[(log, "factor_mean")] = k / 4
    return meta_evaluate(core, human)


def test_plots_are_png_and_deterministic(result, tmp_path):
    paths = write_plots(result, tmp_path / "a")
    again = write_plots(result, tmp_path / "b")
    assert sorted(p.split("/")[-1] for p in paths.values()) == sorted([COUPLING_PNG, AGREEMENT_PNG])
    for key in paths:
        data = open(paths[key], "rb").read()
        assert data.startswith(PNG) and data == open(again[key], "rb").read()


def test_figures_draw_no_mathtext(result):
    for fig in (coupling_figure(result), agreement_figure(result)):
        panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
        texts = [t for ax in panels for t in [*ax.texts, *ax.get_xticklabels(), ax.title]]
        assert texts and all(t.get_parse_math() is False for t in texts if t.get_text())
        assert not any("evil" in t.get_text() for t in texts)  # no name from the data is drawn
    assert len(coupling_figure(result).axes) == 3  # CoRE, human, colour bar


def test_empty_result_still_plots():
    empty = meta_evaluate({("a:s", "coherence"): 1}, {("b:s", "coherence"): 1})
    assert coupling_figure(empty).axes and agreement_figure(empty).axes


def test_paper_reference_figures():
    ref = paper_reference()
    assert set(ref["qwk_table22"]["GPT-4o-mini"]) == set(FACTOR_IDS)
    assert ref["qwk_table22"]["GPT-4o-mini"]["proactiveness"] == 0.727
    assert ref["overall_table7"]["CoRE (Multi-Agent)"] == {"spearman": 0.698, "kendall_tau_b": 0.538}


def _tab_view(core_dirs, meta):
    """The CoRE tab built as the app builds it; its page-load reader's updates."""
    gr = pytest.importorskip("gradio")
    from spaces_app.core_tab import build_core_tab

    loaders = []
    with gr.Blocks(), gr.Tab("CoRE"):
        build_core_tab(gr, core_dirs, meta, lambda fn, inputs, outputs: loaders.append(fn))
    return loaders[0]()


def test_space_tab(result, tmp_path):
    from spaces_app.core_tab import NO_META, NO_SCORES, agreement_frame, load_meta, ranking_frame

    path = tmp_path / "meta.json"
    path.write_text(json.dumps(result))
    loaded, message = load_meta(path)
    assert loaded == json.loads(json.dumps(result)) and message.startswith("8 conversation logs")
    frame = agreement_frame(loaded)
    assert list(frame["Factor"][:12]) == list(FACTOR_IDS) and len(frame) == 15
    assert frame.loc[0, "Paper QWK (GPT-4o-mini)"] == 0.592
    systems = ranking_frame(loaded)
    assert set(systems["System"]) == {"tfidf", HOSTILE}  # the name as data, unchanged
    assert load_meta(None) == (None, NO_META)
    (tmp_path / "bad.json").write_text("[1, 2]")
    bad, why = load_meta(tmp_path / "bad.json")
    assert bad is None and "not a CoRE meta-evaluation result" in why
    scores, status, table, agreement, coupling, ranking = _tab_view([tmp_path / "no-runs"], path)
    assert NO_SCORES.split(".")[0] in unescape(scores["value"])  # a plain line, no empty table
    assert table["visible"] and "0.592" in cells(table["value"]) and "<script" not in ranking["value"]
    assert agreement["visible"] and agreement["value"] is not None and coupling["value"] is not None
    for meta in (tmp_path / "missing.json", None):  # nothing to show: one line, no table, no plot
        scores, status, table, agreement, coupling, ranking = _tab_view([], meta)
        assert not any(u["visible"] for u in (table, agreement, coupling, ranking)) and status["value"]


def test_the_tab_shows_core_score_folders(tmp_path):
    from trace_dataset.io import write_json

    folder = tmp_path / "core" / "tfidf"
    factors = {f: {"mean": 2.0, "n": 1, "n_missing": 0} for f in FACTOR_IDS}
    factors[FACTOR_IDS[0]] = {"mean": None, "n": 0, "n_missing": 1}
    write_json(
        folder / "summary.json",
        {
            "n_logs": 1,
            "factors": factors,
            "factor_mean": {"mean": 2.0, "n": 1},
            "ratings": {"total": 12, "ok": 11, "missing": 1, "by_status": {"ok": 11, "invalid": 1}},
            "overall": {"mean": 55.0, "n": 1, "n_failed": 0},
            "identity": {"source": {"system": HOSTILE}, "llm": {"model": "/x/SmolLM2-135M-Instruct"}},
        },
    )
    scores, *_ = _tab_view([tmp_path / "core"], None)
    html = scores["value"]
    body = html.split("</style>", 1)[1]
    assert (
        HOSTILE in cells(html) and "<b>" not in body and "$" not in body
    )  # shown as text: no markup, no math
    shown = cells(html)
    assert {"1 of 12 (8%)", "55.0", "2.000", "SmolLM2-135M-Instruct"} <= set(shown)


def test_the_app_mounts_the_tab(result, tmp_path):
    from spaces_app.app import build_app, tab_specs
    from spaces_app.core_tab import core_tab
    from spaces_app.settings import Settings

    assert next(t for t in tab_specs() if t.id == "core").build is core_tab
    path = tmp_path / "meta.json"
    path.write_text(json.dumps(result))
    app = build_app(
        Settings(results_dir=tmp_path / "results", core_meta=path, core_dirs=(tmp_path / "core",))
    )
    assert app is not None
