"""One dialogue, attempt by attempt: the generation context and the planning both backends share.

`build_context` indexes the knowledge base once and assigns the whole corpus up front (cells, tiers,
archetypes, splits). Every attempt at dialogue `index` draws from its own RNG seeded with (seed, index,
attempt) (`dialogue_rng`), aims at the tier `tier_for_attempt` gives and is planned by `plan_for`; the template
backend renders and validates here (`make_dialogue`), the llm backend (`llm_backend.run_llm`) batches its
attempts over the same plans, and the traveler simulator rebuilds a dialogue's plan from them too.
"""

from __future__ import annotations

import hashlib
import logging
import random
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trace_dataset.constants import POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE
from trace_dataset.generate.candidates import plan_dialogue
from trace_dataset.generate.copyguard import ReviewNgrams
from trace_dataset.generate.index import CellIndex, build_index
from trace_dataset.generate.plan import DialoguePlan, PlanError
from trace_dataset.generate.record import assemble
from trace_dataset.generate.scenario import Assignment, assign, dialogue_id
from trace_dataset.generate.splits import assign_splits
from trace_dataset.generate.template_backend import render_template
from trace_dataset.generate.validate import codes, validate_plan, validate_record
from trace_dataset.io import TraceDataError, dumps, sha256_file
from trace_dataset.kb.store import KnowledgeBase

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 50
# when a dialogue cannot be made at its target tier (tiny cells), the next easier tiers are tried in turn
TIER_FALLBACK: dict[str, tuple[str, ...]] = {
    "Easy": ("Easy", "Medium"),
    "Medium": ("Medium", "Easy"),
    "Hard": ("Hard", "Medium", "Easy"),
    "Expert": ("Expert", "Hard", "Medium", "Easy"),
}


@dataclass
class Context:
    """Everything a worker needs; built once in the parent."""

    kb: KnowledgeBase
    cells: dict[tuple[str, str], CellIndex]
    ngrams: ReviewNgrams | None  # None: no copy check (the simulator's seeding rebuilds plans only)
    assignments: list[Assignment]
    splits: list[str]
    seed: int
    kb_version: str
    max_attempts: int = MAX_ATTEMPTS


@dataclass
class Result:
    index: int
    split: str
    line: str  # the dialogue record as one JSON line
    attempts: int
    reasons: dict[str, int] = field(default_factory=dict)
    backend: str = "template"
    tier: str = ""  # the tier the dialogue got (the target unless every try at it failed)
    turns: int = 0
    recommendation_turns: int = 0
    rejections: int = 0

    @classmethod
    def of(cls, record: dict[str, Any], attempts: int, reasons: dict[str, int]) -> Result:
        """The result for a finished record (counts taken here, so the report never re-parses lines)."""
        turns = record["turns"]
        return cls(
            index=int(record["dialogue_id"].rsplit("_", 1)[1]) - 1,
            split=record["split"],
            line=dumps(record),
            attempts=attempts,
            reasons=dict(reasons),
            backend=record["metadata"]["backend"],
            tier=record["scenario"]["difficulty"],
            turns=len(turns),
            recommendation_turns=sum(t["action"] in ("recommend", "compare") for t in turns),
            rejections=sum(t["action"] == "reject_and_refine" for t in turns),
        )


def kb_version_of(kb: KnowledgeBase) -> str:
    """kb.json's version, or (for a folder without one) a SHA256 over its data files."""
    if kb.version:
        return kb.version
    if kb.root is None:
        return ""
    h = hashlib.sha256()
    for name in (POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE):
        path = Path(kb.root) / name
        if path.exists():
            h.update(f"{name}:{sha256_file(path)}\n".encode())
    return h.hexdigest()


def warn_small_cells(cells: Mapping[tuple[str, str], Any], pool: int = 32) -> None:
    """One warning line when cells hold fewer POIs than the largest pool (pool_16 / pool_32 are then capped at
    the cell size): how many, and their sizes; the cells by name only when there are few (every cell at debug
    level), so that a small corpus (`--per-cell 9`: all 24 cells) does not print a paragraph."""
    small = sorted((c, t, cell.size) for (c, t), cell in cells.items() if cell.size < pool)
    if not small:
        return
    sizes = sorted({size for _, _, size in small})
    span = f"{sizes[0]} POIs" if len(sizes) == 1 else f"{sizes[0]}-{sizes[-1]} POIs"
    named = f": {', '.join(f'{c} x {t} ({size})' for c, t, size in small)}" if len(small) <= 3 else ""
    log.warning(
        "%d of %d city x type cells hold fewer than %d POIs (%s): pool_16 / pool_32 are capped at "
        "the cell size%s",
        len(small),
        len(cells),
        pool,
        span,
        named,
    )
    log.debug("cells under %d POIs: %s", pool, ", ".join(f"{c} x {t} ({size})" for c, t, size in small))


