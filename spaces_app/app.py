"""The Trace leaderboard app: `build_app(settings)` returns a `gr.Blocks`; `app.py` at the repo root serves it
as a Hugging Face Space and `trace-bench serve` serves it locally.

Tabs: Leaderboard (Table 5 / 6 / 9 columns, pool, family filter, paper rows, search, sort), Three-Competency
Gap (the paper's Figure 2), Dialogues (browser), Submit, About. Rows are read by a pure function on every
refresh (page load, any control, Refresh, after a submission); nothing is cached globally.
"""

from __future__ import annotations

import html
import logging
from pathlib import Path
from typing import Any

from spaces_app.leaderboard import (
    FAMILIES,
    GAP_METRICS,
    POOL_CHOICES,
    collect_rows,
    frame_datatypes,
    frame_widths,
    gap_figure,
    leaderboard_frame,
    reserved_names,
    sort_choices,
)
from spaces_app.settings import Settings
from spaces_app.store import DESCRIPTION_MAX_CHARS, NAME_MAX_CHARS, ResultsStore, open_store
from spaces_app.submissions import SUBMIT_POOLS, SubmissionError, submit
from trace_dataset.constants import CITY_NAMES, POI_TYPES, TIERS
from trace_metrics.tables import VIEWS, header

log = logging.getLogger(__name__)

INTRO = """# Trace: accountable tourism conversational recommendation
Trace scores a conversational recommender on three competencies at once: **accuracy** (the right place),
**grounding** (verbatim evidence from real reviews) and **recovery** (a better pick after a rejection).
Rows whose source is *paper (reported)* are the numbers the Trace paper reports (facts from the paper, not runs
of this package, on the paper's own corpus); every other row was scored here, on the corpus and knowledge-base
versions shown in its last columns."""
ORDERS = ("best first", "reversed")
ANY = "(any)"


def about_markdown(settings: Settings) -> str:
    """Metric definitions (the registry), the leaderboard's columns, and the dataset card of the data directory."""
    from trace_metrics.specs import METRICS

    lines = ["## Leaderboard columns", ""]
    for view, columns in VIEWS.items():
        lines.append(f"- **{view}**: " + ", ".join(f"{header(c)} = `{c.metric}`" for c in columns))
    lines += ["", "`open:` columns read the system's open-pool row (every POI of the city and type as candidates).",
              "Submissions are scored without the NLI model and the LLM judge, so the NLI column stays empty "
              "for them.", "", "## Metrics", "",
              "| id | family | better | level | definition | parameters | paper |", "|---|---|---|---|---|---|---|"]
    for spec in METRICS.values():
        params = ", ".join(f"{k}={v}" for k, v in spec.parameters.items())
        lines.append(f"| `{spec.id}` | {spec.family} | {'↑' if spec.higher_is_better else '↓'} | "
                     f"{spec.level.replace('_', ' ')} | {_cell(spec.description)} | {_cell(params)} | {_cell(spec.paper)} |")
    return "\n".join(lines) + "\n\n## Dataset card\n\n" + dataset_card(settings.data_dir)


def dataset_card(data_dir: Path | None) -> str:
    """The data directory's card (README.md, written by the corpus/release tools) without its YAML front matter."""
    if data_dir is None:
        return "No data directory configured (TRACE_SPACE_DATA)."
    path = Path(data_dir) / "README.md"
    if path.exists():
        text = path.read_text(encoding="utf-8")
    else:  # render it from the data, as the corpus and release tools would have written it
        from trace_dataset.release.card import collect_stats, render_card

        text = render_card(collect_stats(data_dir))
    if text.startswith("---"):
        end = text.find("\n---", 3)
        text = text[end + 4:] if end != -1 else text
    return text.lstrip()


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def status_html(kind: str, message: str) -> str:
    """The Submit tab's status line; the message is escaped (it may quote the submitted name)."""
    colour = {"ok": "#1b5e20", "error": "#b71c1c"}[kind]
    label = {"ok": "Scored and added", "error": "Error"}[kind]
    return (f'<div class="trace-status trace-status-{kind}" style="color:{colour}"><b>{label}:</b> '
            f"{html.escape(message)}</div>")


