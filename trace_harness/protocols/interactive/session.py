"""The one set-up of the interactive protocols (`trace`: run.py, `sniprec`: sniprec.py): the system under test
(a registered pipeline, an HTTP or chat endpoint, or a `System` given as is), the run's identity and metadata,
the progress store that makes it resumable, chunks of dialogues in lockstep, and the final files and
metrics.json. A protocol implements what differs: how its units are seeded and its simulator made
(`prepare`), the fields its identity, metadata and metrics' run record add, a unit's id, and one chunk's
conversations (`converse`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from trace_bench.errors import UsageError
from trace_dataset import __version__ as TRACE_VERSION
from trace_dataset.io import write_json
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.shards import SHARD_KEY
from trace_harness.protocols.base import Protocol, RunConfig
from trace_harness.protocols.interactive.loop import GENERATOR
from trace_harness.protocols.interactive.output import METRICS_FILE, Progress, write_outputs
from trace_harness.protocols.interactive.reply import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_TIMEOUT_S,
    System,
)
from trace_harness.protocols.interactive.report import build_metrics
from trace_harness.protocols.interactive.simulator.party import SimulatedUser
from trace_harness.protocols.interactive.systems import load_system
from trace_harness.protocols.teacher_forced.runner import llm_identity
from trace_llm import LLM

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReplyLimits:
    """What an external system runs under (reply.py): a turn's deadline, requests in flight, a reply's size."""

    timeout: float = DEFAULT_TIMEOUT_S
    concurrency: int = DEFAULT_CONCURRENCY
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES


def simulator_identity(sim: SimulatedUser) -> dict[str, Any]:
    d = sim.describe()
    keep: dict[str, Any] = {k: d[k] for k in ("simulator", "version", "seed", "topics_sha256") if k in d}
    if "prompt" in d:
        keep["prompt"] = d["prompt"]
        keep["llm"] = {k: d["llm"].get(k) for k in ("spec", "model", "settings")}
    return keep


def system_parameters(desc: Mapping[str, Any]) -> dict[str, Any]:
    """A system's parameters as its run's identity holds them: an LLM's without where the model runs and how
    its requests travel (a run resumed with another --llm-timeout or --llm-prompt-cache appends)."""
    parameters = dict(desc.get("parameters", {}))
    if isinstance(parameters.get("llm"), dict):
        parameters["llm"] = llm_identity(parameters["llm"])
    return parameters


def system_label(desc: Mapping[str, Any]) -> str:
    """The system's name, its LLM's model in parentheses, its pipeline's `variant` in brackets ("dense [bf16]")."""
    llm = desc.get("llm") or (desc.get("parameters") or {}).get("llm")
    model = llm.get("model") if isinstance(llm, Mapping) else None
    label = str(desc.get("system", "?"))
    label = f"{label} ({model})" if model else label
    variant = desc.get("variant")
    return f"{label} [{variant}]" if isinstance(variant, str) and variant else label


