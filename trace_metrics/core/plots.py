"""PNG plots of a meta-evaluation result: the factor coupling matrices (CoRE Fig. 7) and the per-factor
agreement with human ratings (Fig. 10 / Table 22, with the paper's GPT-4o-mini QWK as reference markers).

Matplotlib's object API only (no pyplot: no global figure registry, safe in server threads); every text is
drawn with `parse_math=False`, so nothing in a label is read as mathtext. PNGs are written atomically, without
the matplotlib version in their metadata, so the same result gives the same bytes.
"""

from __future__ import annotations

import io
import json
import math
import os
from pathlib import Path
from typing import Any

from trace_dataset.io import atomic_open
from trace_metrics.core.prompts import FACTOR_IDS, load_prompts

REFERENCE_FILE = Path(__file__).resolve().parent / "paper_reference.json"
REFERENCE_MODEL = "GPT-4o-mini"
COUPLING_PNG, AGREEMENT_PNG = "core_coupling.png", "core_agreement.png"
_NO_MATH: dict[str, Any] = {"parse_math": False}


def paper_reference() -> dict[str, Any]:
    """The paper's figures (Table 22 QWK, Table 7, §7.1.1 coupling), as shipped in paper_reference.json."""
    return json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))


def _shorts() -> list[str]:
    prompts = load_prompts()
    return [prompts.factor(f).short for f in FACTOR_IDS]


def coupling_figure(result: dict[str, Any]):
    """Heat maps of Kendall tau_b (in percent) between factor scores: CoRE's, and the humans' beside it."""
    import numpy as np
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    panels = [
        (name, result["coupling"][key])
        for name, key in (("CoRE", "core"), ("Human", "human"))
        if result.get("coupling", {}).get(key, {}).get("n_logs")
    ]
    fig = Figure(figsize=(6.2 * max(1, len(panels)), 5.6), dpi=100)
    labels = _shorts()
    if not panels:
        ax = fig.add_subplot()
        ax.axis("off")
        ax.text(0.5, 0.5, "no scores to correlate", ha="center", va="center", **_NO_MATH)
        return fig
    for k, (name, data) in enumerate(panels, start=1):
        ax = fig.add_subplot(1, len(panels), k)
        matrix = np.array([[np.nan if v is None else 100 * v for v in row] for row in data["kendall_tau_b"]])
        cmap = colormaps["RdBu_r"].with_extremes(bad="#dddddd")
        image = ax.imshow(np.ma.masked_invalid(matrix), cmap=cmap, vmin=-100, vmax=100)
        ax.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=8, **_NO_MATH)
        ax.set_yticks(range(len(labels)), labels, fontsize=8, **_NO_MATH)
        for i in range(len(labels)):
            for j in range(len(labels)):
                text = "" if math.isnan(matrix[i, j]) else f"{matrix[i, j]:.0f}"
                ax.text(j, i, text, ha="center", va="center", fontsize=6, **_NO_MATH)
        mean_abs = data.get("mean_abs")
        ax.set_title(
            f"{name}: Kendall tau_b x 100 between factors (n = {data['n_logs']} logs)\n"
            f"mean |tau_b| over defined pairs: {'n/a' if mean_abs is None else f'{mean_abs:.3f}'}",
            fontsize=9,
            **_NO_MATH,
        )
    fig.colorbar(image, ax=fig.axes, shrink=0.8)
    return fig


