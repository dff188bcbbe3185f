"""`trace-bench corpus stats DIR`: the dialogue half of the paper's Table 3, plus the multi-reference share.

Definitions (the paper does not spell them out; docs/generator.md says why):
- turns per dialogue: mean and (population) standard deviation of len(turns);
- POIs recommended per dialogue: distinct POIs named by recommend/compare turns;
- rejection rate: reject_and_refine turns / user turns (Table 3's "29.4% rejection turns"; with 10.5 turns per
  dialogue and tier-mandated 1-3 rejections, a share of all turns would be ~15%, a share of user turns ~30%);
  the share of all turns is printed too;
- recommendation turns with alternatives: recommend/compare turns whose acceptable_alternative_poi_ids is
  non-empty (App. S: 60%);
- action shares: each action's turns / all turns (the blind test sets compare them with the public split's).
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from trace_dataset.constants import (
    ACTIONS,
    PRICE_KEYWORDS,
    RECOMMENDATION_ACTIONS,
    REJECTION_ACTION,
    SPLITS,
    TIERS,
)
from trace_dataset.datadir import check_data_dir, iter_dialogues
from trace_dataset.io import TraceDataError

_PRICE_RE = re.compile(r"\b(" + "|".join(re.escape(w) for w in PRICE_KEYWORDS) + r")\b", re.IGNORECASE)

PAPER: dict[str, Any] = {
    "dialogues": 10000,
    "turns_mean": 10.5,
    "turns_sd": 1.9,
    "pois_recommended_mean": 3.3,
    "persona_archetypes": 47,
    "candidates_per_dialogue": 8,
    "rejection_rate": 0.294,
    "tiers": {"Easy": 2481, "Medium": 3476, "Hard": 3063, "Expert": 980},
    "recommendation_turns_with_alternatives": 0.60,
}


def _mean_sd(xs: list[float]) -> tuple[float, float]:
    if not xs:
        return 0.0, 0.0
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def dialogue_stats(dialogues: Iterable[dict[str, Any]]) -> dict[str, Any]:
    n = 0
    lengths: list[float] = []
    recommended: list[float] = []
    candidates: list[float] = []
    splits: Counter = Counter()
    tiers: Counter = Counter()
    personas: Counter = Counter()
    cells: Counter = Counter()
    backends: Counter = Counter()
    actions: Counter = Counter()
    user_turns = all_turns = rejections = rec_turns = with_alt = alt_total = 0
    price_dialogues = 0
    for d in dialogues:
        n += 1
        turns = d["turns"]
        lengths.append(len(turns))
        all_turns += len(turns)
        named: set[str] = set()
        for t in turns:
            actions[t["action"]] += 1
            if t["role"] == "user":
                user_turns += 1
            if t["action"] == REJECTION_ACTION:
                rejections += 1
            if t["action"] in RECOMMENDATION_ACTIONS:
                rec_turns += 1
                named.update(t["referenced_poi_ids"])
                alts = len(t["acceptable_alternative_poi_ids"])
                with_alt += alts > 0
                alt_total += alts
        if any(t["role"] == "user" and _PRICE_RE.search(t["text"]) for t in turns):
            price_dialogues += 1
        recommended.append(len(named))
        candidates.append(len(d["candidate_poi_ids"]))
        splits[d["split"]] += 1
        sc = d["scenario"]
        tiers[sc["difficulty"]] += 1
        personas[sc["persona_type"]] += 1
        cells[f"{sc['city']} x {sc['poi_type']}"] += 1
        backends[d["metadata"]["backend"]] += 1
    tm, tsd = _mean_sd(lengths)
    rm, _ = _mean_sd(recommended)
    cm, _ = _mean_sd(candidates)
    return {
        "dialogues": n,
        "splits": {s: splits[s] for s in SPLITS if splits[s]},
        "turns_mean": round(tm, 3),
        "turns_sd": round(tsd, 3),
        "turns_min": int(min(lengths)) if lengths else 0,
        "turns_max": int(max(lengths)) if lengths else 0,
        "pois_recommended_mean": round(rm, 3),
        "candidates_per_dialogue": round(cm, 3),
        "persona_archetypes": len(personas),
        "rejection_turns": rejections,
        "rejection_rate": round(rejections / user_turns, 4) if user_turns else 0.0,
        "rejection_share_of_all_turns": round(rejections / all_turns, 4) if all_turns else 0.0,
        "rejections_per_dialogue": round(rejections / n, 3) if n else 0.0,
        "tiers": {t: tiers[t] for t in TIERS},
        "tier_shares": {t: round(tiers[t] / n, 4) if n else 0.0 for t in TIERS},
        "recommendation_turns": rec_turns,
        "recommendation_turns_with_alternatives": round(with_alt / rec_turns, 4) if rec_turns else 0.0,
        "alternatives_per_recommendation_turn": round(alt_total / rec_turns, 3) if rec_turns else 0.0,
        "dialogues_with_price_words": round(price_dialogues / n, 4) if n else 0.0,
        "actions": {a: actions[a] for a in ACTIONS},
        "action_shares": {a: round(actions[a] / all_turns, 4) if all_turns else 0.0 for a in ACTIONS},
        "cells": dict(sorted(cells.items())),
        "personas": dict(personas.most_common()),
        "backends": dict(sorted(backends.items())),
    }


def corpus_stats(data_dir: str | os.PathLike, splits: Iterable[str] | None = None) -> dict[str, Any]:
    splits = tuple(splits) if splits is not None else SPLITS
    check_data_dir(data_dir, splits)
    current: list[Any] = [None]

    def tracked() -> Iterable[dict[str, Any]]:
        for d in iter_dialogues(data_dir, splits):
            current[0] = d.get("dialogue_id")
            yield d

    try:
        return dialogue_stats(tracked())
    except (KeyError, TypeError, AttributeError) as e:  # a record without the fields the statistics read
        raise TraceDataError(
            f"dialogue {current[0]!r}: malformed record ({type(e).__name__}: {e}); expected the "
            "fields of schema.DIALOGUE_FEATURES",
            path=data_dir,
        ) from None


def format_stats(s: dict[str, Any]) -> str:
    """Table 3 (dialogue side) with the paper's values beside ours."""
    p = PAPER
    n = s["dialogues"] or 1
    rows = [
        ("Total dialogues", f"{s['dialogues']:,}", f"{p['dialogues']:,}"),
        ("Splits (train/val/test)", "/".join(str(s["splits"].get(x, 0)) for x in SPLITS), "70/15/15 %"),
        (
            "Avg. turns / dialogue",
            f"{s['turns_mean']:.1f} (±{s['turns_sd']:.1f}), range {s['turns_min']}-{s['turns_max']}",
            f"{p['turns_mean']} (±{p['turns_sd']})",
        ),
        ("Avg. POIs rec. / dialogue", f"{s['pois_recommended_mean']:.1f}", f"{p['pois_recommended_mean']}"),
        ("Persona archetypes", str(s["persona_archetypes"]), str(p["persona_archetypes"])),
        ("Candidates / dialogue", f"{s['candidates_per_dialogue']:g}", str(p["candidates_per_dialogue"])),
        ("Rejection rate (of user turns)", f"{s['rejection_rate']:.1%}", f"{p['rejection_rate']:.1%}"),
        ("  rejection turns (of all turns)", f"{s['rejection_share_of_all_turns']:.1%}", ""),
        (
            "Difficulty E / M / H / Expert",
            " / ".join(f"{s['tiers'][t]:,}" for t in TIERS),
            " / ".join(f"{v:,}" for v in p["tiers"].values()),
        ),
        ("  shares", " / ".join(f"{s['tiers'][t] / n:.1%}" for t in TIERS), "24.8 / 34.8 / 30.6 / 9.8 %"),
        (
            "Rec. turns with alternatives",
            f"{s['recommendation_turns_with_alternatives']:.1%} of {s['recommendation_turns']:,}",
            f"{p['recommendation_turns_with_alternatives']:.0%} of 32,475",
        ),
        ("Dialogues with a price word", f"{s['dialogues_with_price_words']:.1%}", "62%"),
    ]
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    lines = [f"{'statistic':<{w0}}  {'this corpus':<{w1}}  paper (Table 3 / App. S)", "-" * (w0 + w1 + 30)]
    lines += [f"{a:<{w0}}  {b:<{w1}}  {c}" for a, b, c in rows]
    return "\n".join(lines)
