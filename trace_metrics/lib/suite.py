"""Everything at once: a data directory + a predictions file -> the leaderboard row (`trace_suite`).

`evaluate_run` loads and validates, `evaluate_predictions` scores in memory (what the benchmark times). The
result holds every metric value with its n, per-item values with dialogue ids (for the statistics), per-item
standard deviations, the corpus and knowledge-base versions and the configuration. The NLI model and the LLM
judge run only when asked.

Scoring is a loop over the metric declarations (`specs.SUITE_METRICS`, or the `metrics` given), in their
order: each metric's per-item function runs on the items of its level (`lib.items`: recommend/compare turns,
grounded turns, system turns, dialogues, rejection episodes), its values go to `per_item[group][id]` (None =
undefined, left out), and its aggregation makes the value (the mean of the defined items; for `cgs` and
`cgs_ent`, the CGS formula on their components' means). Grounding metrics live in the `recommendation_turns`
group, or in `system_turns` with `grounding_turns="system"`. The options (`specs.OPTIONS`: fuzzy_threshold,
cd_gate, pc_window, radius_km, use_stemmer, grounding_turns, compare_hit, t2r) are keyword arguments with the
declared defaults.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import trace_metrics.specs as specs  # not `from trace_metrics import`: that package imports this module
from trace_dataset.constants import REVIEWS_FILE, SCHEMA_VERSION, resolve_splits
from trace_dataset.datadir import (
    check_data_dir,
    corpus_meta,
    corpus_version,
    iter_dialogues,
    kb_dir,
    split_file,
)
from trace_dataset.io import TraceDataError, read_json, sha256_file
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.prediction import Prediction
from trace_dataset.release.blind import PERIOD_FILE, read_scored_turns
from trace_metrics.lib import conventions, items, scoring, selection, suite_optional, text
from trace_metrics.lib import sweeps as sweeps_lib
from trace_metrics.lib.predictions import load_predictions, validate_predictions
from trace_metrics.lib.suite_optional import NLI, Judge
from trace_metrics.lib.tokenize import BLEU_TOKENIZER, ROUGE_TOKENIZER
from trace_metrics.specs import MetricSpec

log = logging.getLogger(__name__)

# per-item groups of the result, in order, and the level whose items each holds ("grounded_turn" goes to the
# group of the turns `grounding_turns` names)
GROUPS: dict[str, str] = {
    "recommendation_turns": "recommendation_turn",
    "system_turns": "system_turn",
    "dialogues": "dialogue",
    "rejection_episodes": "rejection_episode",
}


# ---------------------------------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _cyclic_gc_paused(pause: bool = True) -> Iterator[None]:
    """Pause Python's cyclic garbage collector while the suite scores (restored on exit, errors included).

    Scoring builds ~10^6 small objects (turns, analyses, per-item lists, n-gram sets) that form no reference
    cycles: reference counting frees them, and the collector's passes over everything alive find nothing to
    collect (0 objects in 555 passes on the benchmark) and cost ~10% of the suite's time. Not paused when an
    NLI model or an LLM judge runs (their libraries may create cycles).
    """
    if not pause or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def check_metrics(metrics: Sequence[MetricSpec]) -> None:
    """The declarations the suite can compute (`scoring.check`): per-item functions at a level the suite has
    (`specs.SUITE_LEVELS`), components listed before them, options that are declared."""
    scoring.check(metrics, specs.SUITE_LEVELS, specs.SUITE_OPTIONS)


def evaluate_predictions(
    dialogues: Sequence[dict],
    predictions: Mapping[tuple[str, int], Prediction],
    kb: KnowledgeBase,
    *,
    nli: NLI | None = None,
    judge: Judge | None = None,
    sweeps: bool = False,
    with_std: bool = True,
    metrics: Sequence[MetricSpec] | None = None,
    **options: Any,
) -> dict:
    """Score validated predictions ({(dialogue_id, turn_id): record}) against `dialogues`; see `evaluate_run`.

    `options`: the suite options (`specs.SUITE_OPTIONS`), each defaulting to its declaration; `metrics`: the
    declarations to compute (default `specs.SUITE_METRICS`; those that need an absent NLI model or judge are
    skipped)."""
    opts = specs.resolve_options(options)
    metrics = specs.SUITE_METRICS if metrics is None else tuple(metrics)
    check_metrics(metrics)
    scored_turns = conventions.resolve_scored_turns(False, opts["scored_turns"])  # "auto": data dirs only
    opts["scored_turns"] = scored_turns
    with _cyclic_gc_paused(nli is None and judge is None):
        found = _items(dialogues, predictions, kb, opts["grounding_turns"], scored_turns)
        aggregates, models = _run_models(found, dialogues, nli, judge, sweeps)
        have = {"nli": nli is not None, "judge": judge is not None}
        scores = scoring.score([m for m in metrics if m.needs is None or have[m.needs]], found.levels, opts)
        per_item = found.per_item_ids()
        for m in metrics:
            key = scores.keys.get(m.id)
            if key in scores.per_item:
                values = scores.per_item[key]
                if m.level == "dialogue" and found.scored_dialogues is not found.dialogues:
                    values = [None] * len(found.dialogues)  # every dialogue listed, none scored ("last")
                per_item[found.group_of[m.level]][key] = values
        result = _result(found, scores, per_item, aggregates, models, opts, sweeps=sweeps, with_std=with_std)
        result["config"] = _scored_config(metrics, scores, scored_turns)
        return result


def _scored_config(
    metrics: Sequence[MetricSpec], scores: scoring.Scores, scored_turns: str
) -> dict[str, Any]:
    """The scored turns, and why each metric the scored turns leave without a value has none (under "last":
    every dialogue-level metric, `conventions.WITHOUT_VALUE_ONE_TURN`)."""
    out: dict[str, Any] = {"scored_turns": scored_turns}
    if scored_turns == "last":
        out["without_value"] = {
            scores.keys[m.id]: conventions.WITHOUT_VALUE_ONE_TURN
            for m in metrics
            if m.level == "dialogue" and m.id in scores.keys
        }
    return out


class _SuiteItems(NamedTuple):
    """The items of one run, by level and by per-item group of the result."""

    joined: list[selection.EvalDialogue]
    sources: items.Sources
    system: list[items.TurnItem]
    recommendation: list[items.TurnItem]
    grounded: list[items.TurnItem]
    dialogues: list[items.DialogueItem]  # every dialogue (the per-item ids, the intervals' resampling unit)
    scored_dialogues: list[items.DialogueItem]  # the dialogue-level metrics' items: none under "last"
    episodes: list[items.EpisodeItem]
    without_followup: int  # rejection episodes with no later recommend/compare turn (counted, not scored)
    unscored: int  # system turns predicted but not scored (scored_turns="last": all but each dialogue's last)

    @property
    def levels(self) -> dict[str, list]:
        return {
            "recommendation_turn": self.recommendation,
            "grounded_turn": self.grounded,
            "system_turn": self.system,
            "dialogue": self.scored_dialogues,
            "rejection_episode": self.episodes,
        }

    @property
    def group_of(self) -> dict[str, str]:
        """Level -> its per-item group; grounded turns go to the group of the turns `grounding_turns` names."""
        out = {level: group for group, level in GROUPS.items()}
        out["grounded_turn"] = "system_turns" if self.grounded is self.system else "recommendation_turns"
        return out

    def per_item_ids(self) -> dict[str, dict[str, list]]:
        """Each group's item ids (the values follow them)."""
        return {
            "recommendation_turns": _turn_ids(self.recommendation),
            "system_turns": _turn_ids(self.system),
            "dialogues": {"dialogue_id": [d.dialogue.dialogue_id for d in self.dialogues]},
            "rejection_episodes": {
                "dialogue_id": [e.dialogue_id for e in self.episodes],
                "turn_id": [e.turn_id for e in self.episodes],
            },
        }


