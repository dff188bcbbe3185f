"""The Trace leaderboard app: `build_app(settings)` returns a `gr.Blocks`; `app.py` at the repo root serves it
as a Hugging Face Space and `trace-bench serve` serves it locally.

The app is a list of tabs (`tab_specs()`): each is a label, an id and a builder called inside its `gr.Tab`
with the shared `AppContext` (settings, results store, dialogue index, a `rows()` reader, and the
leaderboard's table component and inputs for tabs that change rows). A new tab is one module with a
`builder(ctx)` and one entry in that list; a tab that reads files registers its reader with `ctx.on_load`.
Rows are read by a pure function on every refresh (page load, any control, Refresh, after a submission); only
the best-row marks are kept between reads, until the rows change (they take a bootstrap of every row).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from spaces_app.about import about_markdown, about_tab, dataset_card  # noqa: F401  (re-exported)
from spaces_app.blind import PUBLIC_TRACK, row_track
from spaces_app.board_html import render_board
from spaces_app.gap import GAP_METRICS, gap_figure
from spaces_app.leaderboard import (
    FAMILIES,
    POOL_CHOICES,
    BestMarks,
    board_lines,
    collect_rows,
    sort_choices,
)
from spaces_app.settings import Settings
from spaces_app.store import ResultsStore, open_store
from trace_metrics.tables import BOARD_VIEWS

log = logging.getLogger(__name__)

INTRO = """# Trace: accountable tourism conversational recommendation
Trace scores a conversational recommender on three competencies at once: **accuracy** (the right place),
**grounding** (verbatim evidence from real reviews) and **recovery** (a better pick after a rejection).
Rows whose source is *paper (reported)* are the numbers the Trace paper reports (facts from the paper, not runs
of this package, on the paper's own corpus); every other row was scored here, on the corpus and knowledge-base
versions shown in its Versions column."""
ORDERS = ("best first", "reversed")
# The font weights the app loads. Gradio's default theme loads Source Sans Pro (and IBM Plex Mono) at 400 and 600,
# but the SemiBold files it ships are 55-glyph subsets (5,012 bytes against ~103 KB for Regular and Bold): every
# other letter of semibold text (headers, labels, tab names) fell back to another face and "RAG" read "RᴀG".
# With 400 and 700 only, semibold text is drawn from the complete Bold file (CSS picks the nearest heavier face).
FONT_WEIGHTS: tuple[int, ...] = (400, 700)


@dataclass
class AppContext:
    """What every tab builder may use."""

    settings: Settings
    store: ResultsStore
    index: Any = None  # spaces_app.browser.DialogueIndex when a data directory is configured
    board: Any = None  # the leaderboard's gr.HTML (set by the Leaderboard tab)
    board_inputs: list = field(default_factory=list)  # its controls, in `table`'s argument order
    tab: Any = None  # the gr.Tab being built (for its select event)
    marks: BestMarks = field(default_factory=BestMarks)  # best-row marks, kept until the rows change
    loaders: list = field(default_factory=list)  # (fn, inputs, outputs) run on every page load
    periods: tuple = ()  # the blind periods (spaces_app.blind.Period), in the configured order

    def on_load(self, fn: Callable, inputs: list, outputs: list) -> None:
        """Run `fn` on every page load (a tab re-reads its files: runs made since the app started show up)."""
        self.loaders.append((fn, inputs, outputs))

    def all_rows(self) -> list[dict[str, Any]]:
        """Every row: the public track's and every blind period's (never ranked together)."""
        return collect_rows(self.settings, self.store, self.marks)

    def rows(self, track: str = PUBLIC_TRACK) -> list[dict[str, Any]]:
        """The rows of one track: the public one (default), or a blind period's (`Period.track`)."""
        return [r for r in self.all_rows() if row_track(r) == track]

    def tracks(self) -> list[str]:
        return [PUBLIC_TRACK, *(p.track for p in self.periods)]

    def table(
        self, view, pool, families, show_paper, query, sort_by, order, show_ci, track=PUBLIC_TRACK
    ) -> str:
        """The leaderboard table's HTML for the controls' values."""
        if sort_by not in sort_choices(view):
            sort_by = None
        if track not in self.tracks():
            track = PUBLIC_TRACK
        all_rows = self.all_rows()
        lines = board_lines(
            [r for r in all_rows if row_track(r) == track],
            view,
            pool,
            families or [],
            query or "",
            bool(show_paper),
            sort_by,
            reverse=order == ORDERS[1],
        )
        return render_board(lines, view, show_ci=bool(show_ci), counted=all_rows, period=self.period(track))

    def period(self, track: str):
        """The blind period of `track` as its folder says now (its state may change), None for public."""
        from spaces_app.blind import current

        found = next((p for p in self.periods if p.track == track), None)
        return None if found is None else current(found)


@dataclass(frozen=True)
class TabSpec:
    label: str
    id: str
    build: Callable[[AppContext], None]


def tab_specs() -> list[TabSpec]:
    """The app's tabs, in order (the Leaderboard tab first: it defines the table other tabs refresh)."""
    from spaces_app.core_tab import core_tab
    from spaces_app.dialogue_tab import dialogue_tab
    from spaces_app.interactive_tab import interactive_tab
    from spaces_app.submit_tab import submit_tab

    return [
        TabSpec("Leaderboard", "leaderboard", leaderboard_tab),
        TabSpec("Three-Competency Gap", "gap", gap_tab),
        TabSpec("Dialogues", "dialogues", dialogue_tab),
        TabSpec("Interactive", "interactive", interactive_tab),
        TabSpec("Submit", "submit", submit_tab),
        TabSpec("CoRE", "core", core_tab),
        TabSpec("About", "about", about_tab),
    ]


def build_app(settings: Settings, store: ResultsStore | None = None):
    """The Gradio app for `settings`; `store` overrides the results store the settings select."""
    import gradio as gr

    from spaces_app.blind import download_repos, load_periods

    store = store or open_store(settings.results_dir, settings.results_repo, settings.hub_token)
    gold = (*settings.blind_dirs, *download_repos(settings.blind_repos, settings.hub_token))
    ctx = AppContext(settings, store, periods=load_periods(gold))
    if settings.data_dir is not None:
        from spaces_app.browser import DialogueIndex

        ctx.index = DialogueIndex(settings.data_dir, settings.split, settings.runs_dir)
    log.info(
        "leaderboard app: data %s, store %r, baselines %s, submitters %s",
        settings.data_dir,
        store,
        settings.baselines_file,
        settings.auth,
    )
    with gr.Blocks(title="Trace leaderboard") as app:
        gr.Markdown(INTRO)
        if settings.data_dir is None:
            gr.Markdown(
                "*This instance has no data directory (TRACE_SPACE_DATA): the dialogue browser and "
                + ("public-track " if ctx.periods else "")
                + "submissions are off.*"
            )
        with gr.Tabs():
            for spec in tab_specs():
                with gr.Tab(spec.label, id=spec.id) as ctx.tab:
                    spec.build(ctx)
        if ctx.board is not None:  # a reload shows rows submitted since the app started
            app.load(ctx.table, ctx.board_inputs, ctx.board)
        for fn, inputs, outputs in ctx.loaders:
            app.load(fn, inputs, outputs)
    return app


def leaderboard_tab(ctx: AppContext) -> None:
    import gradio as gr

    first_view = next(iter(BOARD_VIEWS))
    first_sort = sort_choices(first_view)
    with gr.Row():
        view = gr.Radio(list(BOARD_VIEWS), value=first_view, label="Columns", elem_id="view")
        pool = gr.Radio(list(POOL_CHOICES), value="closed", label="Candidate pool", elem_id="pool")
    with gr.Row():
        families = gr.CheckboxGroup(list(FAMILIES), value=list(FAMILIES), label="Family", elem_id="families")
        with gr.Column(min_width=220):
            show_paper = gr.Checkbox(
                value=True, label="Paper reference rows (reported numbers)", elem_id="show-paper"
            )
            show_ci = gr.Checkbox(value=False, label="Show 95% intervals under the values", elem_id="show-ci")
        query = gr.Textbox(label="Search systems", placeholder="name or description", elem_id="search")
    with gr.Row():
        sort_by = gr.Dropdown(first_sort, value=first_sort[0], label="Sort by", elem_id="sort-by")
        order = gr.Radio(list(ORDERS), value=ORDERS[0], label="Order", elem_id="order")
        track = gr.Radio(
            ctx.tracks(), value=PUBLIC_TRACK, label="Track", elem_id="track", visible=bool(ctx.periods)
        )
        refresh = gr.Button("Refresh", elem_id="refresh-button", scale=0)
    inputs = [view, pool, families, show_paper, query, sort_by, order, show_ci, track]
    ctx.board = gr.HTML(
        ctx.table(first_view, "closed", list(FAMILIES), True, "", first_sort[0], ORDERS[0], False),
        elem_id="leaderboard-table",
    )
    ctx.board_inputs = inputs
    gr.Markdown(
        "Columns are grouped by axis (*Accuracy*, *Text*, *Grounding*, *Recovery*, *Practical*); "
        "↑ higher is better, ↓ lower is better. Empty cell: not reported / not scored. Versions: the "
        "first 12 hex digits of the corpus (top) and knowledge-base (bottom) hashes."
    )

    def on_view(view_, *rest):
        choices = sort_choices(view_)
        pool_, families_, show_paper_, query_, order_, show_ci_, track_ = rest
        return (
            gr.update(choices=choices, value=choices[0]),
            ctx.table(view_, pool_, families_, show_paper_, query_, choices[0], order_, show_ci_, track_),
        )

    for control in (pool, families, show_paper, order, show_ci, track):
        control.change(ctx.table, inputs, ctx.board)
    sort_by.input(ctx.table, inputs, ctx.board)
    query.change(ctx.table, inputs, ctx.board)
    query.submit(ctx.table, inputs, ctx.board)
    refresh.click(ctx.table, inputs, ctx.board)
    view.change(
        on_view, [view, pool, families, show_paper, query, order, show_ci, track], [sort_by, ctx.board]
    )


def gap_tab(ctx: AppContext) -> None:
    import gradio as gr

    def plot(pool, y_label):
        metric = next(k for k, v in GAP_METRICS.items() if v == y_label)
        return gap_figure(ctx.rows(), pool, metric)

    with gr.Row():
        gap_pool = gr.Radio(list(POOL_CHOICES), value="closed", label="Candidate pool", elem_id="gap-pool")
        gap_y = gr.Radio(
            list(GAP_METRICS.values()), value=GAP_METRICS["cgs"], label="Against Recall@1", elem_id="gap-y"
        )
    gap = gr.Plot(value=gap_figure(ctx.rows(), "closed", "cgs"), elem_id="gap-plot", show_label=False)
    gr.Markdown(
        "One point per system (paper Figure 2): systems that rank well need not ground or recover well. "
        "Colour = family; circles were scored here (bars: 95% intervals), crosses are the paper's "
        "reported numbers (its own corpus); a crossed open circle is a run whose turns mostly fell back (not "
        "the system's own result). Hover a point for its name and values; click a legend entry "
        "to hide that family, double-click to show only it."
    )
    gap_pool.change(plot, [gap_pool, gap_y], gap)
    gap_y.change(plot, [gap_pool, gap_y], gap)
    ctx.tab.select(plot, [gap_pool, gap_y], gap)  # opening the tab shows rows submitted since


def theme():
    """Gradio's default theme with complete font files at every weight the app draws (FONT_WEIGHTS)."""
    import gradio as gr
    from gradio.themes.utils.fonts import LocalFont

    return gr.themes.Default(
        font=[LocalFont("Source Sans Pro", weights=FONT_WEIGHTS), "ui-sans-serif", "system-ui", "sans-serif"],
        font_mono=[LocalFont("IBM Plex Mono", weights=FONT_WEIGHTS), "ui-monospace", "Consolas", "monospace"],
    )


def launch_options(settings: Settings) -> dict[str, Any]:
    """What every launch of the app passes (`trace-bench serve`, the Space's app.py, the browser tests): the
    theme and the upload limit (enforced by the server too)."""
    return {"theme": theme(), "show_error": True, "max_file_size": f"{settings.max_upload_mb}mb"}


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 7860, **launch) -> None:
    """Build the app and serve it until interrupted.

    Gradio's own start-up lines are silenced (`quiet`): they end with a hint to `set share=True in launch()`,
    an option no trace-bench command has; the caller prints where the app is."""
    app = build_app(settings)
    app.launch(server_name=host, server_port=port, **{"quiet": True, **launch_options(settings), **launch})
