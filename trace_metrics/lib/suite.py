"""Everything at once: a data directory + a predictions file -> the leaderboard row (`trace_suite`).

`evaluate_run` loads and validates, `evaluate_predictions` scores in memory (what the benchmark times). The
result holds every metric value with its n, per-item values with dialogue ids (for the statistics), per-item
standard deviations, the corpus and knowledge-base versions and the configuration. The NLI model and the LLM
judge (`entailment` and `judge`) run only when asked.

Every value is the mean of its per-item values (`per_item[group][id]`, None = undefined, left out), except
`cgs` and `cgs_ent`, the CGS formula applied to the means of their components (`specs.MetricSpec.components`),
whose per-turn counterparts are `cgs_turn_mean` and `cgs_ent_turn_mean`. Grounding metrics live in the
`recommendation_turns` group, or in `system_turns` with `grounding_turns="system"`.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import logging
import operator
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from trace_dataset.constants import RECOMMENDATION_ACTIONS, REVIEWS_FILE, SCHEMA_VERSION, resolve_splits
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
from trace_metrics.lib import (
    accuracy,
    conventions,
    grounding,
    practical,
    recovery,
    selection,
    suite_optional,
    sweeps,
    text,
)
from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.conventions import (
    DEFAULT_COMPARE_HIT,
    DEFAULT_GROUNDING_TURNS,
    DEFAULT_T2R,
    CompareHit,
    GroundingTurns,
    T2RReading,
    check_compare_hit,
    check_grounding_turns,
    check_t2r,
)
from trace_metrics.lib.grounding import DEFAULT_CD_GATE, DEFAULT_FUZZY_THRESHOLD, DEFAULT_PC_WINDOW, Threshold
from trace_metrics.lib.practical import DEFAULT_RADIUS_KM, PoiPoint, spatial_id
from trace_metrics.lib.predictions import load_predictions, validate_predictions
from trace_metrics.lib.tokenize import BLEU_TOKENIZER, ROUGE_TOKENIZER

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------------------
# Knowledge-base lookups
# ---------------------------------------------------------------------------------------------------
class Sources:
    """Review texts by citation label, with the counts the result reports."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self.unknown_review_ids: set[str] = set()

    def for_citations(self, citations: Mapping[str, str]) -> list[str | None]:
        """`out[n-1]` = text of the review label Rn cites; None for a hole or an unknown review."""
        if not citations:
            return []
        numbered = {int(label[1:]): rid for label, rid in citations.items()}
        out: list[str | None] = [None] * max(numbered)
        reviews = self.kb.reviews
        for n, rid in numbered.items():
            review = reviews.get(rid)
            if review is None:
                self.unknown_review_ids.add(rid)
                continue
            if review.text is None:
                raise TraceDataError(
                    f"review {rid!r} has no text: the knowledge base is not hydrated; run `trace-bench corpus "
                    "hydrate` and evaluate the hydrated directory",
                    path=self.kb.root,
                )
            out[n - 1] = review.text
        return out


def _points(kb: KnowledgeBase, ids: Sequence[str], cache: dict[str, PoiPoint]) -> list[PoiPoint]:
    out = []
    for pid in ids:
        pt = cache.get(pid)
        if pt is None:
            poi = kb.pois.get(pid)
            if poi is None:
                raise TraceDataError(f"recommended POI {pid!r} is not in the knowledge base", path=kb.root)
            pt = cache[pid] = PoiPoint(poi.latitude, poi.longitude, poi.price, poi.poi_type)
        out.append(pt)
    return out


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


def evaluate_predictions(
    dialogues: Sequence[dict],
    predictions: Mapping[tuple[str, int], dict],
    kb: KnowledgeBase,
    *,
    fuzzy_threshold: Threshold = DEFAULT_FUZZY_THRESHOLD,
    cd_gate: float = DEFAULT_CD_GATE,
    pc_window: float = DEFAULT_PC_WINDOW,
    radius_km: float = DEFAULT_RADIUS_KM,
    rouge_stemmer: bool = False,
    nli: Any = None,
    judge: Any = None,
    run_sweeps: bool = False,
    with_std: bool = True,
    grounding_turns: GroundingTurns = DEFAULT_GROUNDING_TURNS,
    compare_hit: CompareHit = DEFAULT_COMPARE_HIT,
    t2r: T2RReading = DEFAULT_T2R,
) -> dict:
    """Score validated predictions ({(dialogue_id, turn_id): row}) against `dialogues`; see `evaluate_run`."""
    grounding.check_parameters(fuzzy_threshold, cd_gate, pc_window)
    check_grounding_turns(grounding_turns)
    check_compare_hit(compare_hit)
    check_t2r(t2r)
    with _cyclic_gc_paused(nli is None and judge is None):
        return _evaluate_predictions(
            dialogues, predictions, kb, fuzzy_threshold=fuzzy_threshold, cd_gate=cd_gate, pc_window=pc_window,
            radius_km=radius_km, rouge_stemmer=rouge_stemmer, nli=nli, judge=judge, run_sweeps=run_sweeps,
            with_std=with_std, grounding_turns=grounding_turns, compare_hit=compare_hit, t2r=t2r,
        )  # fmt: skip


