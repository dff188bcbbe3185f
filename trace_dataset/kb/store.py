"""Load a built knowledge base folder (the layout `trace-bench kb build` writes) for lookups."""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any

from trace_dataset.constants import KB_META_FILE, POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE
from trace_dataset.io import TraceDataError, read_json, read_jsonl, sha256_file
from trace_dataset.records import Poi, Review

HYDRATION_MARKER = (
    "hydration.json"  # beside knowledge_base/ in a hydrated release (release.hydrate writes it)
)


def check_kb_files(root: str | os.PathLike, meta: dict[str, Any]) -> None:
    """Refuse a knowledge base whose files are not the ones its kb.json describes.

    kb.json records every data file's SHA-256. pois and review_index must be there and match (they travel
    byte for byte into corpora and releases); reviews.jsonl.gz may be absent (a release) and is not compared
    in a hydrated release (a partial hydration legitimately holds fewer reviews). A folder without a `files`
    record (hand-made, or from before the builder wrote one) is not checked.
    """
    root = Path(root)
    files = meta.get("files")
    if not isinstance(files, dict):
        return
    names = [POIS_FILE, REVIEW_INDEX_FILE]
    if (root / REVIEWS_FILE).exists() and not (root.parent / HYDRATION_MARKER).exists():
        names.append(REVIEWS_FILE)
    for name in names:
        expected = files.get(name)
        if not isinstance(expected, str):
            continue
        if not (root / name).exists():
            raise TraceDataError(
                f"incomplete knowledge base: {name} is missing though {KB_META_FILE} lists it; rebuild it "
                "(trace-bench kb build)",
                path=root,
            )
        if sha256_file(root / name) != expected:
            raise TraceDataError(
                f"incomplete or mixed knowledge base: {name} is not the file {KB_META_FILE} records (an interrupted "
                "build, or files of different builds in one folder); rebuild it (trace-bench kb build)",
                path=root,
            )


class KnowledgeBase:
    """POIs and reviews of one knowledge base, indexed for the generator, baselines and metrics.

    `root` is a folder with pois.jsonl.gz, review_index.jsonl.gz, optional reviews.jsonl.gz (the text;
    absent in a non-hydrated release) and optional kb.json (metadata and version).
    """

    def __init__(
        self,
        pois: Iterable[Poi],
        reviews: Iterable[Review],
        meta: dict[str, Any] | None = None,
        root: Path | None = None,
    ):
        self.pois: dict[str, Poi] = {p.business_id: p for p in pois}
        self.reviews: dict[str, Review] = {r.review_id: r for r in reviews}
        self.meta: dict[str, Any] = dict(meta or {})
        self.root = root

    @classmethod
    def load(cls, root: str | os.PathLike) -> KnowledgeBase:
        root = Path(root)
        if not root.is_dir():
            raise TraceDataError("knowledge base folder not found", path=root)
        pois_path = root / POIS_FILE
        if not pois_path.exists():
            raise TraceDataError(f"missing {POIS_FILE}: not a Trace knowledge base folder", path=root)
        meta = read_json(root / KB_META_FILE) if (root / KB_META_FILE).exists() else {}
        if not isinstance(meta, dict):
            raise TraceDataError("expected a JSON object", path=root / KB_META_FILE)
        check_kb_files(root, meta)
        pois = []
        for i, rec in enumerate(read_jsonl(pois_path), start=1):
            try:
                pois.append(Poi.from_dict(rec))
            except (KeyError, TypeError, ValueError) as e:
                raise TraceDataError(f"bad POI record ({e!r})", path=pois_path, line=i) from None
        texts: dict[str, dict] = {}
        if (root / REVIEWS_FILE).exists():
            for i, rec in enumerate(read_jsonl(root / REVIEWS_FILE), start=1):
                if not isinstance(rec.get("review_id"), str) or not isinstance(rec.get("text"), str):
                    raise TraceDataError(
                        "bad review record: expected string review_id and text",
                        path=root / REVIEWS_FILE,
                        line=i,
                    )
                texts[rec["review_id"]] = rec
        reviews = []
        index_path = root / REVIEW_INDEX_FILE
        if index_path.exists():
            for i, rec in enumerate(read_jsonl(index_path), start=1):
                try:
                    full = texts.get(rec["review_id"])
                    reviews.append(Review.from_dict({**rec, "text": full["text"] if full else None}))
                except (KeyError, TypeError, ValueError) as e:
                    raise TraceDataError(
                        f"bad review index record ({e!r})", path=index_path, line=i
                    ) from None
        else:
            reviews = [Review.from_dict(r) for r in texts.values()]
        return cls(pois, reviews, meta, root)

    # -- lookups -------------------------------------------------------------------------------
    @property
    def version(self) -> str:
        return str(self.meta.get("kb_version", ""))

    @property
    def has_text(self) -> bool:
        return bool(self.reviews) and all(r.text is not None for r in self.reviews.values())

    def poi(self, business_id: str) -> Poi:
        try:
            return self.pois[business_id]
        except KeyError:
            raise KeyError(
                f"unknown business_id {business_id!r}: not in knowledge base {self.root}"
            ) from None

    @cached_property
    def _cells(self) -> dict[tuple[str, str], list[Poi]]:
        cells: dict[tuple[str, str], list[Poi]] = {}
        for p in self.pois.values():
            cells.setdefault((p.city, p.poi_type), []).append(p)
        return cells

    @cached_property
    def review_business(self) -> dict[str, str]:
        """review_id -> business_id, for everything that resolves a cited review to its POI."""
        return {r.review_id: r.business_id for r in self.reviews.values()}

    def pois_in(self, city: str, poi_type: str) -> list[Poi]:
        """POIs of one city x type cell, in knowledge-base order."""
        return list(self._cells.get((city, poi_type), ()))

    def reviews_of(self, business_id: str) -> list[Review]:
        return [self.reviews[r] for r in self.poi(business_id).review_ids if r in self.reviews]

    def review_text(self, review_id: str) -> str:
        review = self.reviews.get(review_id)
        if review is None:
            raise KeyError(f"unknown review_id {review_id!r}: not in knowledge base {self.root}")
        if review.text is None:
            raise TraceDataError(
                f"review {review_id!r} has no text: hydrate the release first (trace-bench corpus hydrate)",
                path=self.root,
            )
        return review.text