def agreement_figure(result: dict[str, Any], reference_model: str = REFERENCE_MODEL):
    """Per factor: QWK, Spearman and Kendall tau_b of CoRE against the human ratings; diamonds mark the paper's
    QWK of `reference_model` (ReDial / OpenDialKG, not Trace)."""
    from matplotlib.figure import Figure

    labels = _shorts()
    stats = (
        ("qwk", "QWK", "#1f77b4"),
        ("spearman", "Spearman", "#ff7f0e"),
        ("kendall_tau_b", "Kendall tau_b", "#2ca02c"),
    )
    fig = Figure(figsize=(10, 4.8), dpi=100)
    ax = fig.add_subplot()
    width = 0.26
    for k, (key, name, colour) in enumerate(stats):
        xs, ys = [], []
        for i, f in enumerate(FACTOR_IDS):
            value = result["factors"][f].get(key)
            if value is None:
                ax.text(
                    i + (k - 1) * width,
                    0.02,
                    "n/a",
                    rotation=90,
                    ha="center",
                    va="bottom",
                    fontsize=6,
                    color=colour,
                    **_NO_MATH,
                )
            else:
                xs.append(i + (k - 1) * width)
                ys.append(value)
        ax.bar(xs, ys, width=width, color=colour, label=name)
    reference = paper_reference()["qwk_table22"].get(reference_model, {})
    if reference:
        ax.scatter(
            range(len(FACTOR_IDS)),
            [reference[f] for f in FACTOR_IDS],
            marker="D",
            color="black",
            s=18,
            zorder=3,
            label=f"paper QWK, {reference_model} (movies)",
        )
    ax.axhline(0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(labels)), labels, fontsize=8, **_NO_MATH)
    ax.set_ylim(-1, 1)
    ax.set_ylabel("agreement with human ratings", **_NO_MATH)
    n = [result["factors"][f]["n"] for f in FACTOR_IDS]
    ax.set_title(
        f"CoRE vs human ratings per factor (pairs per factor: {min(n)}-{max(n)}; labels 0-4 for QWK)",
        fontsize=10,
        **_NO_MATH,
    )
    ax.legend(fontsize=8, loc="lower left", ncol=4)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def png_bytes(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def write_png(fig, path: str | os.PathLike) -> Path:
    """Write a figure as PNG, atomically."""
    path = Path(path)
    data = png_bytes(fig)
    with atomic_open(path, "wb") as f:
        f.write(data)
    return path


def write_plots(result: dict[str, Any], folder: str | os.PathLike) -> dict[str, str]:
    """Both plots of a meta-evaluation result, as PNG files in `folder`; returns their paths."""
    folder = Path(folder)
    return {
        "coupling": str(write_png(coupling_figure(result), folder / COUPLING_PNG)),
        "agreement": str(write_png(agreement_figure(result), folder / AGREEMENT_PNG)),
    }


def reliability_figure(report: dict[str, Any]):
    """Per key of a reliability report: 1 - ICC, the order flip rate and |length rho| as bars with their
    intervals (lower is better on all three), the `care` cut point of each as a dashed line."""
    from matplotlib.figure import Figure

    from trace_metrics.lib.reliability import THRESHOLDS

    keys = list(report["keys"])
    panels = (
        ("1 - ICC(1,1)", "icc", lambda e: _flipped(e["repeat"])),
        ("order flip rate", "order_flip_rate", lambda e: _bar(e["order"], "flip_rate")),
        ("|length rho|", "length_rho", lambda e: _bar(e["length"], "spearman", absolute=True)),
    )
    fig = Figure(figsize=(max(6.0, 0.6 * len(keys) + 2), 7.5), dpi=100)
    axes = fig.subplots(len(panels), 1, sharex=True)
    for ax, (label, check, pick) in zip(axes, panels, strict=True):
        bars = [pick(report["keys"][k]) for k in keys]
        for i, (value, low, high) in enumerate(bars):
            if value is None:
                ax.text(i, 0.02, "n/a", ha="center", va="bottom", fontsize=7, **_NO_MATH)
                continue
            ax.bar(i, value, color="#4c72b0", width=0.6)
            if low is not None and high is not None:
                below, above = (
                    max(0.0, value - low),
                    max(0.0, high - value),
                )  # a percentile interval may miss it
                ax.errorbar(i, value, yerr=[[below], [above]], color="black", capsize=2)
        t = THRESHOLDS[check]
        ax.axhline(1 - t.care if check == "icc" else t.care, color="#c44e52", linestyle="--", linewidth=0.8)
        ax.set_ylim(0, max(1.0, *(b[2] or b[0] or 0.0 for b in bars)))
        ax.set_ylabel(label, fontsize=8, **_NO_MATH)
        ax.grid(axis="y", alpha=0.3)
    axes[-1].set_xticks(range(len(keys)), keys, rotation=60, ha="right", fontsize=7, **_NO_MATH)
    judge = report["judge"]
    axes[0].set_title(
        f"{report['kind']} reliability: {judge.get('model')}, {report['n_items']} items, k = {report['k']} "
        "(dashed: the 'usable with care' cut)",
        fontsize=9,
        **_NO_MATH,
    )
    fig.tight_layout()
    return fig


def _bar(section: dict[str, Any], key: str, absolute: bool = False) -> tuple[Any, Any, Any]:
    value, low, high = section.get(key), section.get("ci_low"), section.get("ci_high")
    if value is None or not absolute:
        return value, low, high
    ends = sorted(abs(e) for e in (low, high)) if low is not None and high is not None else [None, None]
    if low is not None and high is not None and low <= 0.0 <= high:
        ends[0] = 0.0
    return abs(value), ends[0], max(ends[1], abs(value)) if ends[1] is not None else None


def _flipped(repeat: dict[str, Any]) -> tuple[Any, Any, Any]:
    icc, low, high = repeat.get("icc"), repeat.get("ci_low"), repeat.get("ci_high")
    if icc is None:
        return None, None, None
    return 1 - icc, (1 - high) if high is not None else None, (1 - low) if low is not None else None
