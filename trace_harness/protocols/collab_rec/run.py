"""`trace-bench collab-rec run`: one strategy over Collab-REC's own benchmark, into an output folder.

    OUT/run.json             what ran: strategy, moderator config, data files' SHA-256, LLM, prompt files' SHA-256
    OUT/queries/<id>.json    one file per finished query: its systems (final offers) and every round's offers
    OUT/offers.jsonl         one line per query: each system's final offer
    OUT/metrics.json         the paper's metrics per system, agent behaviour per round, early stopping, LLM usage

Resumable: a rerun with the same settings skips the queries whose file exists, and the LLM response cache
answers every request made before; a rerun with other settings refuses to mix (use `overwrite`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from baselines.collab_rec.agents import AgentCaller, Task, load_settings, prompt_files
from baselines.collab_rec.catalogue import CityKB, Query, city_matcher, load_city_kb, load_queries
from baselines.collab_rec.moderator import ModeratorConfig
from baselines.collab_rec.negotiation import (
    LLM_STRATEGIES,
    STRATEGIES,
    run_mami,
    run_randrec,
    run_sasi,
    run_toppop,
)
from trace_dataset.constants import SEED
from trace_dataset.io import TraceDataError, read_json, sha256_file, write_json, write_jsonl
from trace_harness.protocols.base import Protocol, RunConfig
from trace_harness.protocols.collab_rec.metrics import compute_metrics
from trace_harness.protocols.teacher_forced.runner import llm_identity
from trace_llm import LLM

log = logging.getLogger(__name__)

RUN_FILE, METRICS_FILE, OFFERS_FILE, QUERIES_DIR = "run.json", "metrics.json", "offers.jsonl", "queries"
# queries negotiated in lockstep (round t of each is one batch, for a server's concurrency); a model that answers
# one request at a time (llama.cpp in process) takes them one by one instead, so that an agent's next-round
# prompt follows its last one and llama.cpp's prompt cache reads only what is new (the same replies)
BATCH_QUERIES = 16
POPULARITY_ORDER = {"high": 0, "medium": 1, "low": 2}
IDENTITY_KEYS = ("strategy", "config", "kb", "queries", "llm", "prompt_files", "seed")


def city_tasks(kb: CityKB, queries: Sequence[Query], config: ModeratorConfig) -> list[Task]:
    """Collab-REC tasks over the city catalogue (filters checked by `catalogue.city_matcher`)."""
    always = config.code("filters_always_match")
    defaults = load_settings().default_role_filters
    return [
        Task(
            q.id,
            q.text,
            q.filters,
            tuple(kb.names),
            city_matcher(kb, q.filters, always),
            default_role_filters=defaults,
        )
        for q in queries
    ]


def toppop_ranking(kb: CityKB) -> list[str]:
    """Most popular first: the KB's popularity label (High, Medium, Low), then more points of interest, then name.

    The authors rank by a `weighted_pop_score` file that was not released; the label is their own
    visitor-count categorisation and the POI count its stated correlate (App. D.2.2).
    """
    return sorted(
        kb.names,
        key=lambda c: (POPULARITY_ORDER.get(kb.cities[c].popularity.lower(), 3), -kb.cities[c].n_pois, c),
    )


SAFE_NAME_CHARS = 80  # of a query id kept in its file name (the rest is told apart by the hash)
# and in bytes, so that the file name and its temporary (".NAME.<pid>.<8 random>.tmp", 22 bytes more: the atomic
# write) fit the 255 bytes a file system allows (an id of 80 four-byte characters is 320 bytes): the plain name
# plus ".json", or the cut name plus ".<12 hex digits>.json", at most 233 bytes
PLAIN_NAME_BYTES, CUT_NAME_BYTES = 228, 215


def _safe_name(query_id: str) -> str:
    """The file of a query id under queries/: the id itself when it is a plain file name, else its plain part
    plus the first 12 hex digits of its SHA-256, so ids that differ keep different files (`x/y`, `x_y`)."""
    plain = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in query_id)
    fits = len(plain) <= SAFE_NAME_CHARS and len(plain.encode("utf-8")) <= PLAIN_NAME_BYTES
    if plain == query_id and fits and not plain.startswith("."):
        return plain + ".json"
    digest = hashlib.sha256(query_id.encode("utf-8")).hexdigest()[:12]
    cut = plain[:SAFE_NAME_CHARS].encode("utf-8")[:CUT_NAME_BYTES].decode("utf-8", "ignore")
    return f"{cut.lstrip('.')}.{digest}.json"


def _query_files(tasks: Sequence[Task], queries_path: str | os.PathLike) -> dict[str, str]:
    """query id -> file name; TraceDataError if two ids would share a file (here or on a file system that
    ignores case)."""
    names: dict[str, str] = {}
    seen: dict[str, str] = {}
    for task in tasks:
        name = names[task.id] = _safe_name(task.id)
        other = seen.setdefault(name.casefold(), task.id)
        if other != task.id:
            raise TraceDataError(
                f"query ids {other!r} and {task.id!r} would share the file {QUERIES_DIR}/{name}; "
                "make the config_id values differ by more than case",
                path=queries_path,
            )
    return names


class CollabRecRun(Protocol):
    """One strategy over the queries of Collab-REC's city benchmark (module docstring): the run config's data is
    the city knowledge base (its split and pool do not apply: the queries are one set), `limit` keeps the first
    queries, `seed` is RandRec's."""

    name = "collab_rec"
    unit = "query"

    def __init__(
        self,
        strategy: str,
        config: RunConfig,
        queries_path: str | os.PathLike,
        out: str | os.PathLike,
        *,
        llm: LLM | None = None,
        moderator: ModeratorConfig | None = None,
        batch_queries: int | None = None,
        overwrite: bool = False,
        max_repairs: int | None = None,
        catalogue_enum: bool = True,
        progress: bool = True,
    ):
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r}; expected one of {STRATEGIES}")
        if strategy in LLM_STRATEGIES and llm is None:
            raise ValueError(f"strategy {strategy!r} needs an LLM (--llm SPEC)")
        if batch_queries is None:  # a model answering one request at a time gains nothing from lockstep
            batch_queries = BATCH_QUERIES if llm is None or llm.answers_concurrently else 1
        if batch_queries < 1:
            raise ValueError(f"batch_queries must be >= 1, got {batch_queries}")
        super().__init__(config, Path(out), overwrite=overwrite, progress=progress)
        self.strategy, self.queries_path, self.llm = strategy, queries_path, llm
        self.moderator = moderator or ModeratorConfig()
        self.batch_queries, self.max_repairs, self.catalogue_enum = batch_queries, max_repairs, catalogue_enum
        self.uses_llm = strategy in LLM_STRATEGIES

    def start(self) -> None:
        """The catalogue and the queries, the run's identity checked against the folder, the queries done."""
        kb_path, queries_path = self.config.data, self.queries_path
        self.kb = kb = load_city_kb(kb_path)
        queries = self.config.units(load_queries(queries_path))
        uses_llm = self.uses_llm
        self.identity = identity = {
            "strategy": self.strategy,
            "config": self.moderator.to_dict(),
            "seed": self.config.seed,
            "kb": {"path": str(kb_path), "sha256": kb.sha256},
            "queries": {"path": str(queries_path), "sha256": sha256_file(queries_path)},
            "llm": _llm_identity(self.llm) if uses_llm and self.llm is not None else None,
            "prompt_files": prompt_files() if uses_llm else None,
        }
        if uses_llm and not self.catalogue_enum:
            identity["catalogue_enum"] = (
                False  # the paper's open list (recorded only when asked: older runs resume)
            )
        _prepare(self.out, identity, self.overwrite)
        self.tasks = tasks = city_tasks(kb, queries, self.moderator)
        self.files = _query_files(tasks, queries_path)
        self.todo = [t for t in tasks if not (self.out / QUERIES_DIR / self.files[t.id]).exists()]
        if len(self.todo) < len(tasks):
            log.info(
                "%s: resuming, %d of %d queries already done",
                self.out,
                len(tasks) - len(self.todo),
                len(tasks),
            )
        llm = self.llm if uses_llm else None  # the constructor refused an LLM strategy without one
        self.caller = (
            AgentCaller(llm, self.moderator, self.max_repairs, catalogue_enum=self.catalogue_enum)
            if llm is not None
            else None
        )
        self.total, self.done, self.label = (
            len(tasks),
            len(tasks) - len(self.todo),
            f"collab-rec {self.strategy}",
        )

    def steps(self) -> Iterator[int]:
        """The queries left, `batch_queries` negotiated together; each query's file written as it finishes."""
        qdir, config = self.out / QUERIES_DIR, self.moderator
        for start in range(0, len(self.todo), self.batch_queries):
            chunk = self.todo[start : start + self.batch_queries]
            if self.strategy == "randrec":
                results = run_randrec(chunk, config.k, self.config.seed)
            elif self.strategy == "toppop":
                results = run_toppop(chunk, toppop_ranking(self.kb), config.k)
            elif self.strategy == "sasi":
                assert self.caller is not None  # sasi and mami use the LLM
                results = run_sasi(chunk, self.caller)
            else:
                assert self.caller is not None
                results = run_mami(chunk, self.caller.propose, config, self.strategy)
            for task, result in zip(chunk, results, strict=True):
                write_json(
                    qdir / self.files[task.id],
                    {
                        "query": {"id": task.id, "text": task.text, "filters": task.filters},
                        **result.to_dict(),
                    },
                )
            yield len(chunk)

    def finish(self) -> dict[str, Any]:
        """metrics.json (and offers.jsonl) over every query's file; metrics.json's content."""
        qdir, out = self.out / QUERIES_DIR, self.out
        records = [_query_record(qdir / self.files[t.id], t.id) for t in self.tasks]
        metrics = compute_metrics(records, self.kb.names, self.moderator)
        metrics["strategy"] = self.strategy
        if self.caller is not None and self.llm is not None:
            metrics["llm"] = {
                "model": self.llm.describe(),
                "usage_this_process": self.llm.usage,
                "prompt_files": self.identity["prompt_files"],
                "calls_this_process": self.caller.calls,
                "failures_this_process": self.caller.failures,
            }
        write_jsonl(
            out / OFFERS_FILE,
            [
                {"query_id": r["query_id"], **{name: s["offer"] for name, s in r["systems"].items()}}
                for r in records
            ],
        )
        write_json(out / METRICS_FILE, metrics)
        return metrics