def _evaluate_predictions(
    dialogues: Sequence[dict],
    predictions: Mapping[tuple[str, int], dict],
    kb: KnowledgeBase,
    *,
    fuzzy_threshold: Threshold,
    cd_gate: float,
    pc_window: float,
    radius_km: float,
    rouge_stemmer: bool,
    nli: Any,
    judge: Any,
    run_sweeps: bool,
    with_std: bool,
    grounding_turns: GroundingTurns,
    compare_hit: CompareHit,
    t2r: T2RReading,
) -> dict:
    joined = selection.join(dialogues, predictions)
    values: dict[str, float | None] = {}
    n: dict[str, int] = {}
    per_item: dict[str, dict[str, list]] = {}

    # -- recommendation turns: accuracy + grounding ---------------------------------------------------
    rec = selection.recommendation_turns(joined)
    sources = Sources(kb)
    acc_ids = accuracy.ACCURACY_IDS + accuracy.MULTI_REFERENCE_IDS
    pick = operator.itemgetter(*acc_ids)
    no_gold = (None,) * len(acc_ids)
    acc_rows = [
        pick(accuracy.turn_scores(t.ranked, t.gold, t.alternatives)) if t.gold else no_gold for t in rec
    ]
    columns = list(zip(*acc_rows, strict=True)) if acc_rows else [()] * len(acc_ids)
    acc: dict[str, list[float | None]] = {m: list(c) for m, c in zip(acc_ids, columns, strict=True)}
    rec_items: dict[str, list] = {"dialogue_id": [t.dialogue_id for t in rec], "turn_id": [t.turn_id for t in rec]}
    sys_turns = selection.system_turns(joined)
    sys_items: dict[str, list] = {"dialogue_id": [t.dialogue_id for t in sys_turns],
                                  "turn_id": [t.turn_id for t in sys_turns]}  # fmt: skip
    g_sys = grounding_turns == "system"  # every system turn (Table 20's n), with App. J's PC rule for the others
    g_turns, g_items = (sys_turns, sys_items) if g_sys else (rec, rec_items)
    g_recommending = [t.action in RECOMMENDATION_ACTIONS for t in sys_turns] if g_sys else None
    label_sources = [sources.for_citations(t.citations) for t in g_turns]  # also for the NLI model
    analyse = grounding.analyse
    analyses = [analyse(t.response, src) for t, src in zip(g_turns, label_sources, strict=True)]
    g = grounding.aggregate(analyses, fuzzy_threshold, cd_gate, pc_window, return_per_item=True,
                            recommending=g_recommending)  # fmt: skip
    for m in acc_ids:
        values[m] = mean_or_none(acc[m])
        n[m] = sum(v is not None for v in acc[m])
        rec_items[m] = acc[m]
    for m in ("grounding_score", "citation_density", "provenance_coverage"):
        values[m] = g[m]
        g_items[m] = g[f"{m}_per_item"]
        n[m] = sum(v is not None for v in g_items[m])
    values["cgs"], values["cgs_turn_mean"], g_items["cgs_turn_mean"] = g["cgs"], g["cgs_turn_mean"], g["cgs_per_item"]
    n["cgs"] = n["cgs_turn_mean"] = g["n"]
    extra: dict[str, Any] = {}
    models: dict[str, Any] = {}
    if nli is not None:
        ent, ent_raw, models["nli"] = suite_optional.run_nli(nli, [t.response for t in g_turns], label_sources)
        pc_vacuous = [1.0 if p is None else p for p in g["provenance_coverage_per_item"]]
        cgs_ent = grounding.composite(ent, g["citation_density_per_item"], pc_vacuous, cd_gate).tolist() if ent else []
        values["entailment"], n["entailment"], g_items["entailment"] = mean_or_none(ent), len(ent), ent
        values["cgs_ent"] = grounding.of_means(values["entailment"], values["citation_density"],
                                               values["provenance_coverage"], cd_gate)  # fmt: skip
        values["cgs_ent_turn_mean"] = mean_or_none(cgs_ent)
        n["cgs_ent"] = n["cgs_ent_turn_mean"] = len(cgs_ent)
        g_items["cgs_ent_turn_mean"] = cgs_ent
        if run_sweeps:
            entail = suite_optional.import_optional("entailment", "the NLI threshold sweep")
            extra["nli_threshold_sweep"] = {
                f"{th:g}": mean_or_none(entail.rescore(ent_raw, th))
                for th in getattr(entail, "THRESHOLD_SWEEP", (0.3, 0.4, 0.5, 0.6, 0.7))
            }
    if judge is not None:
        by_id = {d["dialogue_id"]: d for d in dialogues}
        rec_sources = label_sources if g_turns is rec else [sources.for_citations(t.citations) for t in rec]
        scales, _raw, models["judge"] = suite_optional.run_judge(judge, rec, by_id, rec_sources)
        for m, vals in scales.items():
            values[m], n[m], rec_items[m] = mean_or_none(vals), sum(v is not None for v in vals), vals
    per_item["recommendation_turns"] = rec_items

    # -- all system turns: text -----------------------------------------------------------------------
    bleu, rouge = text.score_pairs(
        [t.response for t in sys_turns], [t.reference_text for t in sys_turns], rouge_stemmer
    )
    values["bleu4"], values["rouge_l"] = mean_or_none(bleu), mean_or_none(rouge)
    n["bleu4"] = n["rouge_l"] = len(sys_turns)
    sys_items["bleu4"], sys_items["rouge_l"] = bleu, rouge
    per_item["system_turns"] = sys_items

    # -- dialogues: practical value + recovery --------------------------------------------------------
    cache: dict[str, PoiPoint] = {}
    sid = spatial_id(radius_km)
    dlg: dict[str, list] = {"dialogue_id": [], sid: [], "route_efficiency_km": [], "price_alignment": [],
                            "itinerary_diversity": [], "tsr": [], "t2r": []}  # fmt: skip
    distances: list[list[float]] = []
    episodes: dict[str, list] = {"dialogue_id": [], "turn_id": [], "rejection_recovery": []}
    without_followup = 0
    ceilings: list[int | None] = []
    for d, src_dialogue in zip(joined, dialogues, strict=True):
        pts = _points(kb, selection.recommended_pois(d.system_turns, kb.review_business), cache)
        ceiling = practical.price_ceiling(d.user_texts)
        ceilings.append(ceiling)
        ds = practical.pair_distances(pts)
        distances.append(ds)
        dlg["dialogue_id"].append(d.dialogue_id)
        dlg[sid].append(practical.coherence_from_distances(ds, radius_km))
        dlg["route_efficiency_km"].append(practical.route_length_km(pts))
        dlg["price_alignment"].append(practical.price_alignment(pts, ceiling))
        dlg["itinerary_diversity"].append(practical.itinerary_diversity(pts))
        turns = selection.recovery_turns(d, compare_hit)
        dlg["tsr"].append(recovery.task_success(turns))
        first_hit = recovery.turns_to_first_hit(turns, t2r)
        dlg["t2r"].append(None if first_hit is None else float(first_hit))
        for idx, hit in recovery.rejection_episodes(turns):
            if hit is None:
                without_followup += 1
                continue
            episodes["dialogue_id"].append(d.dialogue_id)
            episodes["turn_id"].append(src_dialogue["turns"][idx]["turn_id"])
            episodes["rejection_recovery"].append(1.0 if hit else 0.0)
    for m in (sid, "route_efficiency_km", "price_alignment", "itinerary_diversity", "tsr", "t2r"):
        values[m] = mean_or_none(dlg[m])
        n[m] = sum(v is not None for v in dlg[m])
    values["rejection_recovery"] = mean_or_none(episodes["rejection_recovery"])
    n["rejection_recovery"] = len(episodes["rejection_recovery"])
    per_item["dialogues"] = dlg
    per_item["rejection_episodes"] = episodes

    result: dict[str, Any] = {
        "values": values,
        "n": n,
        "aggregates": extra,
        "counts": {
            "dialogues": len(joined),
            "system_turns": len(sys_turns),
            "recommendation_turns": len(rec),
            "recommendation_turns_without_gold": sum(1 for t in rec if not t.gold),
            "rejection_episodes": len(episodes["rejection_recovery"]) + without_followup,
            "rejection_episodes_without_followup": without_followup,
            "quotes": g["n_quotes"],
            "unresolved_labels": g["n_unresolved_labels"],
            "unknown_review_ids": len(sources.unknown_review_ids),
            "dialogues_with_budget": sum(1 for c in ceilings if c is not None),
        },
        "models": models,
        "per_item": per_item,
    }
    if sources.unknown_review_ids:
        log.warning(
            "%d cited review id(s) are not in the knowledge base (first: %s); their quotes count as unsupported",
            len(sources.unknown_review_ids),
            sorted(sources.unknown_review_ids)[:3],
        )
    if with_std:
        try:
            result["std"] = suite_optional.item_stds(per_item, tuple(values))
        except RuntimeError as e:
            log.warning("no standard deviations in this result: %s", e)
            result["std_unavailable"] = str(e)
    if run_sweeps:
        result["sweeps"] = {
            **sweeps.grounding_sweeps(analyses, fuzzy_threshold, cd_gate, pc_window),
            "spatial_radius_km": sweeps.spatial_sweep(distances),
        }
    return result


