"""Tables as text: the one plain-text, Markdown and CSV renderer every layer prints with.

Cells are strings already formatted by the caller (a number's format belongs to its column:
`trace_metrics.tables.format_cell` for the leaderboard's columns); these functions only lay them out. They sit
in the kernel because tables are printed on every layer (the dataset card, the metrics, the harness, the
Space's About tab).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any, Literal

Align = Literal["first-left", "left"]


def text_table(
    header: Sequence[str], rows: Iterable[Sequence[str]], *, align: Align = "first-left", rule: bool = True
) -> str:
    """A plain-text table, columns two spaces apart.

    `align="first-left"`: the first column left-aligned, the others right-aligned (`trace-bench evaluate`,
    `trace-bench core`); `align="left"`: every column left-aligned and padded to its width (the leaderboard's
    tables). `rule`: a dashed rule under the header.
    """
    body = [list(r) for r in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if align == "left" or i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join(
        [line(header), *([line(["-" * w for w in widths])] if rule else []), *(line(r) for r in body)]
    )


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown (GitHub) table: `| a | b |`, a `|---|---|` rule, one line per row. Cells are written as given:
    a caller whose text may hold `|` or Markdown escapes it first."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """CSV with "\\n" line ends (the same bytes on every platform); None is an empty field, floats as `repr`."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()
