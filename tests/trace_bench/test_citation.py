"""One citation of the Trace paper, defined once (trace_bench/citation.py): every copy in the docs is that
text."""

from __future__ import annotations

import re
from pathlib import Path

from trace_bench.citation import TRACE_CITATION

ROOT = Path(__file__).resolve().parents[2]


def test_every_copy_is_the_citation():
    copies = [
        p
        for p in sorted(
            [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "trace_metrics").glob("*/README.md")]
        )
        if "Accountable Citation Evidence}" in p.read_text(encoding="utf-8")
    ]
    assert ROOT / "README.md" in copies and len(copies) >= 5
    for path in copies:
        text = path.read_text(encoding="utf-8")
        blocks = re.findall(r"@article\{zhao2026trace,.*?\n\}\n", text, re.S)
        assert blocks == [TRACE_CITATION], path
        assert "trace2026" not in text and "TRACE: Tourism" not in text, path


def test_the_metric_modules_cite_it():
    from trace_metrics.module import TRACE_CITATION as cited

    assert cited is TRACE_CITATION
