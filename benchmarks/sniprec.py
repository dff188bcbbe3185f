"""SnipRec's costs: units extracted per second (rules and LLM), retrieval turns/s through `trace-bench run`,
and the memory of the index.

    .venv/bin/python benchmarks/sniprec.py --build /tmp/trace_builtin     # the built-in corpus (built once)
    .venv/bin/python benchmarks/sniprec.py --data DIR --llm smollm2 --llm-reviews 4
    .venv/bin/python benchmarks/sniprec.py --data DIR --skip-llm --pools closed,open
    .venv/bin/python benchmarks/sniprec.py --data DIR --skip-llm --skip-rules --subset 300 --encoder-threads 1

1. Rules extraction (`units.py`) over every review of the knowledge base: reviews/s, units/s.
2. LLM extraction (App. C.1 + name post-check) of the first `--llm-reviews` reviews with the `--llm` model
   (default: the packaged SmolLM2 in-process; `openai:URL#MODEL` for a server), fresh cache: reviews/s,
   snippets/s, requests, and the corpus-scale extrapolation (calls and hours for every review of the KB).
3. `run_baseline("sniprec")` (rules snippets, MiniLM) on the split (or `--subset N` of it) and pools: first
   (cold with a fresh cache: extraction and encoding included) and warm (everything cached), turns/s.
4. Index memory after the runs: distinct-text vectors, per-POI rows, cached candidate views, and the
   on-disk store and vector cache sizes.

Every figure is printed with the machine it ran on (a shared machine's load inflates wall times).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

# Run as a script, this folder comes first on sys.path and `baselines.py` here would shadow the package: the
# folder leaves sys.path and `_common` is loaded by its path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]


def _machine() -> str:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_bench_common", _HERE / "_common.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.machine()


def _size(path: Path) -> int:
    """Bytes of a folder's files, or of a file with its SQLite companions (-wal, -shm)."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())


def bench_rules(kb) -> None:
    from baselines.sniprec.store import RulesExtractor

    ids = sorted(kb.pois)
    for kind in ("rules", "sentence", "document"):
        t = time.perf_counter()
        out = RulesExtractor(kind).extract(kb, ids)
        s = time.perf_counter() - t
        units = sum(len(u) for u, _ in out.values())
        review_units = sum(sum(x.from_review for x in u) for u, _ in out.values())
        print(
            f"  {kind:<9} {len(kb.reviews):>7} reviews -> {review_units:>7} review units (+{units - review_units} "
            f"attribute), {s:6.1f} s: {len(kb.reviews) / s:8.0f} reviews/s, {review_units / s:8.0f} units/s"
        )


def bench_llm(kb, spec: str, n_reviews: int, cache: Path) -> None:
    from baselines.sniprec.llm_snippets import LLMExtractor
    from baselines.sniprec.prompts import PromptRunner
    from trace_llm import DecodingSettings, load_llm

    t = time.perf_counter()
    llm = load_llm(spec, DecodingSettings(), cache_path=cache / "llm.sqlite")
    load_s = time.perf_counter() - t
    picked, n = [], 0
    for pid in sorted(kb.pois):
        if n >= n_reviews:
            break
        picked.append(pid)
        n += len(kb.reviews_of(pid))
    # only the first n_reviews reviews: a knowledge base view with those
    from dataclasses import replace

    from trace_dataset.kb.store import KnowledgeBase

    reviews = [r for pid in picked for r in kb.reviews_of(pid)][:n_reviews]
    keep = {r.review_id for r in reviews}
    pois = [
        replace(kb.pois[pid], review_ids=tuple(r for r in kb.pois[pid].review_ids if r in keep))
        for pid in picked
    ]
    small = KnowledgeBase(pois, reviews, kb.meta, kb.root)
    extractor = LLMExtractor(PromptRunner(llm))
    t = time.perf_counter()
    out = extractor.extract(small, picked)
    s = time.perf_counter() - t
    stats = {
        k: sum(st.get(k, 0) for _, st in out.values())
        for k in ("reviews", "snippets", "failed_reviews", "name_checked", "name_dropped", "llm_calls")
    }
    usage = llm.usage
    print(
        f"  model {llm.describe()['model']} ({spec}), loaded in {load_s:.1f} s, default settings "
        f"(temperature {llm.settings.temperature}, max_new_tokens per prompt from prompts.json)"
    )
    print(
        f"  {stats['reviews']} reviews -> {stats['snippets']} snippets in {s:.1f} s: "
        f"{stats['reviews'] / s:.3f} reviews/s, {stats['snippets'] / s:.3f} snippets/s; failed reviews "
        f"{stats['failed_reviews']}, post-checked {stats['name_checked']}, dropped {stats['name_dropped']}"
    )
    print(
        f"  requests {usage['requests']} (JSON repairs {usage['json_repairs']}), prompt tokens "
        f"{usage['prompt_tokens']}, completion tokens {usage['completion_tokens']}"
    )
    per_review = s / max(1, stats["reviews"])
    calls = stats["llm_calls"] / max(1, stats["reviews"])
    total = len(kb.reviews)
    print(
        f"  corpus scale ({total} reviews): ~{total * calls:.0f} LLM calls (C.1 + post-check, before repairs), "
        f"~{total * per_review / 3600:.1f} h at this rate"
    )
    llm.close()


