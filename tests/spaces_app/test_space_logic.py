"""The leaderboard's pure parts: rows, the Table 5/6/9 views, filters, search, sorting, the gap plot, About."""

from __future__ import annotations

import html
import math
import re

import pytest

from spaces_app.gap import gap_figure, gap_points
from spaces_app.leaderboard import (
    FAMILIES,
    collect_rows,
    family,
    frame_columns,
    leaderboard_frame,
    paper_rows,
    reserved_names,
    sort_choices,
)
from spaces_app.store import LocalStore
from trace_metrics.specs import METRICS
from trace_metrics.tables import TABLE5, TABLE6, TABLE9, VIEWS, header

T5, T6, T9 = VIEWS  # "Table 5: headline", "Table 6: stress tests", "Table 9: practical value"


@pytest.fixture()
def rows(space_settings):
    return collect_rows(space_settings, LocalStore(space_settings.results_dir))


def test_paper_rows_are_labelled_reference_rows():
    rows = paper_rows()
    assert {r["source"] for r in rows} == {"paper"}
    assert all(
        r["system"].endswith(" (paper)") and "Reported in the Trace paper" in r["description"] for r in rows
    )
    tfidf = next(r for r in rows if r["system"] == "TF-IDF (paper)" and r["pool"] == "closed")
    assert tfidf["metrics"]["recall@1"] == pytest.approx(0.257)  # Table 5
    assert tfidf["metrics"]["t2r"] == pytest.approx(4.02)
    assert tfidf["metrics"]["rejection_recovery"] == pytest.approx(0.891)  # Table 6
    assert tfidf["metrics"]["spatial_coherence@2km"] == pytest.approx(0.177)  # Table 9
    opened = next(r for r in rows if r["system"] == "TF-IDF (paper)" and r["pool"] == "open")
    assert opened["metrics"] == {"recall@1": pytest.approx(0.099)}
    assert {r["family"] for r in rows} == {"non-LLM", "LLM"}
    for r in rows:  # every key is a canonical metric id
        assert set(r["metrics"]) <= set(METRICS)


def test_every_baseline_row_with_versions_in_every_view(rows, space_world):
    ours = [r for r in rows if r["source"] == "baseline"]
    assert sorted((r["baseline"], r["pool"]) for r in ours) == [
        ("popularity", "closed"),
        ("tfidf", "closed"),
        ("tfidf", "open"),
    ]
    for view in VIEWS:
        for pool in ("closed", "open"):
            frame = leaderboard_frame(rows, view, pool)
            assert list(frame.columns) == frame_columns(view)
            assert (frame["Corpus version"].str.len() > 0).all() and (frame["KB version"].str.len() > 0).all()
    frame = leaderboard_frame(rows, T5, "closed", ["non-LLM"], show_paper=False)
    assert set(frame["System"]) == {"Popularity", "TF-IDF"}
    assert set(frame["Source"]) == {"run here"}
    assert frame.loc[frame["System"] == "TF-IDF", "KB version"].item() == ours[0]["kb_version"][:12]


def test_table5_columns_are_grouped_by_axis_and_views_switch():
    labels = [header(c) for c in TABLE5]
    assert labels[:3] == ["Accuracy: R@1 ↑", "Accuracy: R@3 ↑", "Accuracy: MRR ↑"]
    groups = [c.group for c in TABLE5]
    assert groups == sorted(
        groups, key=["Accuracy", "Text", "Grounding", "Recovery"].index
    )  # contiguous, in order
    assert header(TABLE5[-1]) == "Recovery: T2R ↓"
    assert frame_columns(T6)[3 : 3 + len(TABLE6)] == [header(c) for c in TABLE6]
    assert "Accuracy: R@1 Open ↑" in frame_columns(T6)
    assert "Practical: Spatial Coh. ↑" in frame_columns(T9) and len(frame_columns(T9)) == 6 + len(TABLE9)
    with pytest.raises(ValueError, match="unknown view"):
        leaderboard_frame([], "Table 99")


