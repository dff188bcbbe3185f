"""Item snippets from the LLM (§3.1, App. C.1): decompose each review, post-check names, align to a span.

1. Every review of a chunk of POIs goes to the C.1 few-shot prompt in one batched `generate_json_batch` call,
   asking for a JSON list of strings (the printed prompt shows that list; the LLM layer appends the schema and
   retries invalid replies up to twice). A review whose reply is still invalid contributes no snippets and is
   counted (`failed_reviews`); nothing is substituted.
2. Post-check (C.1's second prompt): with `post_check="flagged"` (default) the snippets that mention the POI's
   name or "reviewer", or carry a capitalised word after the first (a possible personal name), are rewritten
   by the prompt; `"all"` sends every snippet. A rewritten snippet that still names the POI or says
   "reviewer" is dropped and counted (`name_dropped`); an empty reply keeps the snippet as it was and is
   counted (`name_check_empty`), so the same drop rule applies to it.
3. Each snippet's span is the review sentence it shares the most content words with (`units.align`); a
   snippet sharing none keeps its review id without a span (`unaligned`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from baselines.sniprec.prompts import PromptRunner, prompt_hashes
from baselines.sniprec.store import PoiUnits, poi_attribute_units
from baselines.sniprec.units import Unit, align, mentions_name, needs_name_check, sentence_spans
from trace_llm import LLMOutputError

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase
    from trace_llm import LLM
    from trace_llm.base import Progress
    from trace_llm.cache import Completion

POST_CHECK_MODES: tuple[str, ...] = ("flagged", "all")
# a JSON list of snippet strings (App. C.1); under constrained decoding each a non-empty string
SNIPPET_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 300},
}
DEFAULT_CHUNK_POIS = 16


def clean_snippets(values: Sequence[str]) -> list[str]:
    """Stripped, de-duplicated (case-insensitively) snippets of at least two words, in reply order."""
    seen: set[str] = set()
    out = []
    for value in values:
        text = " ".join(str(value).split()).strip(" \"'`")
        key = text.lower()
        if len(text.split()) < 2 or key in seen:
            continue
        seen.add(key)
        out.append(text)
    return out


def still_named(text: str, name: str) -> bool:
    return mentions_name(text, name) or "reviewer" in text.lower()


class _CountedProgress:
    """An LLM's request progress (trace_llm.base.Progress) that also calls `count(n)` per request answered or
    served from the cache, and passes both on to the progress it replaces, if any."""

    def __init__(self, previous: Progress | None, count: Callable[[int], object]):
        self.previous, self.count = previous, count

    def served_from_cache(self, n: int) -> None:
        if self.previous is not None:
            self.previous.served_from_cache(n)
        if n:
            self.count(n)

    def answered(self, completion: Completion) -> None:
        if self.previous is not None:
            self.previous.answered(completion)
        self.count(1)


@contextlib.contextmanager
def _requests_counted(llm: LLM, count: Callable[[int], object] | None) -> Iterator[None]:
    """Inside: each request `llm` answers (or finds cached) calls `count` (nothing without one)."""
    if count is None:
        yield
        return
    previous = llm.progress
    llm.progress = _CountedProgress(previous, count)
    try:
        yield
    finally:
        llm.progress = previous


class LLMExtractor:
    """App. C.1 through an LLM (see the module docstring); `key` changes with the model, settings, prompts."""

    kind = "llm"

    def __init__(
        self, runner: PromptRunner, post_check: str = "flagged", chunk_pois: int = DEFAULT_CHUNK_POIS
    ):
        if post_check not in POST_CHECK_MODES:
            raise ValueError(f"unknown post_check {post_check!r}; expected one of {POST_CHECK_MODES}")
        self.runner = runner
        self.llm = llm = runner.llm
        self.post_check = post_check
        self.chunk_pois = chunk_pois
        self.on_request: Callable[[int], object] | None = None  # a progress bar's update (UnitStore.ensure)
        hashes = prompt_hashes()
        identity = {
            "backend": llm.backend,
            "model": llm.cache_model,
            "settings": llm.settings.to_dict(),
            "prompts": {f: hashes[f] for f in ("item_snippets.txt", "name_check.txt", "prompts.json")},
            "post_check": post_check,
            "json_repairs": runner.json_repairs,
        }
        self.key = "llm-" + hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
        self._identity = identity

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "llm": self.llm.describe(), **self._identity}

    def extract(self, kb: KnowledgeBase, poi_ids: Sequence[str]) -> PoiUnits:
        t0 = time.perf_counter()
        usage0 = self.llm.usage
        jobs = [
            (pid, r.review_id, kb.review_text(r.review_id)) for pid in poi_ids for r in kb.reviews_of(pid)
        ]
        with _requests_counted(self.llm, self.on_request):
            replies = self.runner.json(
                "item_snippets",
                [(kb.poi(pid).poi_type, {"review": text}) for pid, _, text in jobs],
                SNIPPET_SCHEMA,
            )
        stats: dict[str, dict[str, float]] = {
            pid: dict.fromkeys(
                (
                    "reviews",
                    "failed_reviews",
                    "snippets",
                    "name_checked",
                    "name_check_empty",
                    "name_dropped",
                    "unaligned",
                ),
                0,
            )
            for pid in poi_ids
        }
        drafts: list[tuple[str, str, str]] = []  # (poi id, review id, snippet)
        for (pid, rid, _), reply in zip(jobs, replies, strict=True):
            stats[pid]["reviews"] += 1
            if isinstance(reply, LLMOutputError):
                stats[pid]["failed_reviews"] += 1
                continue
            drafts.extend((pid, rid, s) for s in clean_snippets(reply))
        checked = self._post_check(kb, drafts, stats)
        texts = {rid: text for _, rid, text in jobs}
        spans = {rid: sentence_spans(text) for rid, text in texts.items()}
        units: dict[str, list[Unit]] = {pid: [] for pid in poi_ids}
        for pid, rid, snippet in checked:
            span = align(snippet, texts[rid], spans[rid])
            if span is None:
                stats[pid]["unaligned"] += 1
            units[pid].append(Unit(snippet, rid, *(span or (None, None))))
            stats[pid]["snippets"] += 1
        usage = self.llm.usage
        seconds = time.perf_counter() - t0
        out: PoiUnits = {}
        for i, pid in enumerate(poi_ids):
            s = stats[pid]
            s["llm_calls"] = s["reviews"] + s["name_checked"]
            s["seconds"] = seconds * (s["reviews"] / len(jobs)) if jobs else 0.0
            if i == 0:  # the chunk's actual requests (cache misses) and tokens, counted once
                for key in ("requests", "cache_hits", "prompt_tokens", "completion_tokens", "json_repairs"):
                    s[f"llm_{key}"] = usage[key] - usage0[key]
            out[pid] = (units[pid] + poi_attribute_units(kb, pid), s)
        return out

    def _post_check(
        self, kb: KnowledgeBase, drafts: list[tuple[str, str, str]], stats: dict[str, dict[str, float]]
    ) -> list[tuple[str, str, str]]:
        names = {pid: kb.poi(pid).name for pid, _, _ in drafts}
        todo = [
            i
            for i, (pid, _, s) in enumerate(drafts)
            if self.post_check == "all" or needs_name_check(s, names[pid])
        ]
        replies = self.runner.text(
            "name_check",
            [
                (
                    kb.poi(drafts[i][0]).poi_type,
                    {"item_snippet": drafts[i][2], "item_name": names[drafts[i][0]]},
                )
                for i in todo
            ],
        )
        rewritten = dict(zip(todo, replies, strict=True))
        out = []
        for i, (pid, rid, snippet) in enumerate(drafts):
            if i in rewritten:
                stats[pid]["name_checked"] += 1
                line = rewritten[i]
                if line:
                    snippet = line
                else:
                    stats[pid]["name_check_empty"] += 1
            if still_named(snippet, names[pid]):
                stats[pid]["name_dropped"] += 1
                continue
            out.append((pid, rid, snippet))
        return out
