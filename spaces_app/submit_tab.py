"""The Submit tab: upload, name, description, pool, and who the submitter is.

On a Hub-hosted Space (`settings.auth == "oauth"`) the submitter is the Hugging Face user logged in with
`gr.LoginButton` (Gradio injects a `gr.OAuthProfile`); elsewhere it is the holder of a submitter token
(spaces_app.owners), issued by the tab before any row is stored under it (`submit_step`). `submit_step` is the
whole handler as a plain function, so tests call it with a profile object or a token without a browser or a
login.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import gradio as gr

from spaces_app.blind import PUBLIC_TRACK
from spaces_app.leaderboard import reserved_names
from spaces_app.markup import esc
from spaces_app.owners import OwnerError, owner_from_profile, owner_from_token
from spaces_app.store import DESCRIPTION_MAX_CHARS, NAME_MAX_CHARS, check_name, slugify, stored_slug
from spaces_app.submissions import SUBMIT_POOLS, SubmissionError, submit

log = logging.getLogger(__name__)


def status_html(kind: str, message: str, extra: str = "") -> str:
    """The Submit tab's status line; `message` and `extra` are escaped (they quote the submitted name)."""
    colour = {"ok": "#1b5e20", "error": "#b71c1c", "token": "#0d47a1"}[kind]
    label = {"ok": "Scored and added", "error": "Error", "token": "Nothing stored yet"}[kind]
    more = f'<div class="trace-status-extra">{esc(extra)}</div>' if extra else ""
    return (
        f'<div class="trace-status trace-status-{kind}" style="color:{colour}"><b>{label}:</b> '
        f"<bdi>{esc(message)}</bdi>{more}</div>"
    )


def _taken(ctx, name: str, pool: str) -> bool:
    """Whether a stored row has this name's slug in this pool (a name the checks refuse: no)."""
    try:
        own = slugify(check_name(name))
    except ValueError:
        return False
    return any(stored_slug(r) == own and r.get("pool") == pool for r in ctx.store.rows())


def submit_step(
    ctx,
    path: str | None,
    name: str,
    description: str,
    pool: str,
    *,
    token: str | None = None,
    profile: Any = None,
    track: str = PUBLIC_TRACK,
    manifest: str | None = None,
) -> tuple[str, str | None]:
    """Handle one Submit click: (the status HTML, a new submitter token for the token field or None); never
    raises for a refused submission.

    Without sign-in, a click with an empty token field stores nothing: it issues a token, shown in the status
    and put in the field, and the submitter clicks again. A row is thus only ever stored under a token that
    came back from the browser, so a browser that disconnects before a reply arrives loses no token of a
    stored row (the token is hashed in the row and could never be shown again). `track`: the public track or
    a blind period's (`Period.track`); `manifest`: a `trace-bench reproduce` manifest.
    """
    if not path:
        return status_html("error", "no predictions file uploaded"), None
    if ctx.settings.auth != "oauth" and not (token or "").strip():
        if _taken(ctx, name, pool):
            return status_html(
                "error",
                f"the name {name.strip()!r} is taken; to replace your own row, give the submitter token it "
                "was stored with, or choose another name",
            ), None
        new = owner_from_token(None).token
        return status_html(
            "token",
            "a submitter token was made for you and put in the token field; copy it and keep it, then "
            "press Submit again",
            f"Your submitter token: {new} — it is needed to replace this row, and the row will keep only its "
            "hash (it cannot be shown again).",
        ), new
    try:
        period = None if track in (None, "", PUBLIC_TRACK) else _period(ctx, track)
        owner = owner_from_profile(profile) if ctx.settings.auth == "oauth" else owner_from_token(token)
        row = submit(
            ctx.store,
            ctx.settings,
            path,
            name=name,
            description=description,
            pool=pool,
            owner=owner,
            reserved=reserved_names(ctx.rows()),
            kb=ctx.index.kb if ctx.index is not None else None,
            period=period,
            manifest_path=manifest,
        )
    except (SubmissionError, OwnerError) as e:
        return status_html("error", str(e)), None
    m = row["metrics"]
    where = f"blind period {row['period']}, " if row.get("period") else ""
    summary = (
        f"{row['system']} ({where}{row['pool']} pool, version {row['version']}, submission "
        f"{row.get('submissions', row['version'])} of yours to this track): R@1 "
        f"{m.get('recall@1', float('nan')):.3f}, CGS {m.get('cgs', float('nan')):.3f}"
    )
    return status_html("ok", summary), None


