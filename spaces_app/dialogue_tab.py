"""The Dialogues tab: pick a test dialogue by city, type, tier or id, read it, and see each baseline's answer
at a system turn (spaces_app.browser renders both)."""

from __future__ import annotations

from spaces_app.markup import esc
from trace_dataset.constants import CITY_NAMES, POI_TYPES, TIERS

ANY = "(any)"


def _opt(value):
    return None if value in (None, "", ANY) else value


def no_match_html(city, poi_type, tier, query) -> str:
    """What the dialogue view says when the filters match no dialogue (rather than going blank)."""
    given = [
        f"{label} {esc(v)}"
        for label, v in (("city", _opt(city)), ("type", _opt(poi_type)), ("tier", _opt(tier)))
        if v
    ]
    if (query or "").strip():
        given.append(f"id containing “{esc(query.strip())}”")
    return (
        '<p class="trace-no-match"><b>No dialogue matches these filters</b> ('
        + ", ".join(given)
        + "). Widen a filter or clear the id box.</p>"
    )


def dialogue_tab(ctx) -> None:
    import gradio as gr

    index = ctx.index
    if index is None:
        gr.Markdown("No data directory configured (TRACE_SPACE_DATA): nothing to browse.")
        return
    with gr.Row():
        city = gr.Dropdown([ANY, *CITY_NAMES], value=ANY, label="City", elem_id="dialogue-city")
        poi_type = gr.Dropdown([ANY, *POI_TYPES], value=ANY, label="Type", elem_id="dialogue-type")
        tier = gr.Dropdown([ANY, *TIERS], value=ANY, label="Tier", elem_id="dialogue-tier")
        search = gr.Textbox(label="Dialogue id contains (Enter to apply)", elem_id="dialogue-search")
    ids = index.ids()
    first = ids[0] if ids else None
    dialogue = gr.Dropdown(
        index.choices(ids), value=first, label="Dialogue (type to filter)", elem_id="dialogue-id"
    )
    first_turn = index.default_turn(first) if first else None
    turn = gr.Dropdown(
        index.system_turns(first) if first else [],
        value=first_turn,
        label="System turn (what each baseline answered there)",
        elem_id="dialogue-turn",
    )
    with gr.Row():
        view = gr.HTML(index.render_dialogue(first), elem_id="dialogue-view")
        answers = gr.HTML(index.render_predictions(first, first_turn), elem_id="dialogue-answers")

    def refilter(c, t, r, q):
        matching = index.ids(_opt(c), _opt(t), _opt(r), q or "")
        if not matching:
            return (
                gr.update(choices=[], value=None),
                no_match_html(c, t, r, q),
                gr.update(choices=[], value=None),
                "",
            )
        did = matching[0]
        turn_id = index.default_turn(did)
        return (
            gr.update(choices=index.choices(matching), value=did),
            index.render_dialogue(did),
            gr.update(choices=index.system_turns(did), value=turn_id),
            index.render_predictions(did, turn_id),
        )

    def show(did):
        if not did:  # cleared by a filter that matched nothing: the message stays
            return gr.update(), gr.update(), gr.update()
        t = index.default_turn(did)
        return (
            index.render_dialogue(did),
            gr.update(choices=index.system_turns(did), value=t),
            index.render_predictions(did, t),
        )

    outputs = [dialogue, view, turn, answers]
    for control in (city, poi_type, tier):
        control.change(refilter, [city, poi_type, tier, search], outputs)
    search.submit(refilter, [city, poi_type, tier, search], outputs)
    dialogue.input(show, dialogue, [view, turn, answers])
    turn.input(lambda did, t: index.render_predictions(did, t), [dialogue, turn], answers)
