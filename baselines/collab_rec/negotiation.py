"""Collab-REC's strategies over a batch of tasks: RandRec, TopPop, SASI, MASI and MAMI.

MASI and MAMI run every task's moderator in lockstep: round t of all still-active tasks is one batch of agent
requests (3 per task), so an OpenAI-compatible server sees them concurrently. `propose` is anything that answers
such a batch: `AgentCaller.propose` (the LLM agents) or, in tests, a plain function returning fixed lists (the
moderator's own inputs).

Systems reported per query (`QueryResult.systems`, the paper's names): RandRec, TopPop, SASI; M_1 (= MASI, the
first round's collective offer); with `stopping="eq13"` M_eq13 (the round where Eq. 13 stopped), with
`stopping="m_early"` M_early (the authors' post-hoc pick over a fixed T_max = 10), M_10 and M_early_div (the
pick the authors' diversity table uses: M_early's round if it beats round 1, else round 10), with
`stopping="fixed"` M_<T_max>.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from baselines.collab_rec.agents import SASI_AGENT, AgentCaller, Reply, Task, load_settings
from baselines.collab_rec.moderator import Moderator, ModeratorConfig, clip_list, hallucination_rate
from trace_dataset.constants import SEED
from trace_metrics.lib.collab_rec import filter_fraction, filter_success

STRATEGIES: tuple[str, ...] = ("randrec", "toppop", "sasi", "masi", "mami")
LLM_STRATEGIES: tuple[str, ...] = ("sasi", "masi", "mami")

Proposer = Callable[[Sequence[tuple[Task, str, Moderator]]], Sequence["Reply | Sequence[str] | None"]]


@dataclass
class QueryResult:
    task_id: str
    strategy: str
    systems: dict[str, dict[str, Any]]  # name -> {"round", "offer", "success", "fractions"}
    rounds: list[dict[str, Any]] = field(default_factory=list)
    stop: dict[str, Any] | None = None  # {"round", "reason"}
    agent_calls: int = 0
    agent_failures: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_id": self.task_id,
            "strategy": self.strategy,
            "systems": self.systems,
            "stop": self.stop,
            "agent_calls": self.agent_calls,
            "agent_failures": self.agent_failures,
            "rounds": self.rounds,
        }


def system(task: Task, offer: Sequence[str], round_: int | None) -> dict[str, Any]:
    """A final list with its moderator success (Eq. 12) and each item's filter fraction."""
    offer = list(offer)
    return {
        "round": round_,
        "offer": offer,
        "success": filter_success(offer, task.filters, task.satisfies),
        "fractions": [filter_fraction(c, task.filters, task.satisfies) for c in offer],
    }


# ---------------------------------------------------------------------------------------------------
# Non-LLM baselines
# ---------------------------------------------------------------------------------------------------
def run_randrec(tasks: Sequence[Task], k: int, seed: int = SEED) -> list[QueryResult]:
    """k catalogue items sampled per query, seeded by (seed, query id): the same run gives the same lists."""
    out = []
    for task in tasks:
        rng = random.Random(f"{seed}:{task.id}")
        offer = rng.sample(list(task.catalogue), min(k, len(task.catalogue)))
        out.append(QueryResult(task.id, "randrec", {"RandRec": system(task, offer, None)}))
    return out


def run_toppop(tasks: Sequence[Task], ranking: Sequence[str], k: int) -> list[QueryResult]:
    """The same k most popular catalogue items for every query."""
    return [
        QueryResult(task.id, "toppop", {"TopPop": system(task, list(ranking)[:k], None)}) for task in tasks
    ]