def test_table6_reads_the_open_pool_row(rows):
    frame = leaderboard_frame(rows, T6, "closed")
    by = frame.set_index("System")
    assert by.loc["TF-IDF (paper)", "Accuracy: R@1 Open ↑"] == pytest.approx(0.099)
    ours_open = next(
        r for r in rows if (r.get("baseline"), r["source"], r["pool"]) == ("tfidf", "baseline", "open")
    )
    assert by.loc["TF-IDF", "Accuracy: R@1 Open ↑"] == pytest.approx(
        round(ours_open["metrics"]["recall@1"], 3)
    )
    assert math.isnan(by.loc["Popularity", "Accuracy: R@1 Open ↑"])  # no open run of popularity: empty
    assert math.isnan(by.loc["TF-IDF", "Grounding: NLI ↑"])  # scored without the NLI model: empty


def test_family_paper_and_pool_filters(rows):
    closed = leaderboard_frame(rows, T5, "closed")
    assert set(closed["Family"]) == {"non-LLM", "LLM"}
    assert {"Popularity", "TF-IDF", "TF-IDF (paper)", "LLM Zero-Shot (paper)"} <= set(closed["System"])
    llm = leaderboard_frame(rows, T5, "closed", ["LLM"])
    assert len(llm) > 0 and set(llm["Family"]) == {"LLM"} and set(llm["Source"]) == {"paper (reported)"}
    no_paper = leaderboard_frame(rows, T5, "closed", show_paper=False)
    assert set(no_paper["System"]) == {"Popularity", "TF-IDF"}
    assert leaderboard_frame(rows, T5, "closed", []).empty
    assert leaderboard_frame(rows, T5, "closed", ["submitted"]).empty
    opened = leaderboard_frame(rows, T5, "open")
    assert "TF-IDF" in set(opened["System"]) and "Popularity" not in set(opened["System"])
    with pytest.raises(ValueError, match="unknown pool"):
        leaderboard_frame(rows, T5, "pool_16")
    with pytest.raises(ValueError, match="unknown families"):
        leaderboard_frame(rows, T5, "closed", ["paper"])


def test_search_matches_name_or_description_case_insensitively(rows):
    assert list(leaderboard_frame(rows, T6, "closed", query="tf-idf (PAPER)")["System"]) == ["TF-IDF (paper)"]
    assert set(leaderboard_frame(rows, T5, "closed", query="  tf-idf ")["System"]) == {
        "TF-IDF",
        "TF-IDF (paper)",
    }
    by_description = leaderboard_frame(rows, T5, "closed", query="scored by this package")
    assert set(by_description["System"]) == {"Popularity", "TF-IDF"}
    assert leaderboard_frame(rows, T5, "closed", query="no such system").empty


def _by_corpus(frame):
    """The frame's two corpus groups, asserting their order: the rows scored here, then the paper's."""
    paper = (frame["Source"] == "paper (reported)").tolist()
    assert paper == sorted(paper) and any(paper) and not all(paper)  # never interleaved
    return frame[[not p for p in paper]], frame[paper]


