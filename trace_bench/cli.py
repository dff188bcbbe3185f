"""`trace-bench`: the root command. Each package registers its own sub-commands through the
`trace_bench.commands` entry-point group (see pyproject.toml), so this module imports no package above
the kernel; a user-facing error (`trace_bench.errors.TraceBenchError`) from any command is one line and exit 2.

A registration function takes the argparse sub-parsers object, adds one parser and sets
`func=callable(args) -> int | None` on it. Heavy imports belong inside that callable.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from importlib.metadata import entry_points

from trace_bench.errors import TraceBenchError
from trace_bench.shell import pip_install_command

ENTRY_POINT_GROUP = "trace_bench.commands"
log = logging.getLogger("trace_bench")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trace-bench",
        description="Build, load, score and serve the Trace tourism CRS benchmark.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            ep.load()(sub)
        except ImportError as e:  # an optional part is not installed: say so when the command is used
            _register_unavailable(sub, ep.name, e)
    return parser


def _register_unavailable(sub, name: str, error: ImportError) -> None:
    missing = getattr(error, "name", None) or str(error)

    def fail(args: argparse.Namespace) -> int:
        print(
            f"trace-bench {name}: unavailable in this installation ({error}). "
            f"Install the extras: {pip_install_command('trace-bench[all]')} (missing: {missing})",
            file=sys.stderr,
        )
        return 2

    p = sub.choices.get(name) or sub.add_parser(
        name, help=f"(unavailable: {missing})"
    )  # registration may have begun
    p.set_defaults(func=fail)


def configure_logging(verbose: int = 0, quiet: bool = False) -> None:
    level = logging.WARNING if quiet else (logging.DEBUG if verbose > 1 else logging.INFO)
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S"
    )
    for noisy in ("httpx", "urllib3", "filelock", "fsspec", "matplotlib"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))


def run_command(argv: Sequence[str]) -> int:
    """Run one `trace-bench` command in this process, found through the command registry (the entry-point
    group): a package reaches a command of a package above it this way without importing it (the main job's
    `--serve` starts the Space's `serve`). Errors propagate to the caller's command."""
    args = build_parser().parse_args(list(argv))
    return int(args.func(args) or 0)


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # the reader went away (`trace-bench ... | head`): not an error of ours. Point stdout at devnull so the
        # interpreter's final flush does not raise again (the recipe in Python's signal documentation).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def say_error(line: str) -> None:
    """`line` on stderr or, when stderr is closed or its reader gone, on stdout; nowhere when neither takes it
    (the exit code still tells). A stream that failed is pointed at the null device, so the exit's flush does
    not fail again."""
    for stream in (sys.stderr, sys.stdout):
        if stream is None:  # the descriptor was closed when Python started (`2>&-`)
            continue
        try:
            stream.write(line + "\n")  # one write: a reader gets the whole line or none of it
            stream.flush()
            return
        except (OSError, ValueError):
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
            except (OSError, ValueError):
                pass


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(args.verbose, args.quiet)
    try:
        rc = args.func(args)
    except TraceBenchError as e:  # one line, whatever the message holds
        say_error(f"trace-bench: error: {' '.join(str(e).splitlines())}")
        return 2
    except (
        OSError
    ) as e:  # the file system refused: a missing path, no permission, a file where a folder belongs
        if e.filename is None:
            raise  # not about a path the user gave: a bug or an environment failure, keep its traceback
        print(f"trace-bench: error: {e.filename}: {e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("trace-bench: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())
