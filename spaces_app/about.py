"""The About tab: the leaderboard's columns and conventions, every metric of the registry, the dataset card."""

from __future__ import annotations

from pathlib import Path

from baselines.identity import IDENTITIES
from spaces_app.board_html import BEST_LABEL, CI_LABEL
from trace_metrics.tables import DECIMALS, VIEWS, header, markdown_table

_MD_SPECIAL = {ord(c): "\\" + c for c in "\\`*_[]<>|$#~"}
# Gradio's Markdown tables squeeze narrow columns until words break; these keep words whole and let the
# definitions column take the room (the table scrolls sideways on a narrow screen instead).
CSS = """
#about table {display: block; overflow-x: auto; table-layout: auto; border-collapse: collapse;}
#about th, #about td {word-break: normal !important; overflow-wrap: normal !important; hyphens: manual;
  white-space: normal; vertical-align: top;}
#about td:first-child, #about td:nth-child(2), #about td:nth-child(3) {white-space: nowrap;}
#about td:nth-child(5) {min-width: 18rem;}
"""


def md_text(text: str) -> str:
    """`text` inside a Markdown table cell, shown as written: every character Markdown (or its LaTeX and
    table syntax) would read is backslash-escaped; line breaks become spaces."""
    return text.translate(_MD_SPECIAL).replace("\n", " ")


def about_markdown(settings) -> str:
    """Columns and conventions, metric definitions (the registry), and the dataset card of the data directory."""
    from trace_metrics.specs import METRICS, parameters

    lines = ["## Leaderboard columns", ""]
    for view, columns in VIEWS.items():
        lines.append(f"- **{view}**: " + ", ".join(f"{md_text(header(c))} = `{c.metric}`" for c in columns))
    lines += [
        "",
        "`open:` columns read the system's open-pool row (every POI of the city and type as candidates).",
        f"Every value is printed with {DECIMALS} decimals. Hovering a value shows its {CI_LABEL} (10,000 "
        "resamples, seed 42, as the paper's Table 21), and the *Show 95% intervals* box prints them under the "
        f"values; **bold, shaded** values are the {BEST_LABEL}, recomputed over every row scored here "
        "(baselines and submissions together). The paper's rows carry neither: they are numbers printed in "
        "the paper, on its own corpus.",
        "The headline CGS is the CGS formula applied to the means of GS, CD and PC, as in the paper's tables.",
        "Submissions are scored without the NLI model and the LLM judge, so the NLI column stays empty for them.",
        "",
        "### Notes on systems",
        "",
        *(f"- **{md_text(i.label)}**: {md_text(i.notes)}" for i in IDENTITIES if i.notes),
        "",
        "## Metrics",
        "",
        markdown_table(
            ["id", "family", "better", "level", "definition", "parameters", "paper"],
            (
                [
                    f"`{spec.id}`",
                    spec.family,
                    "↑" if spec.higher_is_better else "↓",
                    spec.level.replace("_", " "),
                    md_text(spec.description),
                    md_text(", ".join(f"{k}={v}" for k, v in parameters(spec).items())),
                    md_text(spec.paper),
                ]
                for spec in METRICS.values()
            ),
        ),
    ]
    return "\n".join(lines) + "\n\n## Dataset card\n\n" + dataset_card(settings.data_dir)


def dataset_card(data_dir: Path | None) -> str:
    """The data directory's card (README.md, written by the corpus/release tools) without its YAML front matter."""
    if data_dir is None:
        return "No data directory configured (TRACE_SPACE_DATA)."
    path = Path(data_dir) / "README.md"
    if path.exists():
        text = path.read_text(encoding="utf-8")
    else:  # render it from the data, as the corpus and release tools would have written it
        from trace_dataset.release.card import collect_stats, render_card

        text = render_card(collect_stats(data_dir))
    if text.startswith("---"):
        end = text.find("\n---", 3)
        text = text[end + 4 :] if end != -1 else text
    return text.lstrip()


def about_tab(ctx) -> None:
    import gradio as gr

    gr.HTML(f"<style>{CSS}</style>", elem_id="about-style")
    gr.Markdown(about_markdown(ctx.settings), elem_id="about")