def test_sorting_best_first_reverse_lower_is_better_and_missing_last(rows):
    """Each corpus group is sorted on its own: the paper's rows are never ranked among the rows scored here."""
    r1 = "Accuracy: R@1 ↑"
    for group in _by_corpus(leaderboard_frame(rows, T5, "closed")):
        values = group[r1].dropna().tolist()
        assert values == sorted(values, reverse=True)  # default: the view's first metric, best first
    for group in _by_corpus(leaderboard_frame(rows, T5, "closed", reverse=True)):
        assert group[r1].dropna().tolist() == sorted(group[r1].dropna().tolist())
    for group in _by_corpus(leaderboard_frame(rows, T5, "closed", sort_by="Recovery: T2R ↓")):
        t2r = group["Recovery: T2R ↓"].dropna().tolist()
        assert t2r == sorted(t2r)  # lower is better: ascending
    for group in _by_corpus(leaderboard_frame(rows, T5, "closed", sort_by="System")):
        assert group["System"].tolist() == sorted(group["System"], key=str.lower)
    nli = [
        g["Grounding: NLI ↑"]
        for g in _by_corpus(leaderboard_frame(rows, T6, "closed", sort_by="Grounding: NLI ↑"))
    ]
    assert any(g.isna().any() for g in nli) and any(g.notna().any() for g in nli)
    for group in nli:
        first_nan = group.isna().to_numpy().argmax() if group.isna().any() else len(group)
        assert group.iloc[first_nan:].isna().all()  # every missing value after every present one
    assert sort_choices(T9)[-1] == "System" and sort_choices(T9)[0] == "Practical: Spatial Coh. ↑"
    with pytest.raises(ValueError, match="cannot sort"):
        leaderboard_frame(rows, T5, "closed", sort_by="Practical: Spatial Coh. ↑")


def test_gap_points_and_figure(rows):
    points = gap_points(rows, "closed", "cgs")
    assert {p.system for p in points} >= {"Popularity", "TF-IDF", "LLM Zero-Shot (paper)"}
    tfidf = next(p for p in points if p.system == "TF-IDF")
    row = next(
        r for r in rows if (r.get("baseline"), r["source"], r["pool"]) == ("tfidf", "baseline", "closed")
    )
    assert (tfidf.group, tfidf.x, tfidf.y) == ("non-LLM", row["metrics"]["recall@1"], row["metrics"]["cgs"])
    assert next(p for p in points if p.system == "LLM Zero-Shot (paper)").group == "LLM (paper)"
    recovery = {p.system: p.y for p in gap_points(rows, "closed", "rejection_recovery")}
    assert recovery["TF-IDF (paper)"] == pytest.approx(0.891)
    fig = gap_figure(rows, "closed", "rejection_recovery")
    assert fig.layout.yaxis.title.text == "Rejection recovery" and fig.layout.xaxis.title.text.startswith(
        "Recall@1"
    )
    assert sum(len(t.x) for t in fig.data) == len(recovery)  # one point per system
    assert {(t.legendgroup, t.name) for t in fig.data} == {
        ("non-LLM", "scored here"),
        ("non-LLM", "paper (reported)"),
        ("LLM", "paper (reported)"),
    }
    assert fig.layout.legend.groupclick == "togglegroup"  # a legend click hides the whole family
    corpus = next(r["corpus_version"] for r in rows if r.get("source") == "baseline")[:12]
    assert (
        fig.layout.legend.title.text
        == f"scored here: corpus {corpus}<br>paper: paper (Yelp, 10,000 dialogues)"
    )
    names = {html.unescape(c[0]) for t in fig.data for c in t.customdata}
    assert names == set(recovery)  # the hover text names every system
    empty = gap_figure([], "open", "cgs")  # nothing to plot still renders, with a note
    assert "no system" in empty.layout.annotations[0].text
    with pytest.raises(ValueError, match="unknown gap metric"):
        gap_figure(rows, "closed", "bleu4")


def _with_ci(row: dict, metrics=("recall@1", "cgs"), width: float = 0.02, best=()) -> dict:
    row = {**row, "ci": {m: [row["metrics"][m] - width, row["metrics"][m] + width] for m in metrics}}
    row["tied_best"] = {m: True for m in best}
    return row


def test_gap_error_bars_come_from_the_intervals(rows):
    rows = [_with_ci(r) if r.get("source") == "baseline" and r["pool"] == "closed" else r for r in rows]
    fig = gap_figure(rows, "closed", "cgs")
    scored = next(t for t in fig.data if t.name == "scored here")
    assert list(scored.error_x.array) == pytest.approx([0.02] * len(scored.x))
    assert list(scored.error_y.arrayminus) == pytest.approx([0.02] * len(scored.x))
    assert "95% CI" in scored.customdata[0][2]
    paper = next(t for t in fig.data if t.name == "paper (reported)")
    assert paper.error_x.visible is False  # the paper's numbers have no intervals
    assert "no interval" in paper.customdata[0][2]