def bench_runs(
    data: Path, split: str, pools: list[str], cache: Path, subset: int | None, threads: int | None, tmp: Path
) -> Path:
    """Sections 3: the runs; returns the data directory they ran on (the subset's, with --subset)."""
    from trace_harness.protocols.teacher_forced.runner import run_baseline

    os.environ["TRACE_BENCH_CACHE"] = str(cache)
    params = {"snippets": "rules"} if threads is None else {"snippets": "rules", "encoder_threads": threads}
    ran_on = data
    for pool in pools:
        for label in ("first" if pool == pools[0] else "warm-store", "warm"):
            out = tmp / f"sniprec-{pool}-{label}.jsonl"
            t = time.perf_counter()
            meta = run_baseline(
                "sniprec",
                data,
                out,
                split=split,
                pool=pool,
                progress=False,
                overwrite=True,
                params=params,
                subset=subset,
                subset_dir=tmp / "subset" if subset else None,
            )
            s = time.perf_counter() - t
            ran_on = Path(meta["subset"]["data_dir"]) if subset else data
            usage = meta["summary"]["usage"]
            print(
                f"  {pool:<7} {label:<10} {meta['n_rows']:>6} turns {s:7.1f} s {meta['n_rows'] / s:8.2f} "
                f"turns/s  (POIs extracted {usage['units_extracted_pois']}, texts encoded "
                f"{usage['texts_encoded']}; model loading included)  load {_load()}",
                flush=True,
            )
    return ran_on


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def bench_memory(data: Path, split: str, pool: str, cache: Path, threads: int | None) -> None:
    from baselines import pipeline
    from trace_dataset.datadir import iter_dialogues, kb_dir
    from trace_dataset.kb.store import KnowledgeBase
    from trace_dataset.views import turn_rows
    from trace_harness.protocols.teacher_forced.runner import resolve_splits

    kb = KnowledgeBase.load(kb_dir(data))
    pipe = pipeline("sniprec", kb, snippets="rules", cache_dir=str(cache), encoder_threads=threads)
    rows = [r for d in iter_dialogues(data, resolve_splits(split)) for r in turn_rows(d, pool)]
    t = time.perf_counter()
    for _ in pipe(rows):
        pass
    s = time.perf_counter() - t
    print(
        f"  in-process pass over {len(rows)} turns (model loaded, caches warm): {s:.1f} s, "
        f"{len(rows) / s:.1f} turns/s, texts encoded {pipe.index.encoded}  load {_load()}"
    )
    mem = pipe.index.memory_bytes()
    mib = 1 << 20
    print(
        f"  {mem['units']} units of {len(pipe.index._poi)} POIs, {mem['distinct_texts']} distinct texts: vectors "
        f"{mem['vectors'] / mib:.1f} MiB ({mem['vectors_allocated'] / mib:.1f} allocated), per-POI rows "
        f"{mem['poi_rows'] / mib:.1f} MiB, cached candidate views {mem['candidate_views'] / mib:.1f} MiB"
    )
    print(
        f"  on disk: unit store {_size(pipe.store.folder) / mib:.1f} MiB, vector cache "
        f"{_size(cache / 'sniprec' / 'vectors.sqlite') / mib:.1f} MiB"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", type=Path, help="an existing Trace data directory")
    src.add_argument(
        "--build", type=Path, metavar="DIR", help="build (or reuse) the built-in corpus under DIR"
    )
    ap.add_argument("--split", default="test")
    ap.add_argument("--pools", default="closed", help="comma-separated pools for the retrieval runs")
    ap.add_argument("--llm", default="smollm2", help="LLM spec for the LLM extractor (default: smollm2)")
    ap.add_argument("--llm-reviews", type=int, default=4, help="reviews for the LLM extractor (default 4)")
    ap.add_argument("--skip-llm", action="store_true")
    ap.add_argument("--cache", type=Path, default=None, help="cache folder (default: a fresh temporary one)")
    ap.add_argument(
        "--subset",
        type=int,
        default=None,
        help="sections 3-4 on the seeded N-dialogue subset of the split (default: the whole split)",
    )
    ap.add_argument(
        "--encoder-threads",
        type=int,
        default=None,
        help="torch threads while encoding (default: torch's; 1 is faster on a busy machine)",
    )
    ap.add_argument("--skip-rules", action="store_true", help="skip section 1")
    args = ap.parse_args(argv)

    from trace_dataset.datadir import kb_dir
    from trace_dataset.kb.store import KnowledgeBase

    data = _build(args.build) if args.build else args.data
    kb = KnowledgeBase.load(kb_dir(data))
    print(f"machine: {_machine()}")
    print(f"knowledge base: {len(kb.pois)} POIs, {len(kb.reviews)} reviews ({data})")
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache or Path(tmp)
        if not args.skip_rules:
            print("1. rules extraction (the whole knowledge base)")
            bench_rules(kb)
        if not args.skip_llm:
            print(f"2. LLM extraction ({args.llm_reviews} reviews)")
            bench_llm(kb, args.llm, args.llm_reviews, cache)
        pools = args.pools.split(",")
        which = f"split {args.split}" + (f", seeded {args.subset}-dialogue subset" if args.subset else "")
        print(
            f"3. retrieval: trace-bench run sniprec (rules, all-MiniLM-L6-v2), {which}, encoder threads "
            f"{args.encoder_threads or 'torch default'}, cache {'given' if args.cache else 'fresh'}"
        )
        ran_on = bench_runs(data, args.split, pools, cache, args.subset, args.encoder_threads, Path(tmp))
        print(f"4. index memory (one process over {which}, pool {pools[-1]})")
        bench_memory(ran_on, args.split, pools[-1], cache, args.encoder_threads)
    return 0


def _build(root: Path) -> Path:
    """The built-in corpus (synthetic bundle -> KB -> 10,000 template dialogues), reused when present."""
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb
    from trace_dataset.yelp.synth import write_synthetic_bundle

    corpus = root / "corpus"
    if not (corpus / "corpus.json").exists():
        build_kb(write_synthetic_bundle(root / "yelp"), root / "kb")
        generate_corpus(root / "kb", corpus, n=10_000, progress=False)
    return corpus


if __name__ == "__main__":
    sys.exit(main())