def evaluate_run(
    data_dir: str | os.PathLike,
    predictions_path: str | os.PathLike,
    split: str = "test",
    pool: str = "closed",
    nli: Any = None,
    judge: Any = None,
    **options: Any,
) -> dict:
    """The leaderboard row of one predictions file on one split and pool of a Trace data directory.

    Returns {"values", "n", "std", "aggregates", "counts", "versions", "config", "models", "run"?, "sweeps"?,
    "per_item"}. `nli`: an NLI model id/path or an `entailment.NLIScorer`; `judge`: an LLM spec or a loaded
    LLM. `options`: those of `evaluate_rows`.
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


RESULT_ORDER = ("values", "n", "std", "std_unavailable", "aggregates", "counts", "versions", "config", "models", "run",
                "sweeps", "per_item")  # fmt: skip


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
    nli: Any = None,
    judge: Any = None,
    *,
    fuzzy_threshold: Threshold = DEFAULT_FUZZY_THRESHOLD,
    cd_gate: float = DEFAULT_CD_GATE,
    pc_window: float = DEFAULT_PC_WINDOW,
    radius_km: float = DEFAULT_RADIUS_KM,
    rouge_stemmer: bool = False,
    sweeps: bool = False,
    check_pool: bool = True,
    with_std: bool = True,
    grounding_turns: GroundingTurns = DEFAULT_GROUNDING_TURNS,
    compare_hit: CompareHit = DEFAULT_COMPARE_HIT,
    t2r: T2RReading = DEFAULT_T2R,
    kb: KnowledgeBase | None = None,
    predictions_path: str | os.PathLike | None = None,
) -> dict:
    """Validate prediction rows (dicts) against the split and score them; `evaluate_run` without the file."""
    splits = resolve_splits(split)  # "all": the paper's full-corpus headline over every split
    data_dir = check_data_dir(data_dir, splits=splits)
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
        dialogues, index, kb, fuzzy_threshold=fuzzy_threshold, cd_gate=cd_gate, pc_window=pc_window,
        radius_km=radius_km, rouge_stemmer=rouge_stemmer, nli=nli, judge=judge, run_sweeps=sweeps, with_std=with_std,
        grounding_turns=grounding_turns, compare_hit=compare_hit, t2r=t2r,
    )  # fmt: skip
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
        "grounding": {"fuzzy_threshold": fuzzy_threshold, "cd_gate": cd_gate, "pc_window": pc_window,
                      "turns": grounding_turns},  # fmt: skip
        "practical": {"radius_km": radius_km},
        "conventions": {"budget_word": conventions.BUDGET_RULE, "compare_turn_recommends": conventions.COMPARE_TOP_K,
                        "compare_hit": compare_hit, "t2r": t2r},
        "text": {
            "bleu": {"smoothing": text.BLEU_SMOOTHING, "tokenizer": BLEU_TOKENIZER},
            "rouge": {"tokenizer": ROUGE_TOKENIZER, "use_stemmer": rouge_stemmer},
        },
        "check_pool": check_pool,
        "sweeps": sweeps,
    }
    return {k: result[k] for k in RESULT_ORDER if k in result}


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
