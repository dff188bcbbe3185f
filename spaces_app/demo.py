"""The main job on the built-in synthetic Yelp bundle, stage by stage, resumable.

synthetic bundle -> knowledge base -> dialogues -> [Q:N] release -> hydration -> statistics ->
baselines (closed and open pool) -> leaderboard -> app. Every stage writes its output atomically and is
skipped when its completion marker is there, so rerunning the command resumes an interrupted run. The
settings that shape the data are recorded in OUT/demo.json; a rerun with other settings is refused rather
than mixing two corpora.
"""

from __future__ import annotations

import argparse
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trace_dataset.constants import CORPUS_META_FILE, KB_META_FILE, KB_PER_CELL, SEED
from trace_dataset.io import TraceDataError, read_json, write_json

log = logging.getLogger(__name__)

DEMO_META = "demo.json"
DEMO_POOLS: tuple[str, ...] = ("closed", "open")


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
                "this folder holds a demo made with other settings (" +
                ", ".join(f"{k}: {old.get(k)!r} there, {settings[k]!r} now" for k in diff) +
                "); use another --out or delete the folder", path=path)
    else:
        write_json(path, settings)


def run_demo(args: argparse.Namespace) -> int:
    from baselines import BASELINES, NON_LLM_BASELINES
    from baselines.leaderboard import build_leaderboard, format_tables, write_leaderboard
    from baselines.runner import run_baseline
    from spaces_app.settings import Settings, demo_layout
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

    out: Path = args.out
    seed = getattr(args, "seed", SEED)
    per_cell = getattr(args, "per_cell", None) or KB_PER_CELL
    scale = getattr(args, "scale", 1.0)
    names = list(NON_LLM_BASELINES) if args.baselines == "all" else [n.strip() for n in args.baselines.split(",") if n.strip()]
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baselines {unknown}; expected some of {sorted(BASELINES)} or 'all'")
    out.mkdir(parents=True, exist_ok=True)
    check_settings(out, {"n": args.n, "scale": scale, "per_cell": per_cell, "seed": seed, "split": args.split})
    yelp, kb, corpus = out / "yelp", out / "kb", out / "corpus"
    release, runs = out / "release", out / "runs"
    layout = demo_layout(out)
    hydrated = layout["data_dir"]

    _stage("synthetic Yelp bundle", (yelp / SYNTHETIC_MANIFEST).exists(),
           lambda: write_synthetic_bundle(yelp, seed=seed, scale=scale))
    _stage("knowledge base", (kb / KB_META_FILE).exists(), lambda: build_kb(yelp, kb, per_cell=per_cell, seed=seed))
    print(format_table(kb_stats(kb)))
    _stage("dialogues", (corpus / CORPUS_META_FILE).exists(),
           lambda: generate_corpus(kb, corpus, n=args.n, seed=seed, workers=getattr(args, "workers", None)))
    _stage("release", (release / RELEASE_META_FILE).exists(), lambda: write_release(corpus, release))
    _stage("hydration", (hydrated / HYDRATION_META_FILE).exists(), lambda: hydrate_release(release, yelp, hydrated))
    print(format_stats(corpus_stats(hydrated)))

    knowledge = KnowledgeBase.load(kb_dir(hydrated))
    failed: dict[str, str] = {}
    for pool in DEMO_POOLS:
        for name in names:
            target = runs / pool / f"{name}.jsonl"
            meta = target.with_name(target.name + ".meta.json")
            done = meta.exists() and read_json(meta).get("complete", False)
            try:
                _stage(f"baseline {name} ({pool} pool)", done,
                       lambda name=name, target=target, pool=pool: run_baseline(
                           name, hydrated, target, split=args.split, pool=pool, kb=knowledge,
                           num_proc=getattr(args, "num_proc", 1)))
            except (ImportError, RuntimeError) as e:  # e.g. dense without its model package: the rest still run
                log.error("baseline %s (%s pool) failed: %s", name, pool, e)
                failed[f"{name} ({pool})"] = f"{type(e).__name__}: {e}"
    rows = build_leaderboard(hydrated, runs, split=args.split)
    paths = write_leaderboard(rows, layout["baselines_file"].parent)
    print(format_tables(rows))
    if failed:
        print("baselines that failed: " + "; ".join(f"{k}: {v}" for k, v in failed.items()))
    settings = Settings(data_dir=hydrated, results_dir=layout["results_dir"], runs_dir=layout["runs_dir"],
                        split=args.split, baselines_file=paths["json"])
    command = (f"trace-bench serve --data {hydrated} --results {settings.results_dir} --runs {settings.runs_dir} "
               f"--baselines {paths['json']}")
    if getattr(args, "serve", False):
        from spaces_app.cli import serve

        print(f"\nStarting the leaderboard app on http://{args.host}:{args.port} (Ctrl-C stops it; later: {command})")
        serve(settings, args.host, args.port)
    else:
        print(f"\nLeaderboard app: {command}")
        if out == Path("runs/demo"):
            print("(or simply `trace-bench serve`: it finds runs/demo by itself)")
    return 0 if not failed else 1
