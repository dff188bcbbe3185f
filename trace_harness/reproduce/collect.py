"""Which LLM requests the jobs still need, found by running them with collecting LLMs that never send.

Each job is cut into units (a batch of turn rows as the runner batches them, a chunk of travelers, a chunk of
CoRE logs, one judge pass over a run) and each unit runs with `trace_llm.collecting.CollectingLLM`s standing in for
the role models: answers come from the response cache, every other request is recorded once in the ledger and
the unit stops (`AnswersPending`). What a unit recorded on its first pass is round 1: built from the data and
cached answers only, so exact.

- `mode="dry"` (the dry run): round r's requests get synthetic answers and the unit runs again; what it asks
  next is round r + 1, an estimate (its prompts are built from synthetic answers), until the unit finishes.
- `mode="export"` (the batch path): a unit stops at its first pending round; that round goes to the batch
  files. Jobs whose inputs do not exist yet (CoRE and the judge read a closed run's predictions) wait.

A system that carries state across dialogues (Memory-Aug.) cannot rerun a unit without replaying its whole
stream, so its units run once with synthetic answers handed out at once. That is exact for Memory-Aug., whose
prompts read the travelers' turns and never the model's answers (only the layer's JSON repairs depend on
answers, and synthetic answers are valid JSON); a batch export of it exports only requests built from real
answers for the same reason.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from baselines import LLM_SYSTEMS
from baselines.base import batched
from trace_dataset.constants import resolve_splits
from trace_dataset.datadir import iter_dialogues
from trace_dataset.io import read_json, write_jsonl
from trace_harness.protocols.teacher_forced.resume import dialogue_chunks, system_turn_ids
from trace_harness.protocols.teacher_forced.runner import DEFAULT_CHUNK_DIALOGUES, meta_path
from trace_harness.reproduce.jobs import Context, Job, closed_run, job_done, run_complete
from trace_llm.cache import Completion, ResponseCache, default_cache_path
from trace_llm.collecting import (
    SYNTHETIC_TEXT,
    CollectingLLM,
    OverlayCache,
    RequestLedger,
    hold_synthetic,
    synthetic_reply,
)
from trace_llm.errors import AnswersPending
from trace_llm.structured import PROMPT

log = logging.getLogger(__name__)

MAX_ROUNDS = 64  # a unit still asking after this many rounds of synthetic answers is a bug, not a workload
# CoRE's factor replies must hold <rating>N</rating> (trace_metrics.core.factors): the dry run's synthetic
# factor reply is a valid rating, so rating retries are not counted (JSON replies get schema-valid values).
CORE_SYNTHETIC_TEXT = "<rating>2</rating>"


@dataclass
class JobTally:
    """What collecting one job found."""

    job: Job
    status: str = "collected"  # collected | complete (nothing left to run) | waits (inputs missing) | no_llm
    standin: bool = (
        False  # prompts built from the corpus's reference turns (the system's predictions are missing)
    )
    notes: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # the requests it recorded, in order


class _Silent:
    """A progress sink that hides the layer's per-call bars while collecting."""

    def served_from_cache(self, n: int) -> None:
        return None

    def answered(self, completion: Completion) -> None:
        return None


class _AnswerNow(CollectingLLM):
    """Records like CollectingLLM, then answers at once with synthetic replies (a system with cross-dialogue
    state: see the module docstring)."""

    def _collect(self, conversations, settings, constraint, dialect) -> None:
        """Record (as CollectingLLM), then answer at once through on_done: see _complete / _complete_structured."""
        try:
            super()._collect(conversations, settings, constraint, dialect)
        except AnswersPending:
            pass

    def _complete(self, conversations, settings, on_done) -> None:
        self._collect(conversations, settings, None, PROMPT)
        self._answer(conversations, on_done)

    def _complete_structured(self, conversations, settings, on_done, constraint, dialect) -> None:
        self._collect(conversations, settings, constraint, dialect)
        self._answer(conversations, on_done)

    @staticmethod
    def _answer(conversations, on_done) -> None:
        for i, messages in enumerate(conversations):
            on_done(i, Completion(synthetic_reply(messages), 0, 0, "stop"))