EVIL = [
    "$\\evilcmd$",
    "<b>bold</b><script>alert(1)</script>",
    "${alert(1)}",
    "{{constructor}}",
    "`x` @children",
    "a & b \\ c",
]


def test_names_are_data_in_the_plot(rows):
    """A submission named $\\evilcmd$ made matplotlib's math text fail, so the app could not start."""
    evil = [
        {
            "system": name,
            "pool": "closed",
            "source": "submission",
            "metrics": {"recall@1": 0.1 * i, "cgs": 0.5},
        }
        for i, name in enumerate(EVIL)
    ]
    fig = gap_figure([*rows, *evil], "closed", "cgs")
    fig.to_json()  # serialisable: what gr.Plot sends
    submitted = next(t for t in fig.data if t.legendgroup == "submitted")
    shown = [c[0] for c in submitted.customdata]
    assert [html.unescape(x) for x in shown] == EVIL  # the characters themselves, decoded by the browser
    for text in shown:  # and nothing plotly or a template reads: no tag, no $...$, no ${, {{ or backquote
        assert not re.search(r"[<>$`{}@\\]", text), text


def test_families_and_reserved_names(rows):
    assert {family(r) for r in rows} == {"non-LLM", "LLM"}
    assert family({"source": "submission", "family": "LLM"}) == "submitted"
    names = reserved_names([*rows, {"system": "Mine", "source": "submission"}])
    assert "TF-IDF" in names and "TF-IDF (paper)" in names and "Mine" not in names
    assert {"collab_rec", "Collab-REC", "sniprec"} <= set(names)  # registered, though not run here
    assert FAMILIES == ("non-LLM", "LLM", "submitted")


def test_missing_baselines_file_shows_paper_rows_only(space_settings, tmp_path):
    from dataclasses import replace

    settings = replace(space_settings, baselines_file=tmp_path / "nope.json")
    rows = collect_rows(settings, LocalStore(settings.results_dir))
    assert rows and {r["source"] for r in rows} == {"paper"}


def test_about_lists_every_metric_and_the_dataset_card(space_settings):
    from spaces_app.about import about_markdown, dataset_card
    from spaces_app.settings import Settings

    text = about_markdown(space_settings)
    for metric in METRICS:
        assert f"`{metric}`" in text
    for column in (*TABLE5, *TABLE6, *TABLE9):
        assert header(column) in text
    card = dataset_card(space_settings.data_dir)
    assert card and not card.startswith("---")  # front matter dropped
    assert "## Dataset card" in text and card[:200] in text
    assert "No data directory" in about_markdown(Settings())


def test_about_renders_a_card_when_the_data_has_none(space_world, tmp_path):
    import shutil

    from spaces_app.about import dataset_card

    data = tmp_path / "data"
    shutil.copytree(space_world["data"], data)
    (data / "README.md").unlink()
    card = dataset_card(data)
    assert "dialogue" in card.lower() and len(card) > 200