def build_context(
    kb: KnowledgeBase, n: int, seed: int, max_attempts: int = MAX_ATTEMPTS, workers: int = 1
) -> Context:
    t0 = time.perf_counter()
    cells, ngrams = build_index(kb, workers=workers)
    warn_small_cells(cells)
    assignments = assign(n, list(cells), seed)
    splits = assign_splits([(a.city, a.poi_type) for a in assignments], seed)
    log.info(
        "indexed the knowledge base in %.1fs (%d 6-gram hashes)", time.perf_counter() - t0, len(ngrams.hashes)
    )
    return Context(kb, cells, ngrams, assignments, splits, seed, kb_version_of(kb), max_attempts)


def dialogue_rng(seed: int, index: int, attempt: int) -> random.Random:
    return random.Random(f"{seed}:{index}:{attempt}")


def tier_for_attempt(ctx: Context, index: int, attempt: int) -> str | None:
    """The tier attempt number `attempt` aims at: the target for the first max_attempts tries, then the
    easier tiers of TIER_FALLBACK in turn (a cell too small for the target still yields a dialogue);
    None when every tier has had its tries."""
    order = TIER_FALLBACK[ctx.assignments[index].tier]
    k = attempt // ctx.max_attempts
    return order[k] if k < len(order) else None


def plan_for(
    ctx: Context, index: int, attempt: int, reasons: Counter
) -> tuple[DialoguePlan, random.Random] | None:
    a = ctx.assignments[index]
    tier = tier_for_attempt(ctx, index, attempt)
    if tier is None:
        return None
    if tier != a.tier:
        a = replace(a, tier=tier)
    rng = dialogue_rng(ctx.seed, index, attempt)
    try:
        plan = plan_dialogue(ctx.cells[(a.city, a.poi_type)], a, rng, attempt % ctx.max_attempts)
    except PlanError as e:
        reasons[f"plan:{e.reason}"] += 1
        return None
    problems = validate_plan(plan, ctx.cells[(a.city, a.poi_type)])
    if problems:
        reasons.update(f"plan:{c}" for c in codes(problems))
        return None
    return plan, rng


def total_attempts(ctx: Context, index: int) -> int:
    return ctx.max_attempts * len(TIER_FALLBACK[ctx.assignments[index].tier])


def no_dialogue_error(ctx: Context, index: int, reasons: Counter) -> TraceDataError:
    a = ctx.assignments[index]
    return TraceDataError(
        f"{dialogue_id(index)} ({a.city} x {a.poi_type}, {a.tier}): no valid dialogue after "
        f"{total_attempts(ctx, index)} attempts over the tiers {TIER_FALLBACK[a.tier]}; failure reasons "
        f"{dict(reasons)}. The cell's POIs may be too few or too uniform, or lack quotable reviews.",
        path=ctx.kb.root,
    )


def make_dialogue(ctx: Context, index: int) -> Result:
    """One dialogue by the template backend, regenerated with a new sub-seed until it validates."""
    return make_dialogue_with_plan(ctx, index)[0]


def make_dialogue_with_plan(ctx: Context, index: int) -> tuple[Result, DialoguePlan]:
    """make_dialogue, also returning the plan (its constraints) the record was rendered from."""
    reasons: Counter = Counter()
    a = ctx.assignments[index]
    cell = ctx.cells[(a.city, a.poi_type)]
    for attempt in range(total_attempts(ctx, index)):
        planned = plan_for(ctx, index, attempt, reasons)
        if planned is None:
            continue
        plan, rng = planned
        rendered = render_template(plan, cell, ctx.kb, rng)
        record = assemble(
            plan,
            rendered,
            ctx.kb,
            split=ctx.splits[index],
            seed=ctx.seed,
            backend="template",
            model="",
            kb_version=ctx.kb_version,
        )
        problems = validate_record(record, ctx.kb, ctx.ngrams)
        if problems:
            reasons.update(codes(problems))
            log.debug("%s attempt %d rejected: %s", dialogue_id(index), attempt, problems[:3])
            continue
        return Result.of(record, attempt + 1, reasons), plan
    raise no_dialogue_error(ctx, index, reasons)