def run_benchmark(
    strategy: str,
    kb_path: str | os.PathLike,
    queries_path: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    llm: LLM | None = None,
    config: ModeratorConfig | None = None,
    limit: int | None = None,
    batch_queries: int | None = None,
    overwrite: bool = False,
    seed: int = SEED,
    max_repairs: int | None = None,
    catalogue_enum: bool = True,
    progress: bool = True,
) -> dict[str, Any]:
    """Run `strategy` on the queries, write OUT (module docstring) and return metrics.json's content."""
    run = CollabRecRun(
        strategy,
        RunConfig(Path(kb_path), limit=limit, seed=seed),
        queries_path,
        out_dir,
        llm=llm,
        moderator=config,
        batch_queries=batch_queries,
        overwrite=overwrite,
        max_repairs=max_repairs,
        catalogue_enum=catalogue_enum,
        progress=progress,
    )
    metrics: dict[str, Any] = run.run()
    return metrics


def _query_record(path: Path, query_id: str) -> dict[str, Any]:
    """A finished query's file; TraceDataError unless it is this query's (a file from another run, or edited)."""
    record = read_json(path)
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("query"), dict)
        or record["query"].get("id") != query_id
    ):
        raise TraceDataError(
            f"holds no result of query {query_id!r}; delete it (it is recomputed) or rerun with --overwrite",
            path=path,
        )
    return record


