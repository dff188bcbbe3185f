"""The on-disk unit cache of one knowledge base: every POI's snippets (or sentences, or documents), once.

Layout: `<cache_dir>/sniprec/<kb key>/<extractor key>/units.jsonl`, one JSON line per POI
`{"poi_id", "digest", "units": [[text, review_id, start, end], ...], "stats": {...}}`, appended and flushed
as each chunk of POIs is extracted, so an interrupted build resumes where it stopped (a torn last line is cut
off). `store.json` beside it sums the per-POI stats (reviews, LLM requests, failures, seconds) and names the
extractor. The kb key is the KB version plus a digest of its POI ids; the extractor key names the unit kind,
the rules version or the LLM, its decoding settings and the prompts' SHA-256. A POI's `digest` covers its
name, categories, attributes, price and review texts: a line whose digest no longer matches is extracted
again (the newest line of a POI wins). Several processes may share one store: extraction and appends run
under an exclusive file lock, and each process reads what the others appended before extracting.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from baselines.sniprec.units import Unit, attribute_units, document_unit, rules_units, sentence_units
from trace_dataset.io import TraceDataError, write_json
from trace_metrics.lib.entailment import default_cache_dir

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

log = logging.getLogger(__name__)

STORE_FORMAT = 1
UNITS_FILE = "units.jsonl"
META_FILE = "store.json"
LOCK_FILE = ".lock"

PoiUnits = dict[str, tuple[list[Unit], dict[str, Any]]]


class Extractor(Protocol):
    """Turns POIs into units. `key` names everything that changes the output (it names the cache folder)."""

    kind: str
    key: str
    chunk_pois: int

    def describe(self) -> dict[str, Any]: ...

    def extract(self, kb: KnowledgeBase, poi_ids: Sequence[str]) -> PoiUnits: ...


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def kb_key(kb: KnowledgeBase) -> str:
    """The KB version and a digest of its POI ids (folder name of the KB's stores)."""
    ids = _sha("\n".join(sorted(kb.pois)))[:12]
    version = "".join(c for c in (kb.version or "unversioned")[:16] if c.isalnum() or c in "-_.")
    return f"{version or 'kb'}-{ids}"


def poi_digest(kb: KnowledgeBase, poi_id: str) -> str:
    """What a POI's units are made from: name, categories, attributes, price, and its reviews' texts."""
    poi = kb.poi(poi_id)
    head = json.dumps(
        [poi.name, list(poi.categories), poi.attributes, poi.price], sort_keys=True, default=str
    )
    parts = [head, *(f"{r.review_id}\x1f{kb.review_text(r.review_id)}" for r in kb.reviews_of(poi_id))]
    return _sha("\x1e".join(parts))[:24]


def poi_attribute_units(kb: KnowledgeBase, poi_id: str) -> list[Unit]:
    poi = kb.poi(poi_id)
    return attribute_units(poi.categories, poi.attributes, poi.price)


class RulesExtractor:
    """The deterministic kinds: `rules` snippets, review `sentence`s, whole-review `document`s."""

    chunk_pois = 256

    def __init__(self, kind: str):
        if kind not in ("rules", "sentence", "document"):
            raise ValueError(
                f"unknown deterministic unit kind {kind!r}; expected rules, sentence or document"
            )
        from baselines.sniprec.units import RULES_VERSION

        self.kind = kind
        self.key = f"{kind}-v{RULES_VERSION}"

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key}

    def extract(self, kb: KnowledgeBase, poi_ids: Sequence[str]) -> PoiUnits:
        out: PoiUnits = {}
        for pid in poi_ids:
            t = time.perf_counter()
            name = kb.poi(pid).name
            units: list[Unit] = []
            reviews = kb.reviews_of(pid)
            for review in reviews:
                text = kb.review_text(review.review_id)
                if self.kind == "rules":
                    units.extend(rules_units(review.review_id, text, name))
                elif self.kind == "sentence":
                    units.extend(sentence_units(review.review_id, text))
                else:
                    units.extend(document_unit(review.review_id, text))
            attributes = poi_attribute_units(kb, pid)
            if self.kind == "document" and attributes:
                attributes = [Unit(" ".join(u.text for u in attributes))]
            units.extend(attributes)
            out[pid] = (units, {"reviews": len(reviews), "seconds": time.perf_counter() - t})
        return out


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (POSIX flock; elsewhere no lock: one process per store)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class UnitStore:
    """Units of the POIs of one knowledge base for one extractor, cached on disk (see the module docstring)."""

    def __init__(self, kb: KnowledgeBase, extractor: Extractor, cache_dir: str | os.PathLike | None = None):
        self.kb = kb
        self.extractor = extractor
        base = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.folder = base / "sniprec" / kb_key(kb) / extractor.key
        self.path = self.folder / UNITS_FILE
        self._units: dict[str, list[Unit]] = {}
        self._stats: dict[str, dict[str, Any]] = {}
        self._digests: dict[str, str] = {}
        self._checked: set[str] = set()  # POIs whose cached digest matched the knowledge base
        self._offset = 0
        self._lines = 0
        self.extracted = 0  # POIs this object extracted (not read from disk)
        self.folder.mkdir(parents=True, exist_ok=True)
        self._read_new()

    # -- reading -----------------------------------------------------------------------------------
    def _read_new(self) -> None:
        """Read the lines appended since the last read; cut a torn last line off the file."""
        if not self.path.exists():
            return
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            data = f.read()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            log.warning(
                "%s: discarding a torn last line (%d bytes) left by an interrupted build",
                self.path,
                len(data) - end,
            )
            with open(self.path, "r+b") as f:
                f.truncate(self._offset + end)
        for line in data[:end].splitlines():
            self._lines += 1
            try:
                rec = json.loads(line)
                pid, digest = rec["poi_id"], rec["digest"]
                units = [Unit.from_list(u) for u in rec["units"]]
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
                raise TraceDataError(
                    f"bad SnipRec unit cache line ({e!r}); delete the folder {self.folder} to rebuild it",
                    path=self.path,
                    line=self._lines,
                ) from None
            self._units[pid] = units
            self._digests[pid] = digest
            self._checked.discard(pid)
            self._stats[pid] = dict(rec.get("stats") or {})
        self._offset += end

    def _current(self, poi_id: str) -> bool:
        """Whether the cached units of the POI were made from its current inputs (checked once per POI)."""
        if poi_id in self._checked:
            return True
        if poi_id in self._units and self._digests[poi_id] == poi_digest(self.kb, poi_id):
            self._checked.add(poi_id)
            return True
        return False

    # -- building ----------------------------------------------------------------------------------
    def missing(self, poi_ids: Iterable[str]) -> list[str]:
        return [pid for pid in dict.fromkeys(poi_ids) if not self._current(pid)]

    def ensure(self, poi_ids: Iterable[str], progress: bool | None = False) -> int:
        """Extract (and append) the units of every POI in `poi_ids` not cached yet; returns how many."""
        wanted = list(dict.fromkeys(poi_ids))
        for pid in wanted:
            self.kb.poi(pid)  # unknown ids fail here, naming the id
        if not self.missing(wanted):
            return 0
        with _locked(self.folder / LOCK_FILE):
            self._read_new()  # what other processes appended meanwhile
            todo = self.missing(wanted)
            if not todo:
                return 0
            from tqdm.auto import tqdm

            # an LLM extractor's bar counts its requests (one per review, and the repairs) as they are answered:
            # a chunk of POIs is one batch of requests, so a bar of POIs stood still for the whole chunk
            per_request = hasattr(self.extractor, "on_request")
            bar = tqdm(
                total=sum(len(self.kb.reviews_of(p)) for p in todo) if per_request else len(todo),
                desc=f"sniprec {self.extractor.kind} units",
                unit="req" if per_request else "POI",
                disable=None if progress is None else not progress,
                dynamic_ncols=True,
            )
            if per_request:
                self.extractor.on_request = bar.update  # type: ignore[attr-defined]
            size = max(1, int(self.extractor.chunk_pois))
            with open(self.path, "ab") as f:
                for start in range(0, len(todo), size):
                    chunk = todo[start : start + size]
                    result = self.extractor.extract(self.kb, chunk)
                    lines = []
                    for pid in chunk:
                        units, stats = result[pid]
                        digest = poi_digest(self.kb, pid)
                        lines.append(
                            json.dumps(
                                {
                                    "poi_id": pid,
                                    "digest": digest,
                                    "units": [u.to_list() for u in units],
                                    "stats": stats,
                                },
                                ensure_ascii=False,
                                sort_keys=True,
                            )
                            + "\n"
                        )
                        self._units[pid], self._digests[pid], self._stats[pid] = units, digest, stats
                        self._checked.add(pid)
                    f.write("".join(lines).encode("utf-8"))
                    f.flush()
                    self._offset = f.tell()
                    self._lines += len(lines)
                    self.extracted += len(chunk)
                    if not per_request:
                        bar.update(len(chunk))
            if per_request:
                self.extractor.on_request = None  # type: ignore[attr-defined]
            bar.close()
            write_json(self.folder / META_FILE, self.summary())
        return len(todo)

    # -- lookups -----------------------------------------------------------------------------------
    def units(self, poi_id: str) -> list[Unit]:
        if not self._current(poi_id):
            self.ensure([poi_id])
        return self._units[poi_id]

    def __contains__(self, poi_id: object) -> bool:
        return isinstance(poi_id, str) and poi_id in self._units

    def summary(self) -> dict[str, Any]:
        """The extractor, counts and the summed per-POI stats of everything cached (store.json)."""
        totals: dict[str, float] = {}
        for stats in self._stats.values():
            for key, value in stats.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    totals[key] = totals.get(key, 0) + value
        units = [u for us in self._units.values() for u in us]
        return {
            "format": STORE_FORMAT,
            "kb_version": self.kb.version,
            "kb_root": str(self.kb.root or ""),
            "extractor": self.extractor.describe(),
            "n_pois": len(self._units),
            "n_units": len(units),
            "n_review_units": sum(u.from_review for u in units),
            "n_attribute_units": sum(not u.from_review for u in units),
            "totals": {k: round(v, 3) if isinstance(v, float) else v for k, v in sorted(totals.items())},
        }
