"""Memory-Aug. (App. F "MemoryAugmentedBaseline"): LLM Zero-Shot with a persistent, persona-keyed preference
memory across dialogues. Not session-isolated (`session_isolated=False` in its record, `baselines.identity`):
the paper reports it apart from
the 13 session-isolated rows, and so does the leaderboard.

- Written: when the pipeline moves on to the next dialogue, the previous one's user turns that state
  preferences (greet_and_seek, provide_preference, reject_and_refine) become memory entries under the
  dialogue's persona type (`scenario.persona_type`, 47 types), each with its all-MiniLM-L6-v2 embedding (the
  Dense baseline's packaged model) and the dialogue's clock time.
- Clock (fixed and documented, so a run is reproducible): dialogues happen one after another in the order the
  pipeline receives them (`trace-bench run`: corpus order, i.e. split file order, train -> validation -> test
  with `--split all`), `hours_per_dialogue` (1.0) apart: the k-th dialogue (0-based) is at hour k, all its turns
  at the same hour.
- Read: at every turn, the query is the renormalised mean embedding of the dialogue's user turns so far (the
  Dense baseline's default `turn_mean`); each entry of the same persona type from an earlier dialogue scores
  cosine x exp(-ln 2 x hours_ago / 168) (half-life one week, exactly 0.5 at 168 h); the `memory_k` (3) best
  with a positive score, ties to the earlier entry, go into the prompt's memory section with their age. The
  current dialogue never reads itself.
- Resume: the memory lives in the process; `trace-bench run` replays an interrupted run from its first row
  (answers come from the response cache) so the memory is the same as in an uninterrupted run, and runs it
  in one process whatever `--num-proc` says. The turn embeddings go through the Dense baseline's SQLite query
  cache (same file and keys: a Dense run in `turn_mean` mode has already encoded every user turn), so a
  replay or a rerun encodes nothing; `query_cache=False` turns it off.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from baselines.base import DEFAULT_BATCH_SIZE, SCORE_DECIMALS, add_count
from baselines.llm.common import ZeroShotPipeline

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

HALF_LIFE_HOURS = 168.0  # App. F: "a half-life of one week"
HOURS_PER_DIALOGUE = 1.0
DEFAULT_MEMORY_K = 3
MEMORY_ACTIONS: tuple[str, ...] = ("greet_and_seek", "provide_preference", "reject_and_refine")


def decay(hours_ago: float, half_life_hours: float = HALF_LIFE_HOURS) -> float:
    """exp(-ln2 * hours / half_life): 1.0 now, 0.5 after one half-life."""
    return math.exp(-math.log(2) * hours_ago / half_life_hours)


def age_text(hours: float) -> str:
    if hours < 48:
        return f"{hours:.0f} hours ago"
    return f"{hours / 24:.0f} days ago"


@dataclass(frozen=True)
class MemoryEntry:
    persona: str
    dialogue_id: str
    text: str
    hour: float


@dataclass(frozen=True)
class MemoryHit:
    entry: MemoryEntry
    cosine: float
    decay: float
    score: float


class PreferenceMemory:
    """Entries per persona with their (L2-normalised) vectors; retrieval by cosine x time decay."""

    def __init__(self, half_life_hours: float = HALF_LIFE_HOURS):
        if half_life_hours <= 0:
            raise ValueError(f"half_life_hours must be > 0, got {half_life_hours!r}")
        self.half_life_hours = half_life_hours
        self._entries: dict[str, list[MemoryEntry]] = {}
        self._vectors: dict[str, list[np.ndarray]] = {}
        self._matrix: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return sum(len(v) for v in self._entries.values())

    def add(self, entry: MemoryEntry, vector: np.ndarray) -> None:
        self._entries.setdefault(entry.persona, []).append(entry)
        self._vectors.setdefault(entry.persona, []).append(np.asarray(vector, dtype=np.float32))
        self._matrix.pop(entry.persona, None)

    def retrieve(
        self,
        persona: str,
        query: np.ndarray,
        now_hour: float,
        k: int = DEFAULT_MEMORY_K,
        exclude_dialogue: str | None = None,
    ) -> list[MemoryHit]:
        """The k best entries of `persona` with score > 0 (score = cosine x decay), best first."""
        entries = self._entries.get(persona)
        if not entries or k < 1:
            return []
        matrix = self._matrix.get(persona)
        if matrix is None:
            matrix = self._matrix[persona] = np.stack(self._vectors[persona])
        cosines = matrix @ np.asarray(query, dtype=np.float32)
        hits = []
        for i, entry in enumerate(entries):
            if entry.dialogue_id == exclude_dialogue or entry.hour > now_hour:
                continue
            d = decay(now_hour - entry.hour, self.half_life_hours)
            score = round(float(cosines[i]) * d, SCORE_DECIMALS)
            if score > 0:
                hits.append((-score, i, MemoryHit(entry, round(float(cosines[i]), SCORE_DECIMALS), d, score)))
        hits.sort(key=lambda h: (h[0], h[1]))
        return [h[2] for h in hits[:k]]


def memory_section(hits: Sequence[MemoryHit], now_hour: float) -> str:
    if not hits:
        return "(nothing relevant remembered)"
    return "\n".join(
        f"- {' '.join(h.entry.text.split())} ({age_text(now_hour - h.entry.hour)})" for h in hits
    )


class MemoryAugmentedBaseline(ZeroShotPipeline):
    name: ClassVar[str] = "memory_aug"
    config_keys: ClassVar[tuple[str, ...]] = (
        *ZeroShotPipeline.config_keys,
        "half_life_hours",
        "hours_per_dialogue",
        "memory_k",
        "encoder_model",
    )

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        half_life_hours: float = HALF_LIFE_HOURS,
        hours_per_dialogue: float = HOURS_PER_DIALOGUE,
        memory_k: int = DEFAULT_MEMORY_K,
        encoder_model: str | None = None,
        encoder: Any = None,
        query_cache: bool = True,
        **params: Any,
    ):
        from baselines.toolkit.dense import HUB_MODEL_ID

        if (
            hours_per_dialogue < 0
            or isinstance(memory_k, bool)
            or not isinstance(memory_k, int)
            or memory_k < 0
        ):
            raise ValueError(
                f"need hours_per_dialogue >= 0 and an integer memory_k >= 0, got {hours_per_dialogue!r}, "
                f"{memory_k!r}"
            )
        super().__init__(kb, batch_size, **params)
        self.memory = PreferenceMemory(half_life_hours)
        self.half_life_hours = float(half_life_hours)
        self.hours_per_dialogue = float(hours_per_dialogue)
        self.memory_k = memory_k
        self.encoder_model = encoder_model or HUB_MODEL_ID
        self._encoder = encoder
        self._query_cache: Any = None
        self.use_query_cache = bool(query_cache)
        self._order: dict[str, int] = {}  # dialogue id -> position in the stream (the clock)
        self._current: tuple[str, str, list[str]] | None = None  # (dialogue id, persona, preference texts)
        self._vectors: dict[str, np.ndarray] = {}  # texts of the current batch and the pending dialogue

    def encode(self, texts: Sequence[str]) -> None:
        """Embeddings of texts not encoded yet, in one call."""
        todo = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if not todo:
            return
        if self.use_query_cache and self._query_cache is None:
            from baselines.toolkit.dense import QUERY_CACHE_FILE, QueryCache, default_cache_dir

            self._query_cache = QueryCache(
                default_cache_dir() / "dense" / QUERY_CACHE_FILE, f"{self.encoder_model}|normalized"
            )  # DenseIndex's key
        if self._query_cache is not None:
            self._vectors.update(self._query_cache.get_many(todo))
            todo = [t for t in todo if t not in self._vectors]
        if not todo:
            return
        if self._encoder is None:
            from baselines.toolkit.dense import load_encoder

            self._encoder = load_encoder(self.encoder_model)
        emb = np.asarray(
            self._encoder.encode(
                todo, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            ),
            dtype=np.float32,
        )
        self._vectors.update(zip(todo, emb, strict=True))
        if self._query_cache is not None:
            self._query_cache.put_many(zip(todo, emb, strict=True))

    def hour(self, dialogue_id: str) -> float:
        return self._order[dialogue_id] * self.hours_per_dialogue

    def _commit(self) -> None:
        if self._current is None:
            return
        did, persona, texts = self._current
        for text in texts:
            self.memory.add(MemoryEntry(persona, did, text, self.hour(did)), self._vectors[text])

    def prepare(self, inputs: list[dict[str, Any]]) -> None:
        """In row order: commit a finished dialogue's preferences, then read the memory for this turn."""
        self.encode([t["text"] for inp in inputs for t in inp["history"] if t["role"] == "user"])
        for inp in inputs:
            did, persona = inp["dialogue_id"], str(inp["scenario"].get("persona_type", ""))
            if self._current is None or self._current[0] != did:
                self._commit()
                self._order.setdefault(did, len(self._order))
            texts = [
                t["text"] for t in inp["history"] if t["role"] == "user" and t["action"] in MEMORY_ACTIONS
            ]
            self._current = (did, persona, texts)
            turns = [self._vectors[t["text"]] for t in inp["history"] if t["role"] == "user"]
            query = np.mean(turns, axis=0) if turns else None
            norm = float(np.linalg.norm(query)) if query is not None else 0.0
            now = self.hour(did)
            inp["memory_now"] = now
            inp["memory_hits"] = (
                self.memory.retrieve(persona, query / norm, now, self.memory_k, exclude_dialogue=did)
                if query is not None and norm > 0
                else []
            )
        keep = set(self._current[2]) if self._current else set()
        self._vectors = {t: v for t, v in self._vectors.items() if t in keep}

    def sections(self, inp: Mapping[str, Any], labelled: Sequence[tuple[str, str]]) -> dict[str, str]:
        return {"memory": memory_section(inp["memory_hits"], inp["memory_now"])}

    def turn_meta(self, inp: Mapping[str, Any]) -> dict[str, Any]:
        hits = inp["memory_hits"]
        meta: dict[str, Any] = {
            "memory": [
                {
                    "dialogue_id": h.entry.dialogue_id,
                    "hours_ago": inp["memory_now"] - h.entry.hour,
                    "cosine": h.cosine,
                    "score": h.score,
                }
                for h in hits
            ]
        }
        add_count(meta, "memory_hits", len(hits))
        return meta
