"""`trace-bench corpus release`: a generated corpus -> the redistributable `[Q:N]` release.

Every quote in turn text becomes a `[Q:N]` placeholder between the same quote marks; `quote_spans` keep
the review id, the offsets into the original review text and the span checksum, which is all hydration
needs to put the words back. The knowledge-base files travel byte for byte except `reviews.jsonl.gz`,
which never leaves the machine. Before the release is moved into place, every file (the card included)
is checked for six consecutive words of any knowledge-base review.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from trace_dataset.constants import (
    CORPUS_META_FILE,
    DATA_DIRNAME,
    KB_DIRNAME,
    KB_META_FILE,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEWS_FILE,
    SCHEMA_VERSION,
    SPLITS,
)
from trace_dataset.datadir import check_data_dir, kb_dir, split_file
from trace_dataset.io import TraceDataError, atomic_open, dumps, read_jsonl, sha256_file, write_json
from trace_dataset.quotes import PLACEHOLDER_RE, extract_quotes, placeholder, span_checksum
from trace_dataset.release.leaks import LEAK_NGRAM, ReviewNgrams, find_leaks
from trace_dataset.release.outdir import copy_bytes, staged_dir
from trace_dataset.release.records import check_dialogue, iter_numbered_jsonl

log = logging.getLogger(__name__)

RELEASE_META_FILE = "release.json"
RELEASE_FORMAT = "trace-release"
RELEASE_FORMAT_VERSION = 1


def release_dialogue(
    dialogue: dict[str, Any], review_texts: dict[str, str], *, path: os.PathLike | str, line: int
) -> dict[str, Any]:
    """The dialogue with each quote's content replaced by its `[Q:N]` placeholder (key order unchanged).

    Checks, for every quote, that it is the next span of `quote_spans` and equals
    review_text[start:end] with a matching checksum, so hydration is guaranteed to restore it.
    """
    spans = dialogue["quote_spans"]
    did = dialogue["dialogue_id"]
    k = 0
    turns = []
    for turn in dialogue["turns"]:
        text = turn["text"]
        tid = turn.get("turn_id")
        if PLACEHOLDER_RE.search(text):
            raise TraceDataError(
                f"dialogue {did!r} turn {tid}: text already contains a [Q:N] placeholder; a corpus to release "
                "must hold the quotes themselves (is this already a release?)",
                path=path,
                line=line,
            )
        quotes = extract_quotes(text)
        if not quotes:
            turns.append(turn)
            continue
        parts: list[str] = []
        pos = 0
        for q in quotes:
            if k >= len(spans):
                raise TraceDataError(
                    f"dialogue {did!r} turn {tid}: quote {q.text!r} has no quote_spans entry "
                    f"(the dialogue lists {len(spans)} span(s); every quote must be listed in order)",
                    path=path,
                    line=line,
                )
            span = spans[k]
            rid = span["review_id"]
            source = review_texts.get(rid)
            if source is None:
                raise TraceDataError(
                    f"dialogue {did!r} quote {k + 1}: unknown review id {rid!r} (not in the knowledge base's "
                    f"{REVIEWS_FILE})",
                    path=path,
                    line=line,
                )
            start, end = span["start"], span["end"]
            if end > len(source) or source[start:end] != q.text:
                raise TraceDataError(
                    f"dialogue {did!r} turn {tid} quote {k + 1}: {q.text!r} is not review {rid!r}[{start}:{end}] "
                    f"({source[start:end]!r})",
                    path=path,
                    line=line,
                )
            if span_checksum(q.text) != span["checksum"]:
                raise TraceDataError(
                    f"dialogue {did!r} quote {k + 1}: wrong checksum {span['checksum']!r}; "
                    f"expected span_checksum(quote) = {span_checksum(q.text)!r}",
                    path=path,
                    line=line,
                )
            parts.append(text[pos : q.start])
            parts.append(placeholder(span["quote_id"]))
            pos = q.end
            k += 1
        parts.append(text[pos:])
        turns.append({**turn, "text": "".join(parts)})
    if k != len(spans):
        raise TraceDataError(
            f"dialogue {did!r}: quote_spans lists {len(spans)} span(s) but the turns hold {k} quote(s)",
            path=path,
            line=line,
        )
    return {**dialogue, "turns": turns}


def _write_lines(path: Path, records: list[dict[str, Any]]) -> tuple[int, int]:
    """Write JSON lines (as io.write_jsonl does); returns (records, uncompressed bytes)."""
    size = 0
    with atomic_open(path, "w") as f:
        for record in records:
            line = dumps(record)
            f.write(line)
            f.write("\n")
            size += len(line.encode("utf-8")) + 1
    return len(records), size


def _load_review_texts(kb: Path) -> dict[str, str]:
    path = kb / REVIEWS_FILE
    if not path.exists():
        raise TraceDataError(
            f"the corpus knowledge base has no {REVIEWS_FILE}: the release needs the review text to check every "
            "quote's offsets and checksum (release a generated corpus, not a release)",
            path=kb,
        )
    texts: dict[str, str] = {}
    for lineno, rec in iter_numbered_jsonl(path):
        if not isinstance(rec.get("review_id"), str) or not isinstance(rec.get("text"), str):
            raise TraceDataError("review record: expected string review_id and text", path=path, line=lineno)
        texts[rec["review_id"]] = rec["text"]
    return texts


def write_release(corpus_dir: str | os.PathLike, out_dir: str | os.PathLike) -> dict[str, Any]:
    """Write the release of a generated corpus to `out_dir`; returns the release.json content."""
    from trace_dataset.release.card import DialogueTally, write_card
    from trace_dataset.release.eval_yaml import write_eval_yaml

    corpus_dir = check_data_dir(corpus_dir)
    kb = kb_dir(corpus_dir)
    texts, index_ids = _read_corpus_kb(corpus_dir, kb)
    counts: dict[str, int] = {}
    n_quotes = 0
    quoted: set[str] = set()
    seen: dict[str, str] = {}
    tally = DialogueTally()
    with staged_dir(out_dir, RELEASE_META_FILE, protect=(corpus_dir,)) as stage:
        for split in SPLITS:
            released = _release_split(split_file(corpus_dir, split), split, texts, seen)
            for d in released:  # release_dialogue leaves quote_spans as they were
                n_quotes += len(d["quote_spans"])
                quoted.update(s["review_id"] for s in d["quote_spans"])
            counts[split], tally.split_bytes[split] = _write_lines(split_file(stage, split), released)
            for d in released:
                tally.add(split, d)
        for name in (POIS_FILE, REVIEW_INDEX_FILE, KB_META_FILE):
            if (kb / name).exists():
                copy_bytes(kb / name, stage / KB_DIRNAME / name)
        if (corpus_dir / CORPUS_META_FILE).exists():
            copy_bytes(corpus_dir / CORPUS_META_FILE, stage / CORPUS_META_FILE)

        # What hydration must give back, byte for byte (hashes only: no text leaves the machine).
        expected = {f"{DATA_DIRNAME}/{s}.jsonl.gz": sha256_file(split_file(corpus_dir, s)) for s in SPLITS}
        expected[f"{KB_DIRNAME}/{REVIEWS_FILE}"] = sha256_file(kb / REVIEWS_FILE)
        meta: dict[str, Any] = {
            "format": RELEASE_FORMAT,
            "format_version": RELEASE_FORMAT_VERSION,
            "schema_version": SCHEMA_VERSION,
            "placeholder": "[Q:N]",
            "dialogues": counts,
            "quotes": n_quotes,
            "quoted_reviews": len(quoted),
            "indexed_reviews": len(index_ids),
            "hydrated_sha256": expected,
        }
        write_json(stage / RELEASE_META_FILE, meta)
        write_card(stage, tally=tally)
        write_eval_yaml(stage, counts)  # the Hub's benchmark registration (release/eval_yaml.py)

        leaks = find_leaks(stage, ReviewNgrams(texts))
        if leaks:
            raise TraceDataError(
                f"the release would redistribute review text: {len(leaks)} record(s) hold {LEAK_NGRAM} "
                "consecutive words of a knowledge-base review, e.g. "
                + "; ".join(str(x) for x in leaks[:3])
                + ". Fix the corpus (only quoted spans may come from reviews) and release again.",
                path=corpus_dir,
            )
    log.info("release written to %s: %s dialogues, %d quotes", out_dir, counts, n_quotes)
    return meta


def _read_corpus_kb(corpus_dir: Path, kb: Path) -> tuple[dict[str, str], set[str]]:
    """The corpus knowledge base's review texts and review-index ids (every text must be indexed)."""
    for name in (POIS_FILE, REVIEW_INDEX_FILE):
        if not (kb / name).exists():
            raise TraceDataError(f"missing {KB_DIRNAME}/{name}", path=corpus_dir)
    texts = _load_review_texts(kb)
    index_ids = {r["review_id"] for r in read_jsonl(kb / REVIEW_INDEX_FILE)}
    unindexed = sorted(set(texts) - index_ids)
    if unindexed:
        raise TraceDataError(
            f"{len(unindexed)} review(s) of {REVIEWS_FILE} are missing from {REVIEW_INDEX_FILE} "
            f"(first: {unindexed[:3]}); hydration could not restore them",
            path=kb,
        )
    return texts, index_ids


def _release_split(
    src: Path, split: str, texts: dict[str, str], seen: dict[str, str]
) -> list[dict[str, Any]]:
    """The released dialogues of one split file, each checked (its split, a dialogue id seen nowhere
    before: `seen` maps ids to file:line across the splits)."""
    released = []
    for lineno, d in tqdm(
        iter_numbered_jsonl(src),
        desc=f"release {split}",
        unit=" dialogues",
        disable=None,
        leave=False,
    ):
        check_dialogue(d, path=src, line=lineno)
        if d["split"] != split:
            raise TraceDataError(
                f"dialogue {d['dialogue_id']!r} has split {d['split']!r} but sits in the {split!r} file",
                path=src,
                line=lineno,
            )
        if d["dialogue_id"] in seen:
            raise TraceDataError(
                f"duplicate dialogue_id {d['dialogue_id']!r} (also in {seen[d['dialogue_id']]})",
                path=src,
                line=lineno,
            )
        seen[d["dialogue_id"]] = f"{src.name}:{lineno}"
        released.append(release_dialogue(d, texts, path=src, line=lineno))
    return released
