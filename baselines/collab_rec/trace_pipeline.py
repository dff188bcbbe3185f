"""Collab-REC as a Trace baseline (`trace-bench run collab_rec --param llm=SPEC`): on every recommend/compare
turn the three agents negotiate over the turn's usable pool under the moderator, with the user's stated
preferences as the query's filters (`trace_filters`).

Ranking: the final collective offer, then the other eligible POIs by moderator score (ties in pool order), then
the POIs the moderator rejected (pool order). SASI: its list's valid names, then the rest in pool order.
Response: the shared template of `baselines.toolkit.responses` on that ranking (verbatim review quotes with [Rn]
labels, so the grounding metrics apply). ask_preference and farewell turns need no negotiation (no ranking),
nor does a turn with a single usable candidate (it is the ranking).
Defaults: MAMI with Eq. 13 stopping, aggressive rejection, k = 5 (a closed pool holds 8 POIs; k is cut to the
usable candidates), App. D's prompts, temperature 0.5, top-p 0.95. Per-turn counts (agent calls, failures,
hallucinated names, rounds) are in `meta.counts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from tqdm.auto import tqdm

from baselines.base import DEFAULT_BATCH_SIZE, TracePipeline
from baselines.collab_rec.agents import AgentCaller, load_settings, prompt_files
from baselines.collab_rec.moderator import ModeratorConfig, Rejection, Stopping
from baselines.collab_rec.negotiation import LLM_STRATEGIES, QueryResult, run_mami, run_sasi
from baselines.collab_rec.trace_filters import TurnQuery, popularity_levels, trace_task
from baselines.toolkit.constraints import CategoryMatcher
from baselines.toolkit.output import TurnOutput, turn_output
from baselines.toolkit.responses import EvidenceIndex, turn_response
from trace_dataset.constants import RECOMMENDATION_ACTIONS, SEED
from trace_llm import DEFAULT_SPEC, LLM, load_llm

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

DEFAULT_TRACE_K = 5


def final_system(strategy: str, config: ModeratorConfig) -> str:
    if strategy == "sasi":
        return "SASI"
    if strategy == "masi":
        return "M_1"
    return {"eq13": "M_eq13", "m_early": "M_early"}.get(config.stopping, f"M_{config.t_max}")


def full_ranking(result: QueryResult, system: str, turn: TurnQuery) -> list[str]:
    """business ids: the system's list, the other eligible POIs by score, the moderator-rejected ones last."""
    chosen = result.systems[system]
    offer = [turn.ids[c] for c in chosen["offer"] if c in turn.ids]
    if not result.rounds or system == "SASI":
        rest = [pid for pid in turn.ids.values() if pid not in offer]
        return list(dict.fromkeys(offer)) + rest
    record = result.rounds[chosen["round"] - 1]
    rejected = {turn.ids[c] for c in record["rejected"] if c in turn.ids}
    scores = {turn.ids[c]: s for c, s in record["scores"].items() if c in turn.ids}
    pool = list(turn.ids.values())
    taken = set(offer)
    eligible = [pid for pid in pool if pid not in taken and pid not in rejected]
    eligible.sort(key=lambda pid: -scores.get(pid, 0.0))  # stable: ties keep pool order
    return offer + eligible + [pid for pid in pool if pid in rejected and pid not in taken]


def ranking_scores(result: QueryResult, system: str, turn: TurnQuery) -> dict[str, tuple[int, float]]:
    """What `full_ranking` sorts by, as scores (`baselines.base` "Ties"): the offer strictly in its order, the
    other eligible POIs by moderator score (equal scores tie), the rejected ones (SASI: the unlisted) tied last."""
    ranked = full_ranking(result, system, turn)
    offer = [turn.ids[c] for c in result.systems[system]["offer"] if c in turn.ids]
    out: dict[str, tuple[int, float]] = {p: (2, -float(i)) for i, p in enumerate(dict.fromkeys(offer))}
    if not result.rounds or system == "SASI":
        out.update((p, (0, 0.0)) for p in ranked if p not in out)
        return out
    record = result.rounds[result.systems[system]["round"] - 1]
    rejected = {turn.ids[c] for c in record["rejected"] if c in turn.ids}
    scores = {turn.ids[c]: s for c, s in record["scores"].items() if c in turn.ids}
    for p in ranked:
        if p not in out:
            out[p] = (0, 0.0) if p in rejected else (1, float(scores.get(p, 0.0)))
    return out