def _turn_ids(turns: Sequence[items.TurnItem]) -> dict[str, list]:
    return {"dialogue_id": [x.turn.dialogue_id for x in turns], "turn_id": [x.turn.turn_id for x in turns]}


def _items(
    dialogues: Sequence[dict],
    predictions: Mapping[tuple[str, int], Prediction],
    kb: KnowledgeBase,
    grounding_turns: Any,
    scored_turns: str,
) -> _SuiteItems:
    """The items of each level; under scored_turns="last" only each dialogue's last system turn, the rejection
    episodes it follows up, and no dialogue (the dialogue-level metrics have no value)."""
    joined = selection.join(dialogues, predictions)
    sources = items.Sources(kb)
    sys_turns = [
        items.TurnItem(t, sources) for d in joined for t in selection.scored_system_turns(d, scored_turns)
    ]
    rec = [x for x in sys_turns if x.recommending]
    points: dict = {}
    dlg = [items.DialogueItem(d, kb, points) for d in joined]
    episodes: list[items.EpisodeItem] = []
    without_followup = 0
    for d, src in zip(dlg, dialogues, strict=True):
        found, missing = items.episodes(d, src["turns"], scored_turns)
        episodes.extend(found)
        without_followup += missing
    grounded = items.grounded_items(rec, sys_turns, grounding_turns)
    unscored = sum(len(d.system_turns) for d in joined) - len(sys_turns)
    scored = dlg if scored_turns == "all" else []
    return _SuiteItems(
        joined, sources, sys_turns, rec, grounded, dlg, scored, episodes, without_followup, unscored
    )


