"""The meta-evaluation plots (PNG, deterministic, no markup read from data) and the Space's CoRE tab."""

from __future__ import annotations

import json

import pytest

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


def test_space_tab(result, tmp_path):
    gr = pytest.importorskip("gradio")
    from spaces_app.core_tab import agreement_frame, build_core_tab, core_meta_path, load_meta, ranking_frame

    path = tmp_path / "meta.json"
    path.write_text(json.dumps(result))
    loaded, message = load_meta(path)
    assert loaded == json.loads(json.dumps(result)) and message.startswith("8 conversation logs")
    frame = agreement_frame(loaded)
    assert list(frame["Factor"][:12]) == list(FACTOR_IDS) and len(frame) == 15
    assert frame.loc[0, "Paper QWK (GPT-4o-mini)"] == 0.592
    systems = ranking_frame(loaded)
    assert set(systems["System"]) == {"tfidf", HOSTILE}  # the name as data, unchanged
    assert core_meta_path({}) is None and core_meta_path({"TRACE_SPACE_CORE_META": str(path)}) == path
    assert load_meta(None)[0] is None
    (tmp_path / "bad.json").write_text("[1, 2]")
    bad, why = load_meta(tmp_path / "bad.json")
    assert bad is None and "not a CoRE meta-evaluation result" in why
    for meta in (path, tmp_path / "missing.json", None):
        with gr.Blocks() as app, gr.Tab("CoRE"):
            build_core_tab(gr, meta)
        assert app is not None


def test_the_app_mounts_the_tab(result, tmp_path, monkeypatch):
    gr = pytest.importorskip("gradio")
    from spaces_app.app import tab_specs
    from spaces_app.core_tab import core_tab

    assert (
        "core" in [t.id for t in tab_specs()]
        and next(t for t in tab_specs() if t.id == "core").build is core_tab
    )
    path = tmp_path / "meta.json"
    path.write_text(json.dumps(result))
    monkeypatch.setenv("TRACE_SPACE_CORE_META", str(path))
    with gr.Blocks() as app, gr.Tab("CoRE"):
        core_tab(None)
    plots = [c for c in app.blocks.values() if isinstance(c, gr.Plot)]
    assert len(plots) == 2 and all(p.value for p in plots)