def build_app(settings: Settings, store: ResultsStore | None = None):
    """The Gradio app for `settings`; `store` overrides the results store the settings select."""
    import gradio as gr

    store = store or open_store(settings.results_dir, settings.results_repo, settings.hub_token)
    index = None
    if settings.data_dir is not None:
        from spaces_app.browser import DialogueIndex

        index = DialogueIndex(settings.data_dir, settings.split, settings.runs_dir)
    log.info("leaderboard app: data %s, store %r, baselines %s", settings.data_dir, store, settings.baselines_file)

    def rows() -> list[dict[str, Any]]:
        return collect_rows(settings, store)

    def table(view, pool, families, show_paper, query, sort_by, order):
        if sort_by not in sort_choices(view):
            sort_by = None
        frame = leaderboard_frame(rows(), view, pool, families or [], query or "", bool(show_paper), sort_by,
                                  reverse=order == ORDERS[1])
        return gr.update(value=frame, datatype=frame_datatypes(view), column_widths=frame_widths(view))

    def on_view(view, pool, families, show_paper, query, order):
        choices = sort_choices(view)
        return (gr.update(choices=choices, value=choices[0]),
                table(view, pool, families, show_paper, query, choices[0], order))

    def plot(pool, y_label):
        metric = next(k for k, v in GAP_METRICS.items() if v == y_label)
        return gap_figure(rows(), pool, metric)

    first_view = next(iter(VIEWS))
    first_sort = sort_choices(first_view)
    with gr.Blocks(title="Trace leaderboard") as app:
        gr.Markdown(INTRO)
        if settings.data_dir is None:
            gr.Markdown("*This instance has no data directory (TRACE_SPACE_DATA): the dialogue browser and "
                        "submissions are off.*")
        with gr.Tabs():
            with gr.Tab("Leaderboard", id="leaderboard"):
                with gr.Row():
                    view = gr.Radio(list(VIEWS), value=first_view, label="Columns (paper table)", elem_id="view")
                    pool = gr.Radio(list(POOL_CHOICES), value="closed", label="Candidate pool", elem_id="pool")
                with gr.Row():
                    families = gr.CheckboxGroup(list(FAMILIES), value=list(FAMILIES), label="Family",
                                                elem_id="families")
                    show_paper = gr.Checkbox(value=True, label="Paper reference rows (reported numbers)",
                                             elem_id="show-paper")
                    query = gr.Textbox(label="Search systems", placeholder="name or description",
                                       elem_id="search")
                with gr.Row():
                    sort_by = gr.Dropdown(first_sort, value=first_sort[0], label="Sort by", elem_id="sort-by")
                    order = gr.Radio(list(ORDERS), value=ORDERS[0], label="Order", elem_id="order")
                    refresh = gr.Button("Refresh", elem_id="refresh-button", scale=0)
                board = gr.Dataframe(
                    value=leaderboard_frame(rows(), first_view), datatype=frame_datatypes(first_view),
                    column_widths=frame_widths(first_view), pinned_columns=1, interactive=False,
                    elem_id="leaderboard-table", wrap=True, max_height=1000, buttons=["copy", "fullscreen"],
                )
                gr.Markdown("Columns are grouped by axis (*Accuracy*, *Text*, *Grounding*, *Recovery*, *Practical*); "
                            "↑ higher is better, ↓ lower is better. Empty cell: not reported / not scored. "
                            "Versions: the first 12 hex digits of the corpus and knowledge-base hashes.")
                inputs = [view, pool, families, show_paper, query, sort_by, order]
                for control in (pool, families, show_paper, order):
                    control.change(table, inputs, board)
                sort_by.input(table, inputs, board)
                query.change(table, inputs, board)
                query.submit(table, inputs, board)
                refresh.click(table, inputs, board)
                view.change(on_view, [view, pool, families, show_paper, query, order], [sort_by, board])
                app.load(table, inputs, board)  # a reload shows rows submitted since the app started
            with gr.Tab("Three-Competency Gap", id="gap") as gap_tab:
                with gr.Row():
                    gap_pool = gr.Radio(list(POOL_CHOICES), value="closed", label="Candidate pool")
                    gap_y = gr.Radio(list(GAP_METRICS.values()), value=GAP_METRICS["cgs"], label="Against Recall@1")
                gap = gr.Plot(value=gap_figure(rows(), "closed", "cgs"), elem_id="gap-plot", format="png",
                              show_label=False)
                gr.Markdown("One point per system (paper Figure 2): systems that rank well need not ground or "
                            "recover well. Colour = family; circles were scored here, crosses are the paper's "
                            "reported numbers (its own corpus).")
                gap_pool.change(plot, [gap_pool, gap_y], gap)
                gap_y.change(plot, [gap_pool, gap_y], gap)
                gap_tab.select(plot, [gap_pool, gap_y], gap)
            with gr.Tab("Dialogues", id="dialogues"):
                if index is None:
                    gr.Markdown("No data directory configured (TRACE_SPACE_DATA): nothing to browse.")
                else:
                    _dialogue_tab(gr, index)
            with gr.Tab("Submit", id="submit"):
                gr.Markdown(
                    f"Upload a predictions file (JSON lines, one row per system turn of the **{settings.split}** "
                    "split: `{\"dialogue_id\", \"turn_id\", \"ranked_poi_ids\", \"response\", \"citations\"}`). "
                    "It is validated with the checks of `trace-bench evaluate`, scored (without the NLI model "
                    "and the LLM judge) and shown as a row. Resubmitting under the same name replaces your row "
                    f"once the new file has scored. Limit: {settings.max_upload_mb} MB.")
                upload = gr.File(label="Predictions (.jsonl)", file_types=[".jsonl", ".json", ".gz"], type="filepath",
                                 elem_id="submit-file")
                name = gr.Textbox(label="System name", max_length=NAME_MAX_CHARS, elem_id="submit-name")
                description = gr.Textbox(label="Description", lines=2, max_length=DESCRIPTION_MAX_CHARS,
                                         elem_id="submit-description")
                sub_pool = gr.Radio(list(SUBMIT_POOLS), value="closed", label="Candidate pool",
                                    elem_id="submit-pool")
                button = gr.Button("Submit", variant="primary", elem_id="submit-button")
                status = gr.HTML(elem_id="submit-status")

                def on_submit(path, name_, desc_, pool_, *board_inputs):
                    if not path:
                        message = status_html("error", "no predictions file uploaded")
                    else:
                        current = rows()
                        try:
                            row = submit(store, settings, path, name=name_, description=desc_, pool=pool_,
                                         reserved=reserved_names(current),
                                         kb=index.kb if index is not None else None)
                        except SubmissionError as e:
                            message = status_html("error", str(e))
                        else:
                            m = row["metrics"]
                            message = status_html("ok", f"{row['system']} ({row['pool']} pool): R@1 "
                                                        f"{m.get('recall@1', float('nan')):.3f}, "
                                                        f"CGS {m.get('cgs', float('nan')):.3f}")
                    return message, table(*board_inputs)

                button.click(on_submit, [upload, name, description, sub_pool, *inputs], [status, board],
                             concurrency_limit=2)
            with gr.Tab("About", id="about"):
                gr.Markdown(about_markdown(settings), elem_id="about")
    return app


