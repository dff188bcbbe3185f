"""Every `trace-bench` subcommand, found by walking the root parser (so a command registered later through the
entry points is covered without touching this file), run with bad files and bad arguments: each run must end
with a message and an exit code, never a traceback.

Scenarios per command:
  input   every input path (required or not) is one bad file or folder, one after the other: missing, empty,
          binary, truncated gzip, not gzip, JSON nested 100,000 deep, an empty folder, a folder of broken files
          named like every Trace and Yelp file;
  output  inputs valid, the output (`--out`, `--results`) is an existing file, a path under a file, or an
          unwritable folder (commands whose required inputs the walker cannot fill are skipped and listed);
  number  inputs valid, one numeric option at a time set to -1 (seeds included; floats also to nan, inf and
          -inf): refused when the options are parsed, never a traceback or a run poisoned by NaN;
and, beside the walk, path-like model options (`--param model=...`, `--param encoder=...`, `--nli PATH`) and
corrupt caches (LLM responses, Dense queries, SnipRec vectors under $TRACE_BENCH_CACHE).
The number scenarios' config forms (every numeric key of a `reproduce` config, and every backend option
accepting what its flag accepts) are walked in tests/trace_harness/reproduce/test_config_walk.py.
Arguments are classified by their dest, type and metavar. Commands that start a server or the whole pipeline
when their arguments are valid (serve, demo) get the input and output scenarios only.
"""

from __future__ import annotations

import argparse
import gzip
import signal
from pathlib import Path

import pytest

from tests.support.cli import TRACEBACK, World
from trace_bench.cli import build_parser, main

LONG_RUNNING = {"serve", "demo"}
CASE_SECONDS = 120
OUTPUT_DESTS = {"out", "results", "output"}
PATH_METAVARS = ("DIR", "FILE", "PATH")
PATH_DESTS = {
    "data",
    "corpus",
    "kb",
    "release",
    "yelp",
    "predictions",
    "compare",
    "runs",
    "dir",
    "path",
    "json_schema",
    "llm_cache",
    "out",
    "results",
}  # plus every Path-typed argument
# valid values by dest, for the output and number scenarios (World attribute names)
VALID_PATHS = {
    "data": "corpus",
    "corpus": "corpus",
    "dir": "corpus",
    "kb": "kb",
    "release": "release",
    "yelp": "bundle",
    "path": "bundle",
    "predictions": "predictions",
    "compare": "predictions",
    "runs": "runs",
}
VALID_STRINGS = {("name", True): "popularity", ("prompt", True): "hi", ("name", False): "walker system"}


def leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, child in subs[0].choices.items():
        yield from leaves(child, (*path, name))


def kind_of(action: argparse.Action) -> str | None:
    """ "output", "input" (a path), "number", "string", or None (flags, help, choices)."""
    if isinstance(
        action,
        (
            argparse._HelpAction,
            argparse._StoreTrueAction,
            argparse._StoreFalseAction,
            argparse._CountAction,
            argparse._VersionAction,
        ),
    ):
        return None
    dest = action.dest
    metavar = str(action.metavar or "")
    type_name = getattr(action.type, "__name__", "")
    path_like = (
        type_name in ("Path", "PosixPath") or any(m in metavar for m in PATH_METAVARS) or dest in PATH_DESTS
    )
    if path_like:
        return "output" if dest in OUTPUT_DESTS or dest.startswith("out") else "input"
    if type_name in ("int", "float"):
        return "number"
    if action.choices:
        return None
    return "string"