class Collector:
    """Collecting LLMs for every role, their ledger and overlay, and the unit loop (module docstring)."""

    def __init__(self, ctx: Context, mode: str):
        if mode not in ("dry", "export"):
            raise ValueError(f"unknown collect mode {mode!r}")
        self.ctx, self.mode = ctx, mode
        self.ledger = RequestLedger()
        path = ctx.config.cache if ctx.config.cache is not None else default_cache_path()
        self.base_cache = ResponseCache(path) if Path(path).exists() else None
        self.overlay = OverlayCache(self.base_cache)
        self._llms: dict[tuple[str, bool], CollectingLLM] = {}
        self.synthetic_text = SYNTHETIC_TEXT

    def llm(self, role: str, answer_now: bool = False) -> CollectingLLM:
        if (role, answer_now) not in self._llms:
            cls = _AnswerNow if answer_now else CollectingLLM
            llm = cls(self.ctx.llm(role), self.ledger, self.overlay, role)
            llm.progress = _Silent()
            self._llms[(role, answer_now)] = llm
        return self._llms[(role, answer_now)]

    def unit(self, fn: Callable[[], Any]) -> None:
        """Run one unit of work until it finishes (dry) or stops at its first pending round (export)."""
        for r in range(1, MAX_ROUNDS + 1):
            self.ledger.round, self.overlay.visible_below = r, r
            start = len(self.ledger)
            try:
                fn()
                return
            except AnswersPending:
                if self.mode == "export":
                    return
                hold_synthetic(self.ledger, self.overlay, self.ledger.since(start), self.synthetic_text)
        raise RuntimeError(
            f"a unit of {self.ledger.label} still asks after {MAX_ROUNDS} rounds of synthetic answers"
        )

    def close(self) -> None:
        if self.base_cache is not None:
            self.base_cache.close()

    # -- jobs ---------------------------------------------------------------------------------------------
    def collect(self, job: Job) -> JobTally:
        tally = JobTally(job)
        if not job.roles:
            tally.status = "no_llm"
            return tally
        self.synthetic_text = CORE_SYNTHETIC_TEXT if job.kind == "core" else SYNTHETIC_TEXT
        if (
            self.mode == "dry"
            and job.kind in ("core", "judge")
            and not run_complete(closed_run(self.ctx.config, job.system))
        ):
            return self._standin(job, tally)
        start = len(self.ledger)
        self.ledger.label = job.label
        getattr(self, f"_{job.kind}")(job, tally)
        tally.keys = [r.key for r in self.ledger.since(start)]
        return tally

    def _standin(self, job: Job, tally: JobTally) -> JobTally:
        """A job on stand-in predictions counts apart (its own ledger and overlay): every system's stand-in is the
        same reference text, and one system's requests must not be taken for another's."""
        shared = (self.ledger, self.overlay, self._llms)
        self.ledger, self.overlay, self._llms = RequestLedger(), OverlayCache(self.base_cache), {}
        try:
            self.ledger.label = job.label
            getattr(self, f"_{job.kind}")(job, tally)
            mine = self.ledger.order
        finally:
            self.ledger, self.overlay, self._llms = shared
        for r in mine:
            r.key = f"{job.label}|{r.key}"  # its own entry: never merged with another job's identical text
            self.ledger.add(r)
        tally.keys = [r.key for r in mine]
        return tally

    def _params(self, system: str, answer_now: bool = False) -> dict[str, Any]:
        params = dict(self.ctx.config.system_params.get(system, {}))
        if system in LLM_SYSTEMS:
            params["llm"] = self.llm("systems", answer_now)
        return params

    def _run(self, job: Job, tally: JobTally) -> None:
        from baselines import pipeline
        from trace_dataset.views import turn_rows

        if job_done(job):
            tally.status = "complete"
            return
        runset = self.ctx.runset(job.pool)
        root = self.ctx.root(runset)
        dialogues = list(iter_dialogues(root, resolve_splits(runset.split)))
        counts = [len(system_turn_ids(d)) for d in dialogues]
        isolated = _isolated(job.system)
        pipe = pipeline(
            job.system,
            kb=self.ctx.kb,
            batch_size=self.ctx.config.batch_size,
            **self._params(job.system, answer_now=not isolated),
        )
        done = 0
        if isolated and meta_path(job.out).exists():  # rows the runner will keep (its checkpoint)
            done = int(read_json(meta_path(job.out)).get("rows_written") or 0)
        for chunk, skip, _ in dialogue_chunks(dialogues, counts, done, DEFAULT_CHUNK_DIALOGUES):
            rows = [r for d in chunk for r in turn_rows(d, job.pool)][skip:]
            for batch in batched(rows, pipe.batch_size):
                self.unit(partial(_answers, pipe, batch))

    def _interactive(self, job: Job, tally: JobTally) -> None:
        from baselines import COUNTERFACTUAL_BASELINES
        from trace_harness.protocols.interactive.loop import GENERATOR, converse
        from trace_harness.protocols.interactive.run import load_data_kb, travelers
        from trace_harness.protocols.interactive.systems import load_system

        cfg = self.ctx.config.interactive
        if job_done(job):
            tally.status = "complete"
            return
        kb = load_data_kb(self.ctx.config.data)
        sim_llm = self.llm("simulator") if cfg.simulator == "llm" else None
        _, goals, sim = travelers(
            self.ctx.config.data,
            kb,
            split=cfg.split,
            n=cfg.n,
            simulator=cfg.simulator,
            llm=sim_llm,
            seed=cfg.seed,
        )
        done = _interactive_done(job.out)
        goals = [g for g in goals if g.dialogue_id not in done]
        isolated = _isolated(job.system)
        system = load_system(job.system, kb, params=self._params(job.system, answer_now=not isolated))
        size = cfg.batch_dialogues if isolated else 1
        meta = {"generator": GENERATOR}
        # with the LLM traveller the simulator report's bad systems talk to the same travellers (execute.py)
        bad = [load_system(n, kb) for n in COUNTERFACTUAL_BASELINES] if cfg.simulator == "llm" else []
        for who in [system, *bad]:
            for start in range(0, len(goals), size if who is system else cfg.batch_dialogues):
                chunk = goals[start : start + (size if who is system else cfg.batch_dialogues)]
                self.unit(
                    partial(
                        converse,
                        who,
                        sim,
                        chunk,
                        pool=job.pool,
                        max_turns=cfg.turns,
                        seed=cfg.seed,
                        metadata=meta,
                    )
                )

    def _core(self, job: Job, tally: JobTally) -> None:
        from trace_harness.reproduce.execute import core_options, core_predictions
        from trace_metrics.core.conversation import safe_file_stem
        from trace_metrics.core.prompts import load_prompts
        from trace_metrics.core.runner import DIALOGUES_DIR, collect_logs
        from trace_metrics.core.scoring import score_logs

        if job_done(job):
            tally.status = "complete"
            return
        with tempfile.TemporaryDirectory(prefix="trace-reproduce-") as tmp:
            source = self._predictions(job, tally, Path(tmp))
            if source is None:
                return
            root, predictions = source
            path = core_predictions(self.ctx, job, root, predictions, Path(tmp))
            cfg = self.ctx.config.core
            logs, _ = collect_logs(path, root, split=job.split, system=job.system, limit=cfg.limit)
            scored = job.out / DIALOGUES_DIR
            logs = [c for c in logs if not (scored / f"{safe_file_stem(c.log_id)}.json").exists()]
            prompts = load_prompts(None)
            llm = self.llm("core")
            options = core_options(self.ctx)
            for i in range(0, len(logs), cfg.chunk):
                self.unit(partial(score_logs, llm, logs[i : i + cfg.chunk], prompts, **options))

    def _judge(self, job: Job, tally: JobTally) -> None:
        from trace_harness.reproduce.execute import scoring_options
        from trace_metrics.lib.suite import evaluate_run

        with tempfile.TemporaryDirectory(prefix="trace-reproduce-") as tmp:
            source = self._predictions(job, tally, Path(tmp))
            if source is None:
                return
            root, predictions = source
            split = self.ctx.config.closed.split
            llm = self.llm("judge")
            self.unit(
                lambda: evaluate_run(
                    root, predictions, split=split, pool="closed", judge=llm, **scoring_options(self.ctx)
                )
            )

    def _predictions(self, job: Job, tally: JobTally, tmp: Path) -> tuple[Path, Path] | None:
        """(data directory, predictions file) of the system's closed run; in a dry run, while the run is not
        complete, the corpus's reference turns stand in for its predictions (tally.standin)."""
        runset = self.ctx.config.closed
        path = closed_run(self.ctx.config, job.system)
        if run_complete(path):
            return self.ctx.root(runset), path
        if self.mode == "export":
            tally.status = "waits"
            tally.notes.append(f"waits for the closed-pool run of {job.system}")
            return None
        from trace_metrics.lib.toy import reference_predictions

        root = self.ctx.root(runset)
        dialogues = list(iter_dialogues(root, resolve_splits(runset.split)))
        standin = tmp / f"{job.system}.standin.jsonl"
        write_jsonl(standin, reference_predictions(dialogues, "closed"))
        tally.standin = True
        tally.notes.append(
            f"{job.system}'s closed run is not complete: prompts built from the corpus's reference "
            "turns in place of its responses"
        )
        return root, standin


def _isolated(system: str) -> bool:
    from baselines import BASELINES

    return bool(BASELINES[system].session_isolated)


def _interactive_done(out: Path) -> set[str]:
    """Dialogue ids an interrupted `interact` run has finished (its progress file), read without changing it."""
    import json

    from trace_harness.protocols.interactive.output import PROGRESS_FILE

    path = out / PROGRESS_FILE
    if not path.exists():
        return set()
    done = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            done.add(json.loads(line)["record"]["dialogue_id"])
        except (json.JSONDecodeError, KeyError, TypeError):
            continue  # a torn last line: the run itself drops it
    return done


def _answers(pipe: Any, batch: list[Any]) -> list[Any]:
    """A pipeline's answers to one batch, drawn to the end (a pipeline may answer lazily)."""
    return list(pipe(batch))
