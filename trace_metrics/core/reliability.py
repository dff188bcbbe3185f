"""The reliability report of a judge's ratings (CoRE or the LLM judge): repeats, order, length, family, humans.

`build_report(subject, k, ...)` re-rates the subject's items (`rerate.Subject`) and computes, per key (a CoRE
factor, `factor_mean`, `overall`; a judge scale):
    repeat   k ratings per item (repeat 0 the run's own): share of identical ratings, ICC(1,1)
    order    the ratings of the reversed presentation against repeat 0: flip rate
    length   Spearman rho of rating against response length, and the length-controlled score per system
    human    (CoRE, with a human ratings file) `meta.meta_evaluate`'s per-factor agreement (QWK)
    verdicts each check graded by `trace_metrics.lib.reliability.grade`, and the key's `verdict`: the worst
The self-preference section flags the rows whose rated system's model shares the judge's family
(`lib.reliability.families`). Statistics: `trace_metrics.lib.reliability.checks`; the checks and their
thresholds are explained in docs/metrics_models.md ("Reliability").

Output folder (`write_report`): reliability.json (the report, deterministic), reliability.md (the summary),
reliability.png (per key, the flip rate, 1 - identical share and |rho| against their cut points).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trace_dataset.constants import SEED
from trace_metrics.core.rerate import Ratings, Subject
from trace_metrics.lib.reliability import THRESHOLDS, grade, worst
from trace_metrics.lib.reliability.checks import flip_rate, length_bias, repeat_consistency
from trace_metrics.lib.reliability.families import family_of

if TYPE_CHECKING:
    from trace_llm import LLM

log = logging.getLogger(__name__)

REPORT_JSON, REPORT_MD, REPORT_PNG = "reliability.json", "reliability.md", "reliability.png"
DEFAULT_K = 3
MIN_K = 2  # repeat consistency needs two ratings per item (the CLI's --k and reproduce's reliability.k)
RELIABILITY_DIR = "reliability"  # where a CoRE run keeps its report (`core reliability` default --out)
CHECKS: tuple[str, ...] = ("icc", "identical_share", "order_flip_rate", "length_rho", "kappa")


def _interval(
    section: Mapping[str, Any], low: str = "ci_low", high: str = "ci_high"
) -> tuple[float, float] | None:
    a, b = section.get(low), section.get(high)
    return (a, b) if a is not None and b is not None else None


def key_verdicts(entry: Mapping[str, Any]) -> dict[str, str | None]:
    """Each check of one key graded (None: not measured)."""
    repeat, order, length = entry["repeat"], entry["order"], entry["length"]
    out = {
        "icc": grade("icc", repeat["icc"], _interval(repeat)),
        "identical_share": grade("identical_share", repeat["identical_share"], repeat["identical_ci"]),
        "order_flip_rate": grade("order_flip_rate", order["flip_rate"], _interval(order)),
        "length_rho": grade("length_rho", length["spearman"], _interval(length)),
    }
    human = entry.get("human")
    out["kappa"] = grade("kappa", human.get("qwk")) if human else None
    return out


def self_preference(subject: Subject, judge_model: str | None, models: Mapping[str, str | None]) -> dict:
    """The judge's family, each rated system's, and the rows (item ids) where they are the same."""
    judge_family = family_of(judge_model)
    systems = {}
    for name in sorted(set(subject.systems)):
        model = models.get(name)
        family = family_of(model)
        systems[name] = {"model": model, "family": family, "shared": bool(family and family == judge_family)}
    rows = [i for i, s in zip(subject.ids, subject.systems, strict=True) if systems[s]["shared"]]
    return {
        "judge_model": judge_model,
        "judge_family": judge_family,
        "flag": bool(rows),
        "systems": systems,
        "rows": rows,
    }


def _column(ratings: Ratings, key: str) -> list[float | None]:
    return [r.get(key) for r in ratings]


def _human_section(subject: Subject, human: str | os.PathLike | None) -> dict[str, Any] | None:
    """`core meta` on the subject's stored CoRE scores against the human file (one computation: meta.py)."""
    if human is None:
        return None
    if subject.kind != "core" or subject.stored is None:
        raise ValueError("human ratings are compared with CoRE runs only (the rows of `core human`)")
    from trace_metrics.core.meta import HUMAN_KEYS, load_scores, meta_evaluate

    core = {(i, k): v for i, r in zip(subject.ids, subject.stored, strict=True) for k, v in r.items()}
    people, people_systems = load_scores(human, HUMAN_KEYS)
    return meta_evaluate(
        core, people, {**people_systems, **dict(zip(subject.ids, subject.systems, strict=True))}
    )


