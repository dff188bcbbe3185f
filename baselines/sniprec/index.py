"""Dense retrieval over units (§3.3): embeddings of every unit of the searched POIs, top-k per query snippet.

- Encoder: any sentence-transformers model by Hub id or local folder, loaded by the Dense baseline's
  `load_encoder` (so the default Hub id `sentence-transformers/all-MiniLM-L6-v2` resolves to the packaged
  copy and nothing is downloaded). The paper's encoder is `BAAI/bge-base-en-v1.5` (`PAPER_ENCODER`); query and
  item snippets are both short statements, so no query instruction is prepended (symmetric use).
- Embeddings are L2-normalised; similarity is the dot product (cosine). In memory, each distinct unit text has
  one row (reviews repeat sentences: the built-in corpus's 290k rules units have ~30k distinct texts); a
  POI holds the row numbers of its units, and a turn's matrix is gathered from its candidates' rows. Unit and query vectors are cached in
  one SQLite file per cache folder (`<cache_dir>/sniprec/vectors.sqlite`, the Dense baseline's `QueryCache`
  keyed by model and text), so a rerun encodes nothing and a build interrupted half-way keeps what it encoded.
- Top-k: the k units of the searched POIs with the highest cosine, similarities rounded to 6 decimals, ties
  by unit order (POI order of the candidates, then unit order within the POI): deterministic.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from baselines.sniprec.store import UnitStore
from baselines.toolkit.dense import HUB_MODEL_ID, QueryCache, load_encoder
from trace_metrics.lib.entailment import default_cache_dir

log = logging.getLogger(__name__)

DEFAULT_ENCODER = HUB_MODEL_ID
PAPER_ENCODER = "BAAI/bge-base-en-v1.5"
VECTORS_FILE = "vectors.sqlite"
SIM_DECIMALS = 6
ENCODE_BATCH = 128  # texts per forward pass (2 threads: 56 texts/s at 128 against 29 at 32, busy sandbox)
ENCODE_PART = 2048  # texts per model.encode call: sorted by length within, stored to the cache after each
GATHER_SHARE = 0.25  # a candidate set with at most this share of the distinct texts gets its vectors gathered
_MATRIX_CACHE = 8  # candidate sets whose stacked matrix is kept (consecutive turns of a dialogue share one)


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """torch's intra-op threads set to `n` for the block (None: left as they are). On a machine busy with
    other jobs one thread encodes faster than two (docs/sniprec.md, Figures)."""
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass(frozen=True)
class Hit:
    """One retrieved unit: the POI, the unit's index in that POI's units, and its score in the group."""

    poi_id: str
    unit: int
    score: float


class UnitIndex:
    """Unit embeddings of the POIs of one store, encoded on first use and cached (see the module docstring)."""

    def __init__(
        self,
        store: UnitStore,
        encoder: str = DEFAULT_ENCODER,
        device: str | None = "cpu",
        cache_dir: str | os.PathLike | None = None,
        model: Any = None,
        batch_size: int = ENCODE_BATCH,
        threads: int | None = None,
    ):
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValueError(f"encoder threads must be an integer >= 1 or None, got {threads!r}")
        self.store = store
        self.threads = threads
        self.encoder_name = encoder
        self.model = model if model is not None else load_encoder(encoder, device)
        self.batch_size = batch_size
        base = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.vectors = QueryCache(base / "sniprec" / VECTORS_FILE, f"{encoder}|normalized")
        self._rows: dict[str, int] = {}  # unit text -> row of the unique-vector matrix
        self._matrix = np.zeros((0, self.dim), dtype=np.float32)  # one row per distinct unit text (capacity)
        self._n = 0  # rows in use
        self._poi: dict[str, np.ndarray] = {}  # POI -> its units' rows
        self._matrices: OrderedDict[
            tuple[str, ...], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]
        ] = OrderedDict()
        self.encoded = 0  # texts this index ran through the model (cache misses)

    @property
    def dim(self) -> int:
        get = (
            getattr(self.model, "get_embedding_dimension", None)
            or self.model.get_sentence_embedding_dimension
        )
        return int(get() or 0)

    def encode(self, texts: Sequence[str], progress: bool | None = False) -> np.ndarray:
        """L2-normalised float32 embeddings, one row per text, from the vector cache where present. Missing
        texts are encoded in parts of `ENCODE_PART` (sentence-transformers sorts each part by length, so a
        batch pads little), each part stored as soon as it is done: an interrupted encode keeps its work."""
        unique = list(dict.fromkeys(texts))
        found = self.vectors.get_many(unique)
        missing = [t for t in unique if t not in found]
        if missing:
            from tqdm.auto import tqdm

            if len(missing) > ENCODE_PART:
                log.info(
                    "encoding %d texts with %s (%d cached)",
                    len(missing),
                    self.encoder_name,
                    len(unique) - len(missing),
                )
            bar = tqdm(
                total=len(missing),
                desc="sniprec encode",
                unit="text",
                dynamic_ncols=True,
                disable=None if progress is None else not progress,
            )
            with torch_threads(self.threads):
                for start in range(0, len(missing), ENCODE_PART):
                    part = missing[start : start + ENCODE_PART]
                    emb = self.model.encode(
                        part,
                        batch_size=self.batch_size,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    )
                    emb = np.asarray(emb, dtype=np.float32)
                    self.vectors.put_many(zip(part, emb, strict=True))
                    found.update(zip(part, emb, strict=True))
                    self.encoded += len(part)
                    bar.update(len(part))
            bar.close()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[t] for t in texts]).astype(np.float32, copy=False)

    def _add_rows(self, texts: Sequence[str], progress: bool | None) -> None:
        """Append the vectors of texts not held yet (distinct texts share one row)."""
        new = [t for t in dict.fromkeys(texts) if t not in self._rows]
        if not new:
            return
        emb = self.encode(new, progress=progress)
        need = self._n + len(new)
        if need > len(self._matrix):  # grow geometrically
            grown = np.zeros((max(need, 2 * len(self._matrix), 1024), emb.shape[1]), dtype=np.float32)
            grown[: self._n] = self._matrix[: self._n]
            self._matrix = grown
        self._matrix[self._n : need] = emb
        self._rows.update((t, self._n + i) for i, t in enumerate(new))
        self._n = need

    def ensure(self, poi_ids: Sequence[str], progress: bool | None = False) -> None:
        """Units (store) and embeddings of every POI in `poi_ids`, in memory."""
        todo = [pid for pid in dict.fromkeys(poi_ids) if pid not in self._poi]
        if not todo:
            return
        self.store.ensure(todo, progress=progress)
        self._add_rows([u.text for pid in todo for u in self.store.units(pid)], progress)
        for pid in todo:
            self._poi[pid] = np.array([self._rows[u.text] for u in self.store.units(pid)], dtype=np.int64)

    def view(self, poi_ids: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """(vector rows, owner index into poi_ids, unit index within its POI, gathered vectors or None) of all
        units of `poi_ids`. Vectors are gathered only for a small candidate set (a quarter of the distinct
        texts at most); a large one (a whole catalogue) is scored on the distinct vectors, then gathered."""
        key = tuple(poi_ids)
        cached = self._matrices.get(key)
        if cached is not None:
            self._matrices.move_to_end(key)
            return cached
        self.ensure(poi_ids)
        parts = [self._poi[pid] for pid in poi_ids]
        rows = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        owner = np.repeat(np.arange(len(parts), dtype=np.int32), [len(p) for p in parts])
        unit = (
            np.concatenate([np.arange(len(p), dtype=np.int32) for p in parts])
            if parts
            else np.zeros(0, dtype=np.int32)
        )
        gathered = self._matrix[rows] if len(rows) <= GATHER_SHARE * self._n else None
        result = (rows, owner, unit, gathered)
        self._matrices[key] = result
        if len(self._matrices) > _MATRIX_CACHE:
            self._matrices.popitem(last=False)
        return result

    def top_k_many(self, queries: np.ndarray, poi_ids: Sequence[str], k: int) -> list[list[Hit]]:
        """For each query vector (rows of `queries`), the k most similar units of the POIs `poi_ids`, best
        first, with their cosine scores."""
        queries = np.asarray(queries, dtype=np.float32).reshape(-1, self._matrix.shape[1])
        rows, owner, unit, gathered = self.view(poi_ids)
        if k < 1 or not len(rows):
            return [[] for _ in range(len(queries))]
        k = min(k, len(rows))
        out = []
        for q in queries:  # one matrix-vector product per query: its scores never depend on the batch
            col = np.round(
                gathered @ q if gathered is not None else (self._matrix[: self._n] @ q)[rows], SIM_DECIMALS
            )
            part = np.argpartition(-col, k - 1)[:k] if k < len(col) else np.arange(len(col))
            # ties at the k-th similarity: every unit at that value, then the first k in unit order
            pool = np.flatnonzero(col >= col[part].min())
            order = pool[np.lexsort((pool, -col[pool]))][:k]
            out.append([Hit(poi_ids[owner[i]], int(unit[i]), float(col[i])) for i in order])
        return out

    def top_k(self, query: np.ndarray, poi_ids: Sequence[str], k: int) -> list[Hit]:
        """The k most similar units of the POIs `poi_ids` to one query vector, best first (cosine scores)."""
        return self.top_k_many(np.asarray(query)[None, :], poi_ids, k)[0]

    def memory_bytes(self) -> dict[str, int]:
        """Bytes held: distinct-text vectors (rows in use), per-POI row indices, cached candidate matrices."""
        return {
            "vectors": int(self._n * self._matrix.shape[1] * self._matrix.itemsize),
            "vectors_allocated": int(self._matrix.nbytes),
            "poi_rows": int(sum(a.nbytes for a in self._poi.values())),
            "candidate_views": int(
                sum(sum(x.nbytes for x in m if x is not None) for m in self._matrices.values())
            ),
            "distinct_texts": self._n,
            "units": int(sum(len(a) for a in self._poi.values())),
        }