def _dialogue_tab(gr, index) -> None:
    def _opt(v):
        return None if v in (None, "", ANY) else v

    with gr.Row():
        city = gr.Dropdown([ANY, *CITY_NAMES], value=ANY, label="City", elem_id="dialogue-city")
        poi_type = gr.Dropdown([ANY, *POI_TYPES], value=ANY, label="Type", elem_id="dialogue-type")
        tier = gr.Dropdown([ANY, *TIERS], value=ANY, label="Tier", elem_id="dialogue-tier")
        search = gr.Textbox(label="Dialogue id contains", elem_id="dialogue-search")
    ids = index.ids()
    first = ids[0] if ids else None
    dialogue = gr.Dropdown(index.choices(ids), value=first, label="Dialogue (type to filter)", elem_id="dialogue-id")
    first_turn = index.default_turn(first) if first else None
    turn = gr.Dropdown(index.system_turns(first) if first else [], value=first_turn,
                       label="System turn (what each baseline answered there)", elem_id="dialogue-turn")
    with gr.Row():
        view = gr.HTML(index.render_dialogue(first), elem_id="dialogue-view")
        answers = gr.HTML(index.render_predictions(first, first_turn), elem_id="dialogue-answers")

    def refilter(c, t, r, q):
        matching = index.ids(_opt(c), _opt(t), _opt(r), q or "")
        return gr.update(choices=index.choices(matching), value=matching[0] if matching else None)

    def show(did):
        t = index.default_turn(did) if did else None
        return (index.render_dialogue(did), gr.update(choices=index.system_turns(did) if did else [], value=t),
                index.render_predictions(did, t))

    for control in (city, poi_type, tier):
        control.change(refilter, [city, poi_type, tier, search], dialogue)
    search.submit(refilter, [city, poi_type, tier, search], dialogue)
    dialogue.change(show, dialogue, [view, turn, answers])
    turn.input(lambda did, t: index.render_predictions(did, t), [dialogue, turn], answers)
