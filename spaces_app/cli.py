"""`trace-bench serve` and `trace-bench submit`: the Space's commands (the main job, `trace-bench demo`, is the
harness's: trace_harness/main_job)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from pathlib import Path

from trace_bench.errors import UsageError
from trace_bench.options import number_in
from trace_dataset.constants import SPLITS

log = logging.getLogger(__name__)

SUBMIT_POOLS = ("closed", "open")  # = spaces_app.submissions.SUBMIT_POOLS (not imported: --help stays fast)
AUTH_MODES = ("oauth", "token")  # = spaces_app.settings.AUTH_MODES
TOKEN_ENV = "TRACE_SUBMIT_TOKEN"


# ---------------------------------------------------------------------------------------------------
# serve
# ---------------------------------------------------------------------------------------------------
def register_serve(sub) -> None:
    p = sub.add_parser(
        "serve",
        help="start the leaderboard app (Gradio) on this machine",
        description="Start the Trace leaderboard Space locally. Options override the TRACE_SPACE_* environment "
        "variables; without --data and TRACE_SPACE_DATA, the output of `trace-bench demo` "
        "(runs/demo) is used when present.",
    )
    p.add_argument("--data", type=Path, help="hydrated Trace data directory (TRACE_SPACE_DATA)")
    p.add_argument(
        "--results", type=Path, help="local results store folder (TRACE_SPACE_RESULTS, default runs/space)"
    )
    p.add_argument(
        "--results-repo", help="Hub dataset repo id for the results store (TRACE_SPACE_RESULTS_REPO)"
    )
    p.add_argument(
        "--runs",
        type=Path,
        help="folder of baseline prediction files for the dialogue browser (TRACE_SPACE_RUNS)",
    )
    p.add_argument(
        "--baselines",
        type=Path,
        help="leaderboard.json written by `trace-bench leaderboard` (TRACE_SPACE_BASELINES)",
    )
    p.add_argument(
        "--interactive",
        type=Path,
        action="append",
        metavar="DIR",
        help="a folder of `trace-bench interact` --out folders, or a leaderboard.interactive.json, for the "
        "Interactive tab; repeatable (TRACE_SPACE_INTERACTIVE; default: the demo's and runs/interactive)",
    )
    p.add_argument(
        "--core",
        type=Path,
        action="append",
        metavar="DIR",
        help="a folder of `trace-bench core score` --out folders for the CoRE tab; repeatable "
        "(TRACE_SPACE_CORE; default: the demo's and runs/core)",
    )
    p.add_argument(
        "--core-meta",
        type=Path,
        metavar="FILE",
        help="a `trace-bench core meta --out` result for the CoRE tab (TRACE_SPACE_CORE_META)",
    )
    p.add_argument(
        "--split", default=None, choices=SPLITS, help="split submissions are scored on (default test)"
    )
    p.add_argument(
        "--max-upload-mb",
        type=number_in(int, 1),
        default=None,
        help="upload limit (TRACE_SPACE_MAX_UPLOAD_MB, default 50)",
    )
    p.add_argument(
        "--auth",
        choices=AUTH_MODES,
        default=None,
        help="who owns a submission: oauth (Hugging Face login, the default on a Hub-hosted Space) or "
        "token (a submitter token, the default elsewhere) (TRACE_SPACE_AUTH)",
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=number_in(int, 0, 65535), default=7860)
    p.set_defaults(func=_serve)


def _check_port(host: str, port: int) -> None:
    """UsageError in one line when `host:port` is taken (Gradio would print a long traceback)."""
    import socket

    if port == 0:
        return
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError as e:
            raise UsageError(
                f"--port {port}: {host}:{port} is in use ({e.strerror}); is the app already serving there? "
                "Stop it, or pass another port: --port N"
            ) from None


def _serve(args: argparse.Namespace) -> int:
    from spaces_app.settings import Settings

    _check_port(args.host, args.port)
    # A path named on the command line must exist: a typo would otherwise serve an empty board for hours.
    for flag, path, want_dir in (
        ("--data", args.data, True),
        ("--runs", args.runs, True),
        ("--baselines", args.baselines, False),
        ("--core-meta", args.core_meta, False),
    ):
        if path is not None and not (path.is_dir() if want_dir else path.is_file()):
            raise UsageError(f"{flag} {path}: no such {'folder' if want_dir else 'file'}")
    try:
        settings = Settings.from_env(
            data_dir=args.data,
            results_dir=args.results,
            results_repo=args.results_repo,
            runs_dir=args.runs,
            split=args.split,
            baselines_file=args.baselines,
            max_upload_mb=args.max_upload_mb,
            auth=args.auth,
            interactive_dirs=tuple(args.interactive) if args.interactive else None,
            core_dirs=tuple(args.core) if args.core else None,
            core_meta=args.core_meta,
        )
    except ValueError as e:
        raise UsageError(str(e)) from None
    from spaces_app.app import serve

    print(f"Serving the Trace leaderboard on http://{args.host}:{args.port} (Ctrl-C stops it)", flush=True)
    try:
        serve(settings, args.host, args.port)
    except (
        ValueError
    ) as e:  # e.g. --auth oauth outside a Space: Gradio's stand-in login needs a logged-in account
        raise UsageError(" ".join(str(e).split())) from None
    return 0


# ---------------------------------------------------------------------------------------------------
# submit
# ---------------------------------------------------------------------------------------------------
def register_submit(sub) -> None:
    p = sub.add_parser(
        "submit",
        help="validate, score and store a predictions file as a leaderboard row",
        description="Validate a predictions file (JSON lines, or gzip of them) with the same checks as "
        "`trace-bench evaluate`, score it (without NLI and the LLM judge) and write it to the results "
        "store (a folder, or the Hub dataset repo of TRACE_SPACE_RESULTS_REPO with HF_TOKEN). A row "
        "belongs to its submitter: the first submission of a name prints a submitter token; give it "
        f"again (--token or {TOKEN_ENV}) to replace the row. Earlier versions stay in the store.",
    )
    p.add_argument("predictions", type=Path)
    p.add_argument(
        "--name", required=True, help="system name shown on the leaderboard (at most 64 characters)"
    )
    p.add_argument("--description", default="")
    p.add_argument(
        "--token",
        default=None,
        help=f"submitter token of the row to replace (or {TOKEN_ENV}); none on a first submission",
    )
    p.add_argument("--data", type=Path, help="hydrated Trace data directory (TRACE_SPACE_DATA)")
    p.add_argument("--split", default=None, choices=SPLITS, help="split the file covers (default test)")
    p.add_argument("--pool", default="closed", choices=SUBMIT_POOLS)
    p.add_argument(
        "--results", type=Path, help="local results store folder (TRACE_SPACE_RESULTS, default runs/space)"
    )
    p.add_argument("--results-repo", help="Hub dataset repo id (TRACE_SPACE_RESULTS_REPO)")
    p.add_argument(
        "--baselines", type=Path, help="leaderboard.json whose names are reserved (TRACE_SPACE_BASELINES)"
    )
    p.add_argument("--max-upload-mb", type=number_in(int, 1), default=None)
    p.add_argument(
        "--token-file",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write a new submitter token to FILE (mode 0600) before the row is stored",
    )
    p.add_argument(
        "--manifest",
        type=Path,
        default=None,
        metavar="FILE",
        help="the OUT/manifest.json `trace-bench reproduce` wrote for the run (kept on the row; "
        "`trace-bench leaderboard verify` re-runs it)",
    )
    p.add_argument(
        "--blind",
        type=Path,
        default=None,
        metavar="GOLD_DIR",
        help="submit to the blind period of this gold folder (`trace-bench corpus blind`'s gold/), within "
        "its quota (TRACE_SPACE_QUOTA)",
    )
    p.set_defaults(func=_submit)


def _submit(args: argparse.Namespace) -> int:
    from spaces_app.blind import current, load_period
    from spaces_app.leaderboard import collect_rows, reserved_names
    from spaces_app.owners import OwnerError, owner_from_token
    from spaces_app.settings import Settings
    from spaces_app.store import open_store
    from spaces_app.submissions import SubmissionError, submit
    from trace_bench.errors import TraceBenchError

    try:
        settings = Settings.from_env(
            data_dir=args.data,
            results_dir=args.results,
            results_repo=args.results_repo,
            split=args.split,
            baselines_file=args.baselines,
            max_upload_mb=args.max_upload_mb,
        )
    except ValueError as e:
        raise UsageError(" ".join(str(e).split())) from None
    try:
        period = None if args.blind is None else current(load_period(args.blind))
        owner = owner_from_token(args.token or os.environ.get(TOKEN_ENV))
        store = open_store(settings.results_dir, settings.results_repo, settings.hub_token)
        row = submit(
            store,
            settings,
            args.predictions,
            name=args.name,
            description=args.description,
            pool=args.pool,
            owner=owner,
            reserved=reserved_names(collect_rows(settings, store)),
            before_store=lambda: _show_new_token(owner, args.token_file),
            period=period,
            manifest_path=args.manifest,
        )
    except (SubmissionError, OwnerError) as e:
        raise SubmissionError(f"submission refused: {e}") from None
    except (ValueError, OSError) as e:  # an unreachable or unwritable store
        if isinstance(e, TraceBenchError):
            raise
        raise TraceBenchError(f"submit: {' '.join(str(e).split())}") from None
    print(
        f"stored {row['system']!r} ({'blind period ' + row['period'] + ', ' if row.get('period') else ''}"
        f"{row['pool']} pool, {row['split']} split, version {row['version']}) in "
        f"{store!r}: " + ", ".join(f"{k}={v:.3f}" for k, v in row["metrics"].items() if isinstance(v, float))
    )
    return 0


def _show_new_token(owner, token_file: Path | None) -> None:
    """A new submitter token, written to `token_file` (when given) and printed, before the row is stored: a
    pipe that closes or a kill after the commit can no longer leave a row whose token exists nowhere. When the
    token cannot be written or shown (stdout closed with `>&-`, a reader gone as in `| head -0`, an unwritable
    file), SubmissionError stops the submission before anything is stored."""
    from spaces_app.submissions import SubmissionError

    if not owner.token_is_new:
        return
    text = (
        f"submitter token: {owner.token}\n(keep it: it is needed to replace this row, with --token or "
        f"{TOKEN_ENV}; the store keeps only its hash)\n"
    )
    try:
        if token_file is not None:
            fd = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                os.fchmod(fd, 0o600)
                f.write(owner.token + "\n")
        _write_whole(sys.stdout, text)
    except (OSError, ValueError) as e:  # a closed pipe (BrokenPipeError), a closed stdout, an unwritable file
        raise SubmissionError(
            f"the new submitter token could not be shown ({type(e).__name__}: {e}), so nothing "
            "was stored; rerun where the output can be read, or choose a token yourself "
            "(--token, at least 16 characters)"
        ) from None


def _write_whole(stream, text: str) -> None:
    """`text` written and flushed as one write (a reader sees all of it or none); OSError when the stream is
    closed or its reader gone, after pointing it at the null device so that the exit's flush cannot fail too."""
    if stream is None:  # started with the descriptor closed (`>&-`): Python has no stream for it
        raise OSError("standard output is closed")
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        raise
