"""`trace-bench kb stats`: the Table 3 statistics of a built knowledge base, recomputed from its files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trace_dataset.constants import (
    CITY_NAMES,
    KB_DIRNAME,
    KB_META_FILE,
    POI_TYPES,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEW_MAX_CHARS,
)
from trace_dataset.io import TraceDataError, read_json, read_jsonl
from trace_dataset.kb.build import table3_stats
from trace_dataset.kb.store import check_kb_files


def _kb_root(path: str | os.PathLike) -> Path:
    root = Path(path)
    if not (root / POIS_FILE).exists() and (root / KB_DIRNAME / POIS_FILE).exists():
        root = root / KB_DIRNAME  # a Trace data directory
    if not root.is_dir():
        raise TraceDataError("knowledge base folder not found", path=root)
    if not (root / POIS_FILE).exists():
        raise TraceDataError(f"missing {POIS_FILE}: not a Trace knowledge base folder", path=root)
    return root


def kb_stats(path: str | os.PathLike) -> dict[str, Any]:
    """{source, kb_version, parameters, stats}: stats recomputed from pois/review_index, meta from kb.json."""
    root = _kb_root(path)
    meta = read_json(root / KB_META_FILE) if (root / KB_META_FILE).exists() else {}
    if not isinstance(meta, dict):
        raise TraceDataError("expected a JSON object", path=root / KB_META_FILE)
    check_kb_files(root, meta)
    pois = list(read_jsonl(root / POIS_FILE))
    n_truncated = 0
    if (root / REVIEW_INDEX_FILE).exists():
        n_truncated = sum(
            1 for r in read_jsonl(root / REVIEW_INDEX_FILE) if (r.get("length") or 0) > REVIEW_MAX_CHARS
        )
    return {
        "source": meta.get("source", "unknown"),
        "kb_version": meta.get("kb_version", ""),
        "parameters": meta.get("parameters", {}),
        "stats": table3_stats(pois, n_truncated),
    }


_PLURAL = {"restaurant": "restaurants", "hotel": "hotels", "attraction": "attractions"}


def format_table(meta: dict[str, Any]) -> str:
    """A Table-3-style text table from kb.json content (or kb_stats output)."""
    s = meta["stats"]
    per_type = s["pois_per_type"]
    counts = {per_type[t] for t in POI_TYPES}
    if len(counts) == 1:
        poi_line = f"{s['pois']:,} ({per_type[POI_TYPES[0]]:,} ea. restaurant/hotel/attr.)"
    else:
        poi_line = f"{s['pois']:,} (" + " / ".join(f"{per_type[t]:,} {t}" for t in POI_TYPES) + ")"
    pr = s["price_range"]
    price = (
        f"{pr['label']} ({', '.join(_PLURAL[t] for t in pr['types_with_price'])})" if pr["label"] else "n/a"
    )
    version = (meta.get("kb_version") or "")[:12] or "n/a"
    rows = [
        ("POIs", poi_line),
        (
            "Reviews",
            f"{s['reviews']:,} (avg. {s['avg_reviews_per_poi']:.2f}/POI, min {s['min_reviews_per_poi']}, "
            f"max {s['max_reviews_per_poi']})",
        ),
        ("Avg. stars", f"{s['avg_stars']:.1f}"),
        ("Unique categories", f"{s['unique_categories']:,}"),
        ("Cities", f"{s['cities']} ({', '.join(c for c in CITY_NAMES if s['pois_per_city'].get(c))})"),
        ("Price range", price),
        (
            "Reviews > 500 chars",
            f"{s['reviews_truncated']:,} (text truncated to {REVIEW_MAX_CHARS} characters)",
        ),
    ]
    width = max(len(k) for k, _ in rows)
    out = [f"Trace knowledge base (source: {meta.get('source', 'unknown')}, kb_version {version})", ""]
    out += [f"{k:<{width}}  {v}" for k, v in rows]
    out += ["", f"{'POIs per cell':<14}" + "".join(f"{t:>12}" for t in POI_TYPES)]
    for city in CITY_NAMES:
        cell = s["pois_per_cell"].get(city, {})
        out.append(f"{city:<14}" + "".join(f"{cell.get(t, 0):>12,}" for t in POI_TYPES))
    return "\n".join(out)