def submit_action(ctx, path: str | None, name: str, description: str, pool: str, **who: Any) -> str:
    """`submit_step`'s status HTML alone (`who`: token= or profile=)."""
    return submit_step(ctx, path, name, description, pool, **who)[0]


def _period(ctx, track: str):
    """The blind period of `track`, as its folder says now; SubmissionError naming the open ones."""
    from spaces_app.blind import current

    for p in ctx.periods:
        if p.track == track:
            return current(p)
    raise SubmissionError(f"unknown track {track!r}; expected one of {ctx.tracks()}")


def submit_tab(ctx) -> None:
    settings = ctx.settings
    who = (
        "Sign in with your Hugging Face account: the row is yours, and only you can replace it."
        if settings.auth == "oauth"
        else "Leave the submitter token empty on a first submission: Submit then puts a new token in the "
        "field and stores nothing; keep the token and press Submit again. Only its holder can replace the row."
    )
    gr.Markdown(
        f"Upload a predictions file (JSON lines, or gzip of them, one row per system turn of the "
        f'**{settings.split}** split: `{{"dialogue_id", "turn_id", "ranked_poi_ids", "response", '
        '"citations"}`). It is validated with the checks of `trace-bench evaluate`, scored (without the NLI '
        "model and the LLM judge) and shown as a row. Resubmitting under the same name replaces your row once "
        f"the new file has scored; every earlier version stays in the results store. {who} "
        f"Limit: {settings.max_upload_mb} MB, uncompressed."
    )
    login = gr.LoginButton() if settings.auth == "oauth" else None
    upload = gr.File(
        label="Predictions (.jsonl or .jsonl.gz)",
        file_types=[".jsonl", ".json", ".gz"],
        type="filepath",
        elem_id="submit-file",
    )
    name = gr.Textbox(label="System name", max_length=NAME_MAX_CHARS, elem_id="submit-name")
    description = gr.Textbox(
        label="Description", lines=2, max_length=DESCRIPTION_MAX_CHARS, elem_id="submit-description"
    )
    pool = gr.Radio(list(SUBMIT_POOLS), value="closed", label="Candidate pool", elem_id="submit-pool")
    track = gr.Radio(
        ctx.tracks(),
        value=PUBLIC_TRACK,
        label=f"Track (a blind period: its inputs release, at most {settings.quota} submissions per owner)",
        elem_id="submit-track",
        visible=bool(ctx.periods),
    )
    manifest = gr.File(
        label="Manifest of the run (optional: OUT/manifest.json of `trace-bench reproduce`)",
        file_types=[".json"],
        type="filepath",
        elem_id="submit-manifest",
    )
    token = None
    if login is None:
        token = gr.Textbox(
            label="Submitter token (empty on a first submission)", type="password", elem_id="submit-token"
        )
    button = gr.Button("Submit", variant="primary", elem_id="submit-button")
    status = gr.HTML(elem_id="submit-status")
    on_submit: Callable[..., Any]
    inputs: list[Any] = [upload, name, description, pool, track, manifest]
    if token is not None:  # no sign-in: the submitter token identifies the row's owner

        def submit_with_token(path, name_, desc_, pool_, track_, manifest_, token_):
            status_, new = submit_step(
                ctx, path, name_, desc_, pool_, token=token_, track=track_, manifest=manifest_
            )
            return status_, gr.update() if new is None else gr.update(value=new)

        on_submit = submit_with_token
        inputs.append(token)
        outputs: list[Any] = [status, token]
    else:  # gradio fills `profile` from the signed-in user (the parameter's annotation tells it to)

        def submit_signed_in(path, name_, desc_, pool_, track_, manifest_, profile: gr.OAuthProfile | None):
            return submit_action(
                ctx, path, name_, desc_, pool_, profile=profile, track=track_, manifest=manifest_
            )

        on_submit = submit_signed_in
        outputs = [status]
    button.click(on_submit, inputs, outputs, concurrency_limit=2).then(ctx.table, ctx.board_inputs, ctx.board)