def build_report(
    subject: Subject,
    k: int = DEFAULT_K,
    *,
    judge: Mapping[str, Any],
    system_models: Mapping[str, str | None] | None = None,
    human: str | os.PathLike | None = None,
    seed: int = SEED,
) -> dict[str, Any]:
    """The report (module docstring). `judge`: the judge LLM's `describe()`."""
    from tqdm.auto import tqdm

    if isinstance(k, bool) or not isinstance(k, int) or k < MIN_K:
        raise ValueError(f"k={k!r}; expected an integer >= {MIN_K} (repeats need two ratings per item)")
    repeats: list[Ratings] = []
    with tqdm(total=k + 1, desc=f"{subject.kind} reliability", unit="pass") as bar:
        for r in range(k):
            if r == 0 and subject.stored is not None:
                repeats.append(subject.stored)
            else:
                repeats.append(subject.rate(r, False))
            bar.update(1)
        reversed_ratings = subject.rate(0, True)
        bar.update(1)
    human_result = _human_section(subject, human)
    keys: dict[str, Any] = {}
    for key in subject.keys:
        entry: dict[str, Any] = {
            "repeat": repeat_consistency(
                [[rep[i].get(key) for rep in repeats] for i in range(len(subject.ids))]
            ),
            "order": flip_rate(_column(repeats[0], key), _column(reversed_ratings, key)),
            "length": length_bias(_column(repeats[0], key), subject.lengths, subject.systems, seed=seed),
            "human": (human_result or {}).get("factors", {}).get(key) if human_result else None,
        }
        entry["verdicts"] = key_verdicts(entry)
        entry["verdict"] = worst(entry["verdicts"].values())
        keys[key] = entry
    return {
        "kind": subject.kind,
        "k": k,
        "seed": seed,
        "judge": {name: judge.get(name) for name in ("backend", "model", "settings")},
        "source": subject.source,
        "n_items": len(subject.ids),
        "systems": sorted(set(subject.systems)),
        "keys": keys,
        "self_preference": self_preference(subject, judge.get("model"), system_models or {}),
        "human": human_result,
        "ratings": {"ids": list(subject.ids), "repeats": repeats, "reversed": reversed_ratings},
        "thresholds": {c: _threshold(c) for c in CHECKS},
    }


def _threshold(check: str) -> dict[str, Any]:
    t = THRESHOLDS[check]
    return {
        "reliable": t.reliable,
        "care": t.care,
        "higher_is_better": t.higher_is_better,
        "source": t.source,
    }


def run_report(
    llm: LLM,
    subject: Subject,
    out_dir: str | os.PathLike,
    k: int = DEFAULT_K,
    *,
    predictions: Sequence[str | os.PathLike] = (),
    human: str | os.PathLike | None = None,
) -> dict[str, Any]:
    """Build the report with `llm` as the judge and write it to `out_dir`; returns the report."""
    from trace_metrics.core.rerate import system_models

    report = build_report(
        subject, k, judge=llm.describe(), system_models=system_models(predictions), human=human
    )
    write_report(report, out_dir)
    return report


def write_report(report: dict[str, Any], out_dir: str | os.PathLike) -> dict[str, str]:
    """reliability.json, reliability.md and reliability.png in `out_dir`, each written atomically."""
    from trace_dataset.io import write_json, write_text
    from trace_metrics.core.plots import reliability_figure, write_png
    from trace_metrics.core.report import format_reliability

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / REPORT_JSON, report)
    write_text(out / REPORT_MD, format_reliability(report, markdown=True) + "\n")
    write_png(reliability_figure(report), out / REPORT_PNG)
    log.info("wrote the %s reliability report to %s", report["kind"], out)
    return {name: os.fspath(out / name) for name in (REPORT_JSON, REPORT_MD, REPORT_PNG)}


def read_verdicts(folder: str | os.PathLike) -> dict[str, dict[str, Any]] | None:
    """key -> {"verdict", "title"} of the report in `folder` (a CoRE run's `reliability/` or the report's own
    folder), for the tables that show the verdict beside each factor; None when there is none."""
    from trace_dataset.io import read_json

    path = Path(folder) / REPORT_JSON
    if not path.is_file():
        path = Path(folder) / RELIABILITY_DIR / REPORT_JSON
    if not path.is_file():
        return None
    report = read_json(path)
    return {key: {"verdict": e.get("verdict"), "title": figures_line(e)} for key, e in report["keys"].items()}


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def figures_line(entry: Mapping[str, Any]) -> str:
    """One line of a key's figures: the hover text of a verdict."""
    repeat, order, length = entry["repeat"], entry["order"], entry["length"]
    parts = [
        f"ICC(1,1) {_fmt(repeat['icc'])} [{_fmt(repeat['ci_low'])}, {_fmt(repeat['ci_high'])}]",
        f"identical {_fmt(repeat['identical_share'])}",
        f"order flips {_fmt(order['flip_rate'])} [{_fmt(order['ci_low'])}, {_fmt(order['ci_high'])}]",
        f"length rho {_fmt(length['spearman'])} [{_fmt(length['ci_low'])}, {_fmt(length['ci_high'])}]",
    ]
    human = entry.get("human")
    if human:
        parts.append(f"QWK {_fmt(human.get('qwk'))}")
    return "; ".join(parts)