class CollabRecBaseline(TracePipeline):
    name: ClassVar[str] = "collab_rec"
    config_keys: ClassVar[tuple[str, ...]] = (
        "strategy",
        "k",
        "rejection",
        "stopping",
        "t_max",
        "max_repairs",
        "code_behaviours",
        "catalogue_enum",
    )

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        llm: str | LLM = DEFAULT_SPEC,
        strategy: str = "mami",
        k: int = DEFAULT_TRACE_K,
        rejection: Rejection = "aggressive",
        stopping: Stopping = "eq13",
        t_max: int = 10,
        temperature: float | None = None,
        top_p: float | None = None,
        max_new_tokens: int | None = None,
        seed: int = SEED,
        max_repairs: int | None = None,
        code_behaviours: Sequence[str] = (),
        llm_cache: str | bool | None = None,
        llm_options: Mapping[str, Any] | None = None,
        catalogue_enum: bool = True,
        **params: Any,
    ):
        super().__init__(kb, batch_size, **params)
        self.catalogue_enum = bool(catalogue_enum)
        if strategy not in LLM_STRATEGIES:
            raise ValueError(f"unknown strategy {strategy!r} for Trace; expected one of {LLM_STRATEGIES}")
        self.strategy, self.k, self.rejection, self.stopping, self.t_max = (
            strategy,
            k,
            rejection,
            stopping,
            t_max,
        )
        self.code_behaviours = sorted(code_behaviours)
        self.config = ModeratorConfig(
            k=k,
            rejection=rejection,
            stopping=stopping,
            t_max=t_max,
            code_behaviours=frozenset(code_behaviours),
        )  # validates the values
        settings = load_settings()
        self.max_repairs = settings.max_repairs if max_repairs is None else max_repairs
        if isinstance(llm, LLM):
            self.llm = llm
        else:
            decoding = settings.settings(
                temperature=temperature, top_p=top_p, max_new_tokens=max_new_tokens, seed=seed
            )
            self.llm = load_llm(str(llm), decoding, cache_path=llm_cache, **dict(llm_options or {}))
        self.evidence = EvidenceIndex(kb)
        self._levels: dict[tuple[str, str], dict[str, str]] = {}
        self._categories: dict[tuple[str, str], CategoryMatcher] = {}

    def get_config_dict(self) -> dict[str, Any]:
        config = super().get_config_dict()
        config["prompt_files"] = prompt_files()
        return config

    def summary(self) -> dict[str, Any]:
        return {"llm_usage": self.llm.usage}

    # -- knowledge-base-derived caches (no dialogue state: session isolation holds) -------------------------
    def _cell(self, city: str, poi_type: str) -> tuple[dict[str, str], CategoryMatcher]:
        key = (city, poi_type)
        if key not in self._levels:
            cell = self.kb.pois_in(city, poi_type)
            self._levels[key] = popularity_levels(self.kb, city, poi_type)
            self._categories[key] = CategoryMatcher(c for p in cell for c in p.categories)
        return self._levels[key], self._categories[key]

    # -- the batch ----------------------------------------------------------------------------------
    def _negotiate(self, turns: list[TurnQuery]) -> list[QueryResult]:
        """One strategy run per effective k (k is cut to the usable candidates), results in input order."""
        results: list[QueryResult | None] = [None] * len(turns)
        groups: dict[int, list[int]] = {}
        for i, turn in enumerate(turns):
            groups.setdefault(min(self.k, len(turn.task.catalogue)), []).append(i)
        for k, members in sorted(groups.items()):
            config = ModeratorConfig(
                **{
                    **{f: getattr(self.config, f) for f in self.config.__dataclass_fields__},
                    "k": k,
                    "k_reject": None,
                }
            )
            caller = AgentCaller(self.llm, config, self.max_repairs, catalogue_enum=self.catalogue_enum)
            # every task's round t is one batch, so a server answers them concurrently; a model answering one
            # request at a time gains nothing from that and negotiates task by task instead, so that an agent's
            # next-round prompt follows its last one and llama.cpp's prompt cache reads only the new part
            # (the same prompts and replies: each request is seeded on its own)
            batches = [members] if self.llm.answers_concurrently else [[i] for i in members]
            bar = tqdm(
                batches, desc="collab_rec turns", unit="turn", leave=False, disable=len(batches) < 2 or None
            )
            for batch in bar:  # one turn at a time: the bar moves per negotiated turn, with its ETA
                tasks = [turns[i].task for i in batch]
                out = (
                    run_sasi(tasks, caller)
                    if self.strategy == "sasi"
                    else run_mami(tasks, caller.propose, config, self.strategy)
                )
                for i, result in zip(batch, out, strict=True):
                    results[i] = result
        return [r for r in results if r is not None]

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        todo = [
            i
            for i, inp in enumerate(inputs)
            if inp["action"] in RECOMMENDATION_ACTIONS and len(inp["candidates"]) > 1
        ]
        turns = {}
        for i in todo:
            levels, categories = self._cell(inputs[i]["city"], inputs[i]["poi_type"])
            turns[i] = trace_task(self.kb, inputs[i], levels, categories)
        results = dict(zip(todo, self._negotiate([turns[i] for i in todo]), strict=True))
        system = final_system(self.strategy, self.config)
        outputs = []
        for i, inp in enumerate(inputs):
            ranked: list[str] = []
            meta: dict[str, Any] = {}
            scores: dict[str, Any] = {}
            if i in results:
                result, turn = results[i], turns[i]
                ranked = full_ranking(result, system, turn)
                scores = ranking_scores(result, system, turn)
                meta = self._meta(result, system, turn)
            elif inp["action"] in RECOMMENDATION_ACTIONS and inp["candidates"]:
                ranked, meta = list(inp["candidates"]), {"system": "single_candidate"}  # nothing to negotiate
            response = turn_response(inp, ranked, kb=self.kb, evidence=self.evidence)
            outputs.append(turn_output(inp, ranked, response.text, response.citations, meta, scores))
        return outputs

    def _meta(self, result: QueryResult, system: str, turn: TurnQuery) -> dict[str, Any]:
        hallucinated = sorted(
            {
                c
                for rnd in result.rounds
                for a in rnd["agents"]
                for c, why in a.get("invalid", {}).items()
                if why == "out_of_catalogue"
            }
        )
        chosen = result.systems[system]
        return {
            "system": system,
            "filters": turn.task.filters,
            "moderator_success": chosen["success"],
            "round": chosen["round"],
            "stop": result.stop,
            "hallucinated": hallucinated[:20],
            "counts": {
                "agent_calls": result.agent_calls,
                "agent_failures": result.agent_failures,
                "hallucinated_names": len(hallucinated),
                "rounds": len(result.rounds),
            },
        }