# ---------------------------------------------------------------------------------------------------
# SASI
# ---------------------------------------------------------------------------------------------------
def run_sasi(tasks: Sequence[Task], caller: AgentCaller) -> list[QueryResult]:
    """One App. D.4 prompt per query; the list as returned (first k distinct names) is the answer.

    Names outside the catalogue stay in the list (they satisfy no filter) and count as hallucinations; a reply
    that stays invalid JSON is a failed query with an empty list (success 0).
    """
    k = caller.config.k
    replies = caller.ask([caller.sasi_prompt(task) for task in tasks], [task.catalogue for task in tasks])
    out = []
    for task, reply in zip(tasks, replies, strict=True):
        known = set(task.catalogue)
        listed, duplicates, overflow = clip_list(reply.items, k)
        h = hallucination_rate(listed, known.__contains__, k) if reply.items is not None else None
        agent = {
            "agent": SASI_AGENT,
            "answered": reply.items is not None,
            "listed": listed,
            "invalid": {c: "out_of_catalogue" for c in listed if c not in known},
            "duplicates": duplicates,
            "overflow": overflow,
            "hallucination": h,
            "error": reply.error,
        }
        sasi = system(task, listed, 1)
        out.append(
            QueryResult(
                task.id,
                "sasi",
                {"SASI": sasi},
                [{"round": 1, "offer": listed, "success": sasi["success"], "agents": [agent]}],
                None,
                1,
                int(reply.items is None),
            )
        )
    return out


# ---------------------------------------------------------------------------------------------------
# MASI / MAMI
# ---------------------------------------------------------------------------------------------------
def _items(reply: Reply | Sequence[str] | None) -> list[str] | None:
    if isinstance(reply, Reply):
        return reply.items
    return None if reply is None else [str(x) for x in reply]


def negotiate(
    tasks: Sequence[Task], propose: Proposer, config: ModeratorConfig, agents: Sequence[str] | None = None
) -> list[Moderator]:
    """Run every task's moderator until its stopping rule fires; returns the moderators (with their rounds)."""
    agents = tuple(agents or load_settings().names)
    mods = [Moderator(t.catalogue, t.filters, t.role_filters(), t.satisfies, config) for t in tasks]
    active = list(range(len(tasks)))
    while active:
        requests = [(tasks[i], a, mods[i]) for i in active for a in agents]
        replies = list(propose(requests))
        if len(replies) != len(requests):
            raise RuntimeError(f"proposer answered {len(replies)} of {len(requests)} requests")
        it = iter(replies)
        for i in active:
            mods[i].step({a: _items(next(it)) for a in agents})
        active = [i for i in active if mods[i].stop_reason() is None]
    return mods


def mami_systems(task: Task, mod: Moderator, strategy: str) -> dict[str, dict[str, Any]]:
    """M_1 and the strategy's final system(s) from a finished negotiation."""
    cfg = mod.config
    offers = [r.offer for r in mod.rounds]
    systems = {"M_1": system(task, offers[0], 1)}
    if strategy == "masi":
        return systems
    if cfg.stopping == "eq13":
        systems["M_eq13"] = system(task, offers[-1], mod.round)
    elif cfg.stopping == "m_early":
        pick = mod.final_round()
        systems["M_early"] = system(task, offers[pick - 1], pick)
        systems[f"M_{mod.round}"] = system(task, offers[-1], mod.round)
        # the authors' Table 3 (analysis/diversity.py) takes round T_max when M_early does not beat round 1
        late = pick if pick > 1 else mod.round
        systems["M_early_div"] = system(task, offers[late - 1], late)
    else:
        systems[f"M_{mod.round}"] = system(task, offers[-1], mod.round)
    return systems


def run_mami(
    tasks: Sequence[Task],
    propose: Proposer,
    config: ModeratorConfig,
    strategy: str = "mami",
    agents: Sequence[str] | None = None,
) -> list[QueryResult]:
    """MAMI (config's stopping rule) or MASI (strategy "masi": one round)."""
    if strategy not in ("masi", "mami"):
        raise ValueError(f"run_mami runs 'masi' or 'mami', not {strategy!r}")
    if strategy == "masi":
        config = ModeratorConfig(**{**_fields(config), "t_max": 1, "stopping": "fixed"})
    mods = negotiate(tasks, propose, config, agents)
    out = []
    for task, mod in zip(tasks, mods, strict=True):
        records = [r.to_dict() for r in mod.rounds]
        answered = [a["answered"] for r in records for a in r["agents"]]
        out.append(
            QueryResult(
                task.id,
                strategy,
                mami_systems(task, mod, strategy),
                records,
                {"round": mod.round, "reason": mod.stop_reason()},
                len(answered),
                answered.count(False),
            )
        )
    return out


def _fields(config: ModeratorConfig) -> dict[str, Any]:
    return {f: getattr(config, f) for f in config.__dataclass_fields__}