class InteractiveRun(Protocol):
    """A simulated user talks to a system over the run's units, chunk by chunk (module docstring)."""

    unit = "dlg"
    bar_prefix: ClassVar[str]  # the progress bar's name before the system's
    sim: SimulatedUser  # the simulated user (prepare makes it)

    def __init__(
        self,
        system: str | System,
        config: RunConfig,
        out: str | Path,
        *,
        turns: int,
        simulator: str = "rules",
        llm: LLM | None = None,
        params: Mapping[str, Any] | None = None,
        limits: ReplyLimits = ReplyLimits(),
        batch_dialogues: int = 64,
        overwrite: bool = False,
        progress: bool = True,
        n_boot: int = 10_000,
    ):
        super().__init__(config, Path(out), overwrite=overwrite, progress=progress)
        self.system_spec, self.turns, self.simulator, self.llm = system, turns, simulator, llm
        self.params, self.limits = dict(params or {}), limits
        self.batch_dialogues, self.n_boot = batch_dialogues, n_boot
        self.units: Sequence[Any] = ()
        self.system: System | None = None
        self.shard: dict[str, Any] | None = None  # the shard's record (RunConfig.select), set by prepare

    # -- what a protocol implements -------------------------------------------------------------------
    def prepare(self) -> KnowledgeBase:
        """Load what the run reads, seed its units (`self.units`) and make its simulator (`self.sim`);
        return the knowledge base the system ranks from."""
        raise NotImplementedError

    def identity_fields(self) -> dict[str, Any]:
        """The identity's fields after protocol, system, parameters, simulator and split."""
        raise NotImplementedError

    def meta_fields(self) -> dict[str, Any]:
        """The metadata's fields after identity, system, label, protocol, simulator and generator."""
        raise NotImplementedError

    def run_fields(self) -> dict[str, Any]:
        """metrics.json's run record after system, label, simulator and family."""
        raise NotImplementedError

    def generator_label(self) -> str:
        """How the dialogue records' metadata names the run's generator."""
        raise NotImplementedError

    def unit_id(self, unit: Any) -> str:
        raise NotImplementedError

    def converse(self, chunk: Sequence[Any], system: System) -> list[dict[str, Any]]:
        """One chunk of conversations, as the progress store keeps them (record, predictions, traveler)."""
        raise NotImplementedError

    def chunk_size(self, system: System) -> int:
        """Dialogues in lockstep: `batch_dialogues`, one for a system with memory across dialogues."""
        return self.batch_dialogues if system.session_isolated else 1

    def poi_names(self) -> dict[str, str]:
        """Names of the candidates the logs mention."""
        raise NotImplementedError

    # -- the template's hooks --------------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        try:
            metrics: dict[str, Any] = super().run()
        finally:
            if self.system is not None and not isinstance(self.system_spec, System):
                self.system.close()  # the run loaded it: the run closes it
        return metrics

    def start(self) -> None:
        self.kb = kb = self.prepare()
        spec, limits = self.system_spec, self.limits
        self.system = system = (
            spec
            if isinstance(spec, System)
            else load_system(
                spec,
                kb,
                params=self.params,
                timeout=limits.timeout,
                concurrency=limits.concurrency,
                max_reply_bytes=limits.max_reply_bytes,
            )
        )
        self.desc = desc = system.describe()
        sim, config = self.sim, self.config
        self._check_shard(system)
        identity = {
            "protocol": self.name,
            "system": desc.get("system"),
            "system_parameters": system_parameters(desc),
            "params": self.params,
            "simulator": simulator_identity(sim),
            "split": config.split,
            **self.identity_fields(),
        }
        if self.shard is not None:
            identity[SHARD_KEY] = str(config.shard)
        self.store = Progress(self.out, identity, overwrite=self.overwrite)
        self.meta: dict[str, Any] = {
            "identity": identity,
            "system": desc,
            "system_label": system_label(desc),
            "protocol": self.name,
            "simulator": sim.describe(),
            "generator": GENERATOR,
            **self.meta_fields(),
            "trace_bench_version": TRACE_VERSION,
            "complete": False,
        }
        if self.shard is not None:  # what a merge needs: the units' positions, and the bootstrap's size
            self.meta[SHARD_KEY] = {**self.shard, "n_boot": self.n_boot}
        self.store.write_meta(self.meta)
        self.metadata = {
            "generator": self.generator_label(),
            "backend": sim.name,
            "model": str(getattr(sim.llm, "model", "") or ""),
            "seed": config.seed,
            "kb_version": kb.version,
        }
        self.todo = [u for u in self.units if self.unit_id(u) not in self.store.done]
        self.total, self.done = len(self.units), len(self.units) - len(self.todo)
        self.label = f"{self.bar_prefix} {system.name}"[:40]

    def _check_shard(self, system: System) -> None:
        """A shard of a run is only the run's share when the protocol picks its units by id and the system keeps
        no state across dialogues."""
        shard = self.config.shard
        if shard is None:
            return
        if self.shard is None:
            raise UsageError(f"the {self.name} protocol does not take --shard (the trace protocol does)")
        if not system.session_isolated:
            raise UsageError(
                f"{system.name} is not session-isolated (it carries state across dialogues): shards would change "
                "its conversations; run it without --shard"
            )

    def steps(self) -> Iterator[int]:
        assert self.system is not None  # start() loaded it
        size = self.chunk_size(self.system)
        for start in range(0, len(self.todo), size):
            items = self.converse(self.todo[start : start + size], self.system)
            self.store.append(items)
            yield len(items)

    def finish(self) -> dict[str, Any]:
        """The final files, the metadata marked complete once metrics.json is in place; metrics.json's content."""
        assert self.system is not None  # start() loaded it
        sim, meta, desc = self.sim, self.meta, self.desc
        items = [self.store.done[self.unit_id(u)] for u in self.units]
        write_outputs(self.out, items, self.poi_names())
        meta.update({"system": self.system.describe(), "simulator": sim.describe(), "complete": True})
        if sim.llm is not None:  # tokens and cache hits of this process (not of resumed ones)
            meta["simulator_llm_usage_this_session"] = dict(sim.llm.usage)
        run = {
            "system": desc.get("system"),
            "system_label": meta["system_label"],
            "simulator": sim.name,
            "family": desc.get("family", "external"),
            **self.run_fields(),
        }
        metrics = build_metrics(
            items, self.kb, protocol=self.name, run=run, n_boot=self.n_boot, seed=self.config.seed
        )
        write_json(self.out / METRICS_FILE, metrics)
        self.store.write_meta(meta)  # complete only once metrics.json is in place
        return metrics
