"""The Space's CoRE tab: agreement of CoRE's LLM ratings with human ratings, from a meta-evaluation result file
(`trace-bench core meta --scores ... --human ... --out FILE`), named by the setting TRACE_SPACE_CORE_META.

Shows the per-factor agreement table (with the CoRE paper's GPT-4o-mini QWK as reference), the overall and
system-ranking agreement, and the two plots of `trace_metrics.core.plots` (factor coupling, per-factor
agreement). Everything read from the file is shown as data (Dataframe cells, plain text boxes), never as
Markdown or HTML, and the plots draw no text from it. The file is read by a pure function on every refresh.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CORE_META_ENV = "TRACE_SPACE_CORE_META"
INTRO = (
    "### CoRE: how far to trust the LLM's ratings\n"
    "CoRE (Chen et al., 2026) rates each conversation on twelve user-centric factors (0-4) and debates an "
    "overall score (0-100). This tab compares those ratings with human ratings of the same logs: quadratic "
    "weighted kappa over the labels 0-4, Spearman and Kendall tau_b per factor, the debate's overall score, "
    "factor coupling and the agreement of system rankings. Reference: the paper's GPT-4o-mini reached QWK "
    "0.20-0.73 per factor and Spearman 0.698 for the debated overall score on movie dialogues (not Trace)."
)
FRAME_COLUMNS = ("Factor", "n", "CoRE missing", "QWK", "Spearman", "Kendall tau_b", "Paper QWK (GPT-4o-mini)")


def core_meta_path(env: Mapping[str, str] | None = None) -> Path | None:
    """The meta-evaluation result file the Space shows (TRACE_SPACE_CORE_META), or None."""
    value = (os.environ if env is None else env).get(CORE_META_ENV)
    return Path(value) if value else None


def load_meta(path: Path | None) -> tuple[dict[str, Any] | None, str]:
    """(result, status message); result is None when there is nothing to show, the message says why."""
    from trace_dataset.io import TraceDataError, read_json

    if path is None:
        return None, f"No meta-evaluation result configured ({CORE_META_ENV})."
    try:
        result = read_json(path)
        if not isinstance(result, dict) or not isinstance(result.get("factors"), dict):
            raise TraceDataError("not a CoRE meta-evaluation result (no 'factors')", path=path)
    except (TraceDataError, OSError) as e:
        log.warning("CoRE tab: %s", e)
        return None, f"Cannot show the CoRE meta-evaluation: {e}"
    n = result.get("n", {})
    return result, f"{n.get('shared_logs', '?')} conversation logs rated by both CoRE and humans."


def _round(x: Any) -> float | None:
    return None if x is None else round(float(x), 3)


def agreement_frame(result: Mapping[str, Any]):
    """One row per factor, then pooled and the two overall rows (values as numbers, names as plain strings)."""
    import pandas as pd

    from trace_metrics.core.plots import REFERENCE_MODEL, paper_reference

    reference = paper_reference()["qwk_table22"][REFERENCE_MODEL]
    rows = []
    for factor, s in result["factors"].items():
        rows.append([str(factor), s.get("n"), s.get("n_missing_core"), _round(s.get("qwk")), _round(s.get("spearman")),
                     _round(s.get("kendall_tau_b")), reference.get(factor)])  # fmt: skip
    pooled = result.get("pooled") or {}
    rows.append(["pooled (all factors)", pooled.get("n"), None, _round(pooled.get("qwk")),
                 _round(pooled.get("spearman")), _round(pooled.get("kendall_tau_b")), None])  # fmt: skip
    for name, label in (
        ("multi_agent", "overall: debate (paper 0.698 / 0.538)"),
        ("factor_mean", "overall: factor mean"),
    ):
        s = (result.get("overall") or {}).get(name) or {}
        rows.append([label, s.get("n"), s.get("n_missing_core"), None, _round(s.get("spearman")),
                     _round(s.get("kendall_tau_b")), None])  # fmt: skip
    return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))


def ranking_frame(result: Mapping[str, Any]):
    """System means (CoRE overall and human overall) and the Kendall tau_b between the two orderings."""
    import pandas as pd

    rank = (result.get("ranking") or {}).get("overall") or {}
    rows = [[str(s), _round(rank.get("core_means", {}).get(s)), _round(rank.get("human_means", {}).get(s)),
             rank.get("n_logs", {}).get(s)] for s in rank.get("systems", [])]  # fmt: skip
    return pd.DataFrame(rows, columns=["System", "CoRE overall (mean)", "Human overall (mean)", "Logs"])


def build_core_tab(gr, meta_path: Path | None) -> None:
    """Add the tab's components to the open `gr.Tab` context."""
    from trace_metrics.core.plots import agreement_figure, coupling_figure

    def view():
        result, message = load_meta(meta_path)
        if result is None:
            return (message, None, None, None, None, "")
        rank = (result.get("ranking") or {}).get("overall") or {}
        tau = rank.get("kendall_tau_b")
        text = "System ranking agreement (overall, Kendall tau_b): " + (
            "n/a" if tau is None else f"{tau:.3f}"
        )
        return (message, agreement_frame(result), ranking_frame(result), coupling_figure(result),
                agreement_figure(result), text)  # fmt: skip

    message, frame, systems, coupling_fig, agreement_fig, rank_text = view()
    gr.Markdown(INTRO)
    status = gr.Textbox(value=message, label="Meta-evaluation", interactive=False, elem_id="core-status")
    table = gr.Dataframe(value=frame, label="Agreement with human ratings", interactive=False, wrap=True,
                         elem_id="core-agreement")  # fmt: skip
    agreement = gr.Plot(
        value=agreement_fig, label="Per-factor agreement", format="png", elem_id="core-agreement-plot"
    )
    coupling = gr.Plot(value=coupling_fig, label="Factor coupling (Kendall tau_b)", format="png",
                       elem_id="core-coupling-plot")  # fmt: skip
    ranking_text = gr.Textbox(
        value=rank_text, label="Ranking", interactive=False, elem_id="core-ranking-status"
    )
    ranking = gr.Dataframe(value=systems, label="Systems", interactive=False, elem_id="core-ranking")
    refresh = gr.Button("Reload", scale=0, elem_id="core-refresh")
    refresh.click(view, None, [status, table, ranking, coupling, agreement, ranking_text])


def core_tab(ctx: Any) -> None:
    """The tab builder (`spaces_app.app.tab_specs`): the result file named by TRACE_SPACE_CORE_META."""
    import gradio as gr

    build_core_tab(gr, core_meta_path())