def test_build_app_with_and_without_data(space_settings, monkeypatch):

    from spaces_app.app import build_app
    from spaces_app.settings import Settings

    app = build_app(space_settings)
    assert app.title == "Trace leaderboard"
    bare = build_app(Settings(results_dir=space_settings.results_dir / "bare"))  # a fresh Space, nothing set
    assert bare.title == "Trace leaderboard"
    import gradio as gr

    def login_buttons(blocks):
        return [b for b in blocks.blocks.values() if isinstance(b, gr.LoginButton)]

    assert login_buttons(app) == []  # locally: submitter tokens
    assert any(getattr(b, "elem_id", None) == "submit-token" for b in app.blocks.values())
    # a Hub-hosted Space with `hf_oauth: true`: the Hub sets these; the app offers the Hugging Face login
    import gradio.oauth

    monkeypatch.setenv("SYSTEM", "spaces")
    monkeypatch.setenv("SPACE_ID", "me/trace-leaderboard")
    for name, value in (
        ("OAUTH_CLIENT_ID", "id"),
        ("OAUTH_CLIENT_SECRET", "secret"),
        ("OAUTH_SCOPES", "openid"),
        ("OPENID_PROVIDER_URL", "https://huggingface.co"),
    ):
        monkeypatch.setattr(gradio.oauth, name, value)
    settings = Settings.from_env(
        {"SYSTEM": "spaces", "SPACE_ID": "me/trace-leaderboard"},
        demo_dir=space_settings.results_dir,
        data_dir=space_settings.data_dir,
        results_dir=space_settings.results_dir,
    )
    assert settings.auth == "oauth"
    hub = build_app(settings)
    assert len(login_buttons(hub)) == 1 and hub.expects_oauth
    assert not any(getattr(b, "elem_id", None) == "submit-token" for b in hub.blocks.values())


def _paper_table(lines: list[str], first: str, last: str, columns: int) -> dict[str, list[float]]:
    """{system: up to `columns` numbers} of a table printed as 'Name v1 v2 ...' lines from `first` to `last`."""
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    out = {}
    for line in lines[start + 1 :]:
        if line.startswith(last):
            break
        tokens = line.split()
        numbers = []
        while tokens and len(numbers) < columns and re.fullmatch(r"\d+\.\d+", tokens[-1]):
            numbers.insert(0, float(tokens.pop()))
        if numbers and tokens:
            out[" ".join(tokens)] = numbers
    return out


def test_paper_rows_match_the_papers_tables(paper_text):
    """Golden check of paper_results.json against the paper's text (read in place; skipped without it)."""
    lines = paper_text.splitlines()
    t5 = _paper_table(lines, "Baseline R@1", "Cross-family rows", 9)
    t6 = _paper_table(lines, "Baseline R@1 Opn", "Finding 1b", 5)
    t9 = _paper_table(lines, "Baseline Spatial Coh.", "Appendix F", 4)
    closed = {
        r["system"].removesuffix(" (paper)"): r["metrics"] for r in paper_rows() if r["pool"] == "closed"
    }
    opened = {r["system"].removesuffix(" (paper)"): r["metrics"] for r in paper_rows() if r["pool"] == "open"}
    cross = {name: f"LLM Zero-Shot ({name})" for name in ("Claude Haiku 4.5", "Qwen3.5-Flash")}
    assert len(t5) == 15 and len(t6) == 13 and len(t9) == 13
    for name, values in t5.items():
        assert [closed[cross.get(name, name)][c.metric] for c in TABLE5] == values, name
    for name, values in t6.items():
        metrics = ["grounding_score", "provenance_coverage", "entailment", "rejection_recovery"]
        if len(values) == 4:  # Knowledge-Enh. / Persona-Ground.: NLI omitted in the paper
            metrics.remove("entailment")
            assert "entailment" not in closed[name]
        assert [opened[name]["recall@1"], *(closed[name][m] for m in metrics)] == values, name
    for name, values in t9.items():
        got = [closed[name][c.metric] for c in TABLE9]
        if name == "Multi-Rev. Synth.":  # the paper prints GS 0.996 in Table 6 and 0.998 in Table 9
            assert got[:3] == values[:3] and got[3] == t6[name][1]
        else:
            assert got == values, name


def _paper_row(lines: list[str], header: str, name: str) -> list[float]:
    """The numbers of the first line starting with `name` after the line starting with `header`."""
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    line = next(line for line in lines[start + 1 :] if line.startswith(name + " "))
    return [float(x) for x in re.findall(r"-?\d+\.\d+", line[len(name) :])]