def option(action: argparse.Action) -> list[str]:
    return [action.option_strings[0]] if action.option_strings else []


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bad")
    files: dict[str, Path] = {"missing": root / "missing" / "nothing.jsonl"}
    files["empty file"] = root / "empty.jsonl"
    files["empty file"].write_bytes(b"")
    files["binary"] = root / "binary.jsonl"
    files["binary"].write_bytes(bytes(range(256)) * 8)
    data = gzip.compress(b'{"a": 1}\n' * 5000)
    files["truncated gzip"] = root / "truncated.jsonl.gz"
    files["truncated gzip"].write_bytes(data[: len(data) // 2])
    files["not gzip"] = root / "plain.jsonl.gz"
    files["not gzip"].write_bytes(b'{"a": 1}\n')
    files["deep json"] = root / "deep.jsonl"
    files["deep json"].write_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    files["empty folder"] = root / "empty_folder"
    files["empty folder"].mkdir()
    junk = files["broken folder"] = root / "broken_folder"
    broken = {
        "data/train.jsonl.gz": data[:100],
        "data/validation.jsonl.gz": b"\xff\xfe",
        "data/test.jsonl.gz": data[:50],
        "knowledge_base/pois.jsonl.gz": b"not gzip",
        "knowledge_base/review_index.jsonl.gz": data[:10],
        "knowledge_base/reviews.jsonl.gz": b"",
        "knowledge_base/kb.json": b"[" * 100_000,
        "pois.jsonl.gz": b"nope",
        "review_index.jsonl.gz": b"",
        "kb.json": b"{broken",
        "corpus.json": b"[" * 100_000,
        "release.json": b"\xff",
        "hydration.json": b"{}",
        "yelp_academic_dataset_business.json.gz": data[:100],
        "yelp_academic_dataset_review.json": b"\xff\xfe\n",
        "leaderboard.json": b"{",
        "popularity.jsonl": b"\xff\n",
        "popularity.jsonl.meta.json": b"[",
    }
    for rel, content in broken.items():
        (junk / rel).parent.mkdir(parents=True, exist_ok=True)
        (junk / rel).write_bytes(content)
    return files


@pytest.fixture(scope="module")
def stub_llm():
    from tests.support.stub_server import StubOpenAI

    with StubOpenAI() as server:
        yield server


class _Hung(Exception):
    pass


def _alarm(signum, frame):
    raise _Hung(f"no answer within {CASE_SECONDS} s")


def run_case(capsys, argv: list[str]) -> tuple[int | None, str]:
    capsys.readouterr()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 2
    except Exception as e:  # noqa: BLE001 - this test exists to catch every escaping exception
        import traceback

        rc = None
        captured = capsys.readouterr()
        return rc, captured.out + captured.err + "".join(traceback.format_exception(e))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    captured = capsys.readouterr()
    return rc, captured.out + captured.err


def _base_args(
    parser,
    path: tuple[str, ...],
    world: World,
    stub_llm,
    fresh: Path,
    *,
    valid_inputs: bool,
    input_value: Path | None,
) -> list[str] | None:
    """Arguments for one scenario: inputs valid (or all `input_value`), outputs fresh, strings filled."""
    argv: list[str] = list(path)
    positionals: list[str] = []
    for action in parser._actions:
        kind = kind_of(action)
        dest = action.dest
        if kind is None:
            continue
        if dest == "llm":
            argv += [*option(action), stub_llm.spec()]
            continue
        if kind == "output":
            value = str(fresh / f"{dest}_out")
        elif kind == "input":
            if input_value is not None:
                value = str(input_value)
            elif valid_inputs and (action.required or not action.option_strings):
                if dest not in VALID_PATHS:
                    return None  # the walker does not know a valid value for this input
                value = str(getattr(world, VALID_PATHS[dest]))
            else:
                continue
        elif kind == "string" and (action.required or not action.option_strings):
            value = VALID_STRINGS.get((dest, not action.option_strings), "x")
        else:
            continue
        if action.option_strings:
            argv += [action.option_strings[0], value]
        else:
            positionals.append(value)
    if any(a.dest == "no_llm_cache" for a in parser._actions):
        argv.append("--no-llm-cache")
    if any(a.dest == "no_progress" for a in parser._actions):
        argv.append("--no-progress")
    return argv + positionals


def _set(argv: list[str], flag: str, value: str) -> list[str]:
    if flag in argv:
        argv = list(argv)
        argv[argv.index(flag) + 1] = value
        return argv
    return [*argv, flag, value]


def scenarios(world: World, bad_files: dict[str, Path], stub_llm, tmp: Path, unwritable: Path | None):
    parser = build_parser()
    skipped = []
    for path, leaf in leaves(parser):
        name = " ".join(path)
        actions = [a for a in leaf._actions if kind_of(a) is not None]
        if not actions:
            yield name, "bare", list(path)
            continue
        has_input = any(kind_of(a) == "input" for a in actions)
        for label, bad in bad_files.items():
            if not has_input:
                break
            fresh = tmp / f"{name}-{label}".replace(" ", "_")
            argv = _base_args(leaf, path, world, stub_llm, fresh, valid_inputs=False, input_value=bad)
            yield name, f"input={label}", argv
        outputs = [
            a for a in actions if kind_of(a) == "output" and a.option_strings and a.dest in OUTPUT_DESTS
        ]
        fresh = tmp / f"{name}-valid".replace(" ", "_")
        valid = _base_args(leaf, path, world, stub_llm, fresh, valid_inputs=True, input_value=None)
        if valid is None:
            skipped.append(name)
            continue
        a_file = tmp / "a_file"
        a_file.write_text("x\n")
        for out in outputs:
            flag = out.option_strings[0]
            targets = {"existing file": a_file, "under a file": a_file / "sub"}
            if unwritable is not None:
                targets["unwritable folder"] = unwritable / "out"
            for label, target in targets.items():
                yield name, f"{flag} {label}", _set(valid, flag, str(target))
        if path[0] in LONG_RUNNING:
            continue
        for action in actions:
            if kind_of(action) != "number" or not action.option_strings:
                continue
            if any(word in action.dest for word in ("port", "verbose")):
                continue
            flag = action.option_strings[0]
            floats = ("-1", "nan", "inf", "-inf")
            for value in floats if getattr(action.type, "__name__", "") == "float" else ("-1",):
                yield name, f"{flag} {value}", _set(valid, flag, value)
    if skipped:
        print(f"output and number scenarios skipped (no known valid input) for: {', '.join(skipped)}")


@pytest.mark.slow
def test_every_subcommand_survives_bad_input(world, bad_files, stub_llm, tmp_path, capsys, unwritable_dir):
    failures = []
    n = 0
    for name, scenario, argv in list(scenarios(world, bad_files, stub_llm, tmp_path, unwritable_dir)):
        n += 1
        rc, text = run_case(capsys, [str(a) for a in argv])
        if rc is None or TRACEBACK in text:
            failures.append(f"trace-bench {' '.join(map(str, argv))}  [{name}: {scenario}]\n{text[-3000:]}")
    assert n > 50
    assert not failures, f"{len(failures)} of {n} runs ended in a traceback:\n\n" + "\n\n".join(failures)


@pytest.mark.slow
def test_model_options_and_corrupt_caches_end_in_one_line(world, stub_llm, tmp_path, capsys, monkeypatch):
    caches = tmp_path / "cache"
    for rel in ("llm.sqlite", "dense/queries.sqlite", "sniprec/vectors.sqlite", "nli.sqlite"):
        (caches / rel).parent.mkdir(parents=True, exist_ok=True)
        (caches / rel).write_bytes(b"\x00not a database\n" * 512)
    monkeypatch.setenv("TRACE_BENCH_CACHE", str(caches))
    out = tmp_path / "out"
    run = ["run", "--data", world.corpus, "--no-progress"]
    cases = {  # label: (argv, what the one line says)
        "dense model folder": (
            [*run, "dense", "--out", out / "a.jsonl", "--param", "model=/nonexistent/model"],
            "cannot load the sentence-transformers model '/nonexistent/model'",
        ),
        "dense model empty": (
            [*run, "dense", "--out", out / "b.jsonl", "--param", "model="],
            "expected a sentence-transformers model id or folder",
        ),
        "sniprec encoder": (
            [*run, "sniprec", "--out", out / "c.jsonl", "--param", "encoder=../no-such-encoder"],
            "cannot load the sentence-transformers model '../no-such-encoder'",
        ),
        "nli folder": (
            [
                "evaluate",
                "--data",
                world.corpus,
                "--predictions",
                world.predictions,
                "--out",
                out / "r.json",
                "--nli",
                "/nonexistent/nli",
            ],
            "NLI model folder '/nonexistent/nli' does not",
        ),
        "corrupt dense cache": (
            [*run, "dense", "--out", out / "d.jsonl"],
            "dense/queries.sqlite: cannot be used",
        ),
        "corrupt sniprec cache": (
            [*run, "sniprec", "--out", out / "e.jsonl"],
            "vectors.sqlite: cannot be used",
        ),
        "corrupt llm cache": (["llm", "chat", "--llm", stub_llm.spec(), "hi"], "llm.sqlite: cannot open"),
        "interact seed": (
            [
                "interact",
                "--system",
                "popularity",
                "--data",
                world.corpus,
                "--out",
                out / "i",
                "--seed",
                "-1",
            ],
            "argument --seed: expected an integer >= 0, got '-1'",
        ),
        "leaderboard seed": (
            ["leaderboard", "--data", world.corpus, "--runs", world.runs, "--seed", "-1"],
            "argument --seed: expected an integer >= 0, got '-1'",
        ),
    }
    failures = []
    for label, (argv, expected) in cases.items():
        rc, text = run_case(capsys, [str(a) for a in argv])
        if rc != 2 or TRACEBACK in text or expected not in text:
            failures.append(f"[{label}] rc={rc}, expected {expected!r}\n{text[-2000:]}")
    assert not failures, "\n\n".join(failures)
    assert not (out / "i").exists()


def test_walker_sees_every_registered_command():
    from importlib.metadata import entry_points

    from trace_bench.cli import ENTRY_POINT_GROUP

    found = {path[0] for path, _ in leaves(build_parser())}
    assert {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)} <= found
    assert {"kb", "corpus", "run", "evaluate", "submit", "yelp", "llm"} <= found


def test_kind_of_classifies_arguments():
    parser = build_parser()
    kinds = {(" ".join(p), a.dest): kind_of(a) for p, leaf in leaves(parser) for a in leaf._actions}
    assert kinds[("kb build", "out")] == "output" and kinds[("kb build", "yelp")] == "input"
    assert kinds[("evaluate", "predictions")] == "input" and kinds[("evaluate", "n_boot")] == "number"
    assert kinds[("corpus generate", "n")] == "number" and kinds[("run", "name")] == "string"
    assert kinds[("corpus generate", "no_progress")] is None and kinds[("corpus generate", "backend")] is None