def _run_models(
    found: _SuiteItems, dialogues: Sequence[dict], nli: NLI | None, judge: Judge | None, sweeps: bool
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run the NLI model and the judge when given: their per-turn results go onto the turns; returns the
    result's `aggregates` (the NLI threshold sweep) and `models` (what ran)."""
    extra: dict[str, Any] = {}
    models: dict[str, Any] = {}
    grounded, rec = found.grounded, found.recommendation
    if nli is not None:
        ent, ent_raw, models["nli"] = suite_optional.run_nli(
            nli, [x.turn.response for x in grounded], [x.cited_texts for x in grounded]
        )
        for x, e in zip(grounded, ent, strict=True):
            x.entailment = e
        if sweeps:
            extra["nli_threshold_sweep"] = suite_optional.nli_threshold_sweep(ent_raw)
    if judge is not None:
        by_id = {d["dialogue_id"]: d for d in dialogues}
        ratings, _raw, models["judge"] = suite_optional.run_judge(
            judge, [x.turn for x in rec], by_id, [x.cited_texts for x in rec]
        )
        for x, r in zip(rec, ratings, strict=True):
            x.judge = r
    return extra, models


def _counts(found: _SuiteItems, scored_turns: str) -> dict[str, int]:
    """The suite's counts; `unscored_system_turns` only under scored_turns="last" (elsewhere every system turn
    is scored, and the counts keep the keys and bytes they had before the option existed)."""
    analyses = [x.analysis for x in found.grounded]
    rec = found.recommendation
    unscored = {"unscored_system_turns": found.unscored} if scored_turns == "last" else {}
    return {
        "dialogues": len(found.joined),
        "system_turns": len(found.system),
        **unscored,
        "recommendation_turns": len(rec),
        "recommendation_turns_without_gold": sum(1 for x in rec if not x.turn.gold),
        "rejection_episodes": len(found.episodes) + found.without_followup,
        "rejection_episodes_without_followup": found.without_followup,
        "quotes": sum(len(a.supports) for a in analyses),
        "unresolved_labels": sum(a.unresolved_labels for a in analyses),
        "unknown_review_ids": len(found.sources.unknown_review_ids),
        "dialogues_with_budget": sum(1 for d in found.dialogues if d.ceiling is not None),
    }


def _result(
    found: _SuiteItems,
    scores: scoring.Scores,
    per_item: dict[str, dict[str, list]],
    aggregates: dict[str, Any],
    models: dict[str, Any],
    opts: Mapping[str, Any],
    *,
    sweeps: bool,
    with_std: bool,
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "values": scores.values,
        "n": scores.n,
        "aggregates": aggregates,
        "counts": _counts(found, opts["scored_turns"]),
        "models": models,
        "per_item": per_item,
    }
    unknown = found.sources.unknown_review_ids
    if unknown:
        log.warning(
            "%d cited review id(s) are not in the knowledge base (first: %s); their quotes count as unsupported",
            len(unknown),
            sorted(unknown)[:3],
        )
    if with_std:
        result["std"] = suite_optional.item_stds(per_item, tuple(scores.values))
    if sweeps:
        analyses = [x.analysis for x in found.grounded]
        result["sweeps"] = {
            **sweeps_lib.grounding_sweeps(
                analyses, opts["fuzzy_threshold"], opts["cd_gate"], opts["pc_window"]
            ),
            "spatial_radius_km": sweeps_lib.spatial_sweep([d.distances for d in found.scored_dialogues]),
        }
    return result


def evaluate_run(
    data_dir: str | os.PathLike,
    predictions_path: str | os.PathLike,
    split: str = "test",
    pool: str = "closed",
    nli: NLI | None = None,
    judge: Judge | None = None,
    **options: Any,
) -> dict:
    """The leaderboard row of one predictions file on one split and pool of a Trace data directory.

    Returns {"values", "n", "std", "aggregates", "counts", "versions", "config", "models", "run"?, "sweeps"?,
    "per_item"}. `nli`: an NLI model id/path or an `entailment.NLIScorer`; `judge`: an LLM spec or a loaded
    LLM. `options`: those of `evaluate_rows` (the suite options of `specs.SUITE_OPTIONS`, sweeps, ...).
    """
    predictions_path = Path(predictions_path)
    rows = load_predictions(predictions_path)
    result = evaluate_rows(
        data_dir, rows, split, pool, nli, judge, predictions_path=predictions_path, **options
    )
    run_meta_path = predictions_path.with_name(predictions_path.name + ".meta.json")
    if run_meta_path.exists():
        result["run"] = read_json(run_meta_path)
    return {k: result[k] for k in RESULT_ORDER if k in result}


def _splits_sha256(data_dir: str | os.PathLike, splits: Sequence[str]) -> str:
    """The split file's SHA-256; for several splits ("all"), the SHA-256 of their names and hashes in order."""
    if len(splits) == 1:
        return sha256_file(split_file(data_dir, splits[0]))
    joined = "\n".join(f"{s}:{sha256_file(split_file(data_dir, s))}" for s in splits)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


RESULT_ORDER = (
    "values",
    "n",
    "std",
    "aggregates",
    "counts",
    "versions",
    "config",
    "models",
    "run",
    "sweeps",
    "per_item",
)


def load_kb(data_dir: str | os.PathLike) -> KnowledgeBase:
    """The data directory's knowledge base; fails clearly when its review texts are missing (not hydrated)."""
    if not (kb_dir(data_dir) / REVIEWS_FILE).exists():
        raise TraceDataError(
            f"the knowledge base has no review texts ({REVIEWS_FILE} missing): grounding needs them. This looks "
            "like a non-hydrated release; run `trace-bench corpus hydrate` and evaluate the hydrated directory",
            path=kb_dir(data_dir),
        )
    return KnowledgeBase.load(kb_dir(data_dir))


def evaluate_rows(
    data_dir: str | os.PathLike,
    rows: Sequence[dict],
    split: str = "test",
    pool: str = "closed",
    nli: NLI | None = None,
    judge: Judge | None = None,
    *,
    sweeps: bool = False,
    check_pool: bool = True,
    with_std: bool = True,
    kb: KnowledgeBase | None = None,
    predictions_path: str | os.PathLike | None = None,
    metrics: Sequence[MetricSpec] | None = None,
    **options: Any,
) -> dict:
    """Validate prediction rows (dicts) against the split and score them; `evaluate_run` without the file.

    `options`: the suite options (`specs.SUITE_OPTIONS`: fuzzy_threshold, cd_gate, pc_window, radius_km,
    use_stemmer, grounding_turns), each defaulting to its declaration; checked before anything is loaded.
    `metrics`: the declarations to compute (default `specs.SUITE_METRICS`)."""
    opts = specs.resolve_options(options)
    splits = resolve_splits(split)  # "all": the paper's full-corpus headline over every split
    data_dir = check_data_dir(data_dir, splits=splits)
    opts["scored_turns"] = _scored_turns(data_dir, opts["scored_turns"])
    kb = load_kb(data_dir) if kb is None else kb
    dialogues = list(iter_dialogues(data_dir, splits))
    index = validate_predictions(
        rows,
        dialogues,
        pool=pool,
        split=split,
        known_poi_ids=kb.pois,
        check_pool=check_pool,
        path=predictions_path,
    )
    result = evaluate_predictions(
        dialogues, index, kb, nli=nli, judge=judge, sweeps=sweeps, with_std=with_std, metrics=metrics, **opts
    )
    meta = corpus_meta(data_dir)
    result["versions"] = {
        "corpus": corpus_version(meta),
        "split_sha256": _splits_sha256(data_dir, splits),
        "kb": kb.version,
        "schema": SCHEMA_VERSION,
        "trace_bench": _package_version(),
    }
    predictions: dict[str, Any] = {"rows": len(rows)}
    if predictions_path is not None:
        predictions = {
            "file": Path(predictions_path).name,
            "sha256": sha256_file(predictions_path),
            **predictions,
        }
    result["config"] = {
        "split": split,
        "pool": pool,
        "predictions": predictions,
        "grounding": {
            "fuzzy_threshold": opts["fuzzy_threshold"],
            "cd_gate": opts["cd_gate"],
            "pc_window": opts["pc_window"],
            "turns": opts["grounding_turns"],
        },
        "practical": {"radius_km": opts["radius_km"]},
        "conventions": {
            "budget_word": conventions.BUDGET_RULE,
            "compare_turn_recommends": conventions.COMPARE_TOP_K,
            "compare_hit": opts["compare_hit"],
            "t2r": opts["t2r"],
        },
        "text": {
            "bleu": {"smoothing": text.BLEU_SMOOTHING, "tokenizer": BLEU_TOKENIZER},
            "rouge": {"tokenizer": ROUGE_TOKENIZER, "use_stemmer": opts["use_stemmer"]},
        },
        **result["config"],  # the scored turns (evaluate_predictions)
        "check_pool": check_pool,
        "sweeps": sweeps,
    }
    return {k: result[k] for k in RESULT_ORDER if k in result}


def _scored_turns(data_dir: Path, scored_turns: Any) -> str:
    """The scored turns on `data_dir`: "last" where its period.json says one scored turn per dialogue (a
    blind set's gold, `trace_dataset.release.blind`), unless asked for "all" (refused); else as asked."""
    one_per_dialogue = read_scored_turns(data_dir) is not None
    try:
        return conventions.resolve_scored_turns(one_per_dialogue, scored_turns)
    except ValueError as e:
        raise specs.MetricOptionError(f"{e} ({data_dir / PERIOD_FILE})") from None


def leaderboard_row(result: Mapping[str, Any]) -> dict[str, Any]:
    """A flat dict of a result: every value, `<id>_n`, the aggregates, the counts and the versions."""
    out: dict[str, Any] = dict(result["values"])
    out.update({f"{m}_n": v for m, v in result["n"].items()})
    out.update(result.get("aggregates", {}))
    out.update({f"n_{k}": v for k, v in result["counts"].items()})
    out.update({f"{k}_version": v for k, v in result["versions"].items() if k in ("corpus", "kb")})
    out["split"] = result["config"]["split"]
    out["pool"] = result["config"]["pool"]
    return {k: v for k, v in out.items() if not isinstance(v, dict)}


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("trace-bench")
    except PackageNotFoundError:
        from trace_dataset import __version__

        return __version__