def test_appendix_paper_rows_match_the_papers_tables(paper_text):
    """Itinerary-LLM (Finding 1d, Tables 17, 22) and Memory-Aug. (Tables 18, 19) against the paper's text."""
    lines = paper_text.splitlines()
    rows = {(r["system"].removesuffix(" (paper)"), r["pool"]): r for r in paper_rows()}
    itin, mem = rows[("Itinerary-LLM", "closed")]["metrics"], rows[("Memory-Aug.", "closed")]
    t17 = _paper_row(lines, "Baseline nn Fuzzy Gnd.", "Itinerary-LLM")  # n, fuzzy, entailment, delta
    t22 = _paper_row(lines, "Baseline GS Entail CD PC CGS CGSent", "Itinerary-LLM")
    assert t17[:2] == [itin["grounding_score"], itin["entailment"]]
    assert t22 == [
        itin[m]
        for m in (
            "grounding_score",
            "entailment",
            "citation_density",
            "provenance_coverage",
            "cgs",
            "cgs_ent",
        )
    ]
    assert "Itinerary-LLM closed R@1=0.538" in paper_text and "open 0.083" in paper_text  # Finding 1d
    assert itin["recall@1"] == 0.538 and rows[("Itinerary-LLM", "open")]["metrics"] == {"recall@1": 0.083}
    t18 = _paper_row(lines, "Baseline 1", "Memory-Aug.")  # Table 18 (its header: "Baseline 1 km 1.5 km ...")
    t19 = _paper_row(lines, "Baseline nn Mean CD Mean GS", "Memory-Aug.")  # CD, GS, r, p (n has no decimals)
    assert t18[2] == mem["metrics"]["spatial_coherence@2km"]  # the registered 2 km id
    assert "0.093 / 0.143 / 0.310 / 0.462" in mem["description"]  # the other thresholds, in the note
    assert t19[:2] == [mem["metrics"]["citation_density"], mem["metrics"]["grounding_score"]]
    assert mem["session_isolated"] is False
    assert all(r["session_isolated"] for k, r in rows.items() if k[0] != "Memory-Aug.")
    # the paper's own inconsistency, noted where the rows show: Table 22's CGS is not its formula at its means
    for name, printed in (("Itinerary-LLM", 0.601), ("Multi-Rev. Synth.", 0.008)):
        gs, _, cd, pc, cgs, _ = _paper_row(lines, "Baseline GS Entail CD PC CGS CGSent", name)
        assert cgs == printed and abs(gs * min(1, cd / 0.05) * (0.5 + 0.5 * pc) - cgs) > 0.01
    assert "does not follow from its printed means" in rows[("Itinerary-LLM", "closed")]["description"]


def test_the_core_tab_tells_two_ratings_of_one_system_apart(tmp_path):
    """Two `core score` folders of one system got two columns both headed "TF-IDF"."""
    from spaces_app.core_tab import column_names, scores_html
    from tests.support.tables import headers

    def row(folder, system="TF-IDF"):
        return {
            "system": system,
            "model": "m",
            "folder": folder,
            "logs": 1,
            "factors": {},
            "factor_mean": None,
            "overall": None,
            "ratings": {},
        }

    rows = [row(tmp_path / "a" / "tfidf"), row(tmp_path / "tfidf_llm"), row(tmp_path / "zs", "LLM Zero-Shot")]
    assert column_names(rows) == ["TF-IDF (tfidf)", "TF-IDF (tfidf_llm)", "LLM Zero-Shot"]
    twins = [row(tmp_path / "a" / "tfidf"), row(tmp_path / "b" / "tfidf")]
    assert column_names(twins) == [f"TF-IDF ({(tmp_path / x / 'tfidf').as_posix()})" for x in "ab"]
    assert column_names(rows[:1]) == ["TF-IDF"]
    assert {"TF-IDF (tfidf)", "TF-IDF (tfidf_llm)"} <= set(headers(scores_html(rows)))