def _llm_identity(llm: LLM) -> dict[str, Any]:
    """The model and decoding (not the spec: a local server's URL changes between runs, its answers do not; nor
    the transport settings, as for `trace-bench run`)."""
    return llm_identity(llm.describe())


def _prepare(out: Path, identity: dict[str, Any], overwrite: bool) -> None:
    run_file = out / RUN_FILE
    if overwrite and out.exists():
        for name in (RUN_FILE, METRICS_FILE, OFFERS_FILE):
            (out / name).unlink(missing_ok=True)
        shutil.rmtree(out / QUERIES_DIR, ignore_errors=True)
    if run_file.exists():
        old = read_json(run_file)
        if not isinstance(old, dict):
            raise TraceDataError(
                f"holds a JSON {type(old).__name__}, not the object a run writes; use another --out "
                "or rerun with --overwrite",
                path=run_file,
            )
        diff = [k for k in IDENTITY_KEYS if old.get(k) != identity.get(k)]
        if diff:
            raise TraceDataError(
                f"this folder holds a run with other settings (differing: {', '.join(diff)}); "
                "use another --out or rerun with --overwrite",
                path=out,
            )
    elif out.exists() and (out / QUERIES_DIR).exists():
        raise TraceDataError(
            f"{QUERIES_DIR}/ exists without {RUN_FILE}; use another --out or --overwrite", path=out
        )
    write_json(run_file, identity)
