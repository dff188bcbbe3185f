"""RAG-Citation (App. F "RAGCitationBaseline"): evidence sentences, a citation constraint, checked and retried.

- Evidence: the review sentences of the shown candidates (the pool without rejected POIs; on a pool larger
  than 16, the prefilter's top 16, App. Q), cut as the template responses cut them (`EvidenceIndex` pieces:
  sentences, line breaks and double quotes delimit them; pieces under 4 words are dropped). Each is scored by
  Jaccard similarity between its content tokens and those of the user's turns so far (`baselines.toolkit.text.
  content_tokens`: lower-cased words, the 80 stop words and one-character tokens removed, i.e. the TF-IDF
  baseline's tokens, as sets); the top `evidence_k` (10) go into the prompt as `[Rn] POI name (Pk, stars):
  "sentence"`, ties to the higher review stars, then candidate order, then review and sentence order.
- Answer: `{"ranked_ids", "response"}` like Zero-Shot (`baselines.llm.common`), with the candidates listed
  one line each (no review text besides the evidence).
- Check (`quote_check`, recommend and compare turns): the response passes when one of its double-quoted
  spans has at least `min_quote_tokens` (10) word tokens (`\\w+`, the metrics' tokens), is an exact substring
  of the sentence shown under a label, and the response uses that label.
- Retries: a failing response is sent back (the answer as the assistant turn, then the `retry` message), up to
  `max_quote_retries` (2) times, batched. After the last failure the last response is kept unchanged, its
  `meta.quote_check.passed` is false and `counts.quote_check_failed` counts it; nothing is inserted into it.
  A retry whose JSON stays invalid ends the retries for that turn and keeps the previous response
  (`counts.quote_retry_invalid`). A first answer whose JSON stays invalid falls back to Popularity.
"""

from __future__ import annotations

import heapq
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE
from baselines.llm.common import (
    LLMPipeline,
    add_count,
    complete_ranking,
    completion_scores,
    failure_text,
    messages,
    ranking_schema,
)
from baselines.llm.prompting import LabelMap, candidate_labels, format_history, poi_header
from baselines.toolkit.output import TurnOutput
from baselines.toolkit.responses import EvidenceIndex, poi_name
from baselines.toolkit.text import content_tokens
from trace_dataset.constants import RECOMMENDATION_ACTIONS
from trace_dataset.quotes import CITATION_LABEL_RE, extract_quotes
from trace_llm import LLMOutputError

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

DEFAULT_EVIDENCE_K = 10  # App. F: "top-10 review sentences"
MIN_QUOTE_TOKENS = 10  # App. F: "at least one verbatim quote (>= 10 tokens)"
MAX_QUOTE_RETRIES = 2  # App. F: "up to 2 retries"
WORD_RE = re.compile(r"\w+")


@dataclass(frozen=True)
class Sentence:
    poi_id: str
    review_id: str
    text: str
    score: float


def jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def top_sentences(
    kb: KnowledgeBase,
    evidence: EvidenceIndex,
    candidates: Sequence[str],
    query: str,
    k: int = DEFAULT_EVIDENCE_K,
) -> list[Sentence]:
    """The k review sentences of the candidates most similar (Jaccard) to the query, best first."""
    terms = frozenset(content_tokens(query))
    n_terms = len(terms)
    scored = []
    for c, pid in enumerate(candidates):
        for j, piece in enumerate(evidence.pieces(pid)):
            shared = 0 if terms.isdisjoint(piece.terms) else len(terms & piece.terms)
            union = n_terms + len(piece.terms) - shared  # jaccard() without building the union set
            scored.append(
                ((-(shared / union if union else 0.0), -piece.stars, c, piece.review_pos, j), pid, piece)
            )
    best = heapq.nsmallest(k, scored, key=itemgetter(0))
    return [
        Sentence(pid, piece.review_id, kb.review_text(piece.review_id)[piece.start : piece.end], -key[0])
        for key, pid, piece in best
    ]


def quote_check(response: str, evidence: Mapping[str, str], min_tokens: int = MIN_QUOTE_TOKENS) -> str | None:
    """The label of the first quote that passes (see the module docstring), or None."""
    used = [f"R{int(m.group(1))}" for m in CITATION_LABEL_RE.finditer(response)]
    used = [lab for lab in dict.fromkeys(used) if lab in evidence]
    for quote in extract_quotes(response):
        text = quote.text.strip()
        if len(WORD_RE.findall(text)) < min_tokens:
            continue
        for label in used:
            if text in evidence[label]:
                return label
    return None


class RAGCitationBaseline(LLMPipeline):
    name: ClassVar[str] = "rag_citation"
    config_keys: ClassVar[tuple[str, ...]] = (
        "prefilter",
        "prefilter_k",
        "evidence_k",
        "min_quote_tokens",
        "max_quote_retries",
    )

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        evidence_k: int = DEFAULT_EVIDENCE_K,
        min_quote_tokens: int = MIN_QUOTE_TOKENS,
        max_quote_retries: int = MAX_QUOTE_RETRIES,
        **params: Any,
    ):
        for key, value, low in (
            ("evidence_k", evidence_k, 1),
            ("min_quote_tokens", min_quote_tokens, 1),
            ("max_quote_retries", max_quote_retries, 0),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{key} must be an integer >= {low}, got {value!r}")
        super().__init__(kb, batch_size, **params)
        self.evidence_k = evidence_k
        self.min_quote_tokens = min_quote_tokens
        self.max_quote_retries = max_quote_retries
        self.evidence = EvidenceIndex(kb)

    def build(
        self, inp: Mapping[str, Any]
    ) -> tuple[list[dict[str, str]], dict[str, Any], list, LabelMap, dict]:
        labelled = candidate_labels(inp["shown"])
        by_pid = {pid: lab for lab, pid in labelled}
        labels = LabelMap()
        shown_text: dict[str, str] = {}
        lines = []
        for s in top_sentences(self.kb, self.evidence, inp["shown"], inp["query"], self.evidence_k):
            label = labels.add(s.review_id)
            shown_text[label] = s.text
            stars = self.kb.pois[s.poi_id].stars
            lines.append(
                f'[{label}] {poi_name(self.kb, s.poi_id)} ({by_pid[s.poi_id]}, {stars:.1f} stars): "{s.text}"'
            )
        fields = {
            "city": inp["city"],
            "poi_type": inp["poi_type"],
            "candidates": "\n".join(poi_header(self.kb, lab, pid) for lab, pid in labelled)
            or "(no candidates left)",
            "evidence": "\n".join(lines) or "(no evidence)",
            "history": format_history(inp["history"]),
            "instruction": self.prompt.render(inp["action"]),
        }
        ranked = inp["action"] in RECOMMENDATION_ACTIONS and bool(labelled)
        conv = messages(self.prompt.render("system", **fields), self.prompt.render("user", **fields))
        return conv, ranking_schema([lab for lab, _ in labelled], ranked), labelled, labels, shown_text

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        self.prefilter_batch(inputs)
        built = [self.build(inp) for inp in inputs]
        convs = [b[0] for b in built]
        answers = self.ask_json(convs, [b[1] for b in built])
        checked = [
            inp["action"] in RECOMMENDATION_ACTIONS and bool(b[4]) and not isinstance(a, LLMOutputError)
            for inp, b, a in zip(inputs, built, answers, strict=True)
        ]
        attempts = [1] * len(inputs)
        passed: list[str | None] = [None] * len(inputs)
        invalid_retry = [False] * len(inputs)
        for i, (b, a) in enumerate(zip(built, answers, strict=True)):
            if checked[i]:
                passed[i] = quote_check(a["response"], b[4], self.min_quote_tokens)
        retry_msg = self.prompt.render("retry", min_tokens=self.min_quote_tokens)
        for _ in range(self.max_quote_retries):
            todo = [
                i for i in range(len(inputs)) if checked[i] and passed[i] is None and not invalid_retry[i]
            ]
            if not todo:
                break
            for i in todo:
                convs[i] = [
                    *convs[i],
                    {"role": "assistant", "content": json.dumps(answers[i], ensure_ascii=False)},
                    {"role": "user", "content": retry_msg},
                ]
            again = self.ask_json([convs[i] for i in todo], [built[i][1] for i in todo])
            for i, a in zip(todo, again, strict=True):
                attempts[i] += 1
                if isinstance(a, LLMOutputError):
                    invalid_retry[i] = True
                    continue
                answers[i] = a
                passed[i] = quote_check(a["response"], built[i][4], self.min_quote_tokens)
        outputs = []
        for i, inp in enumerate(inputs):
            _, _, labelled, labels, _ = built[i]
            answer = answers[i]
            if isinstance(answer, LLMOutputError):
                outputs.append(self.fallback(inp, failure_text(answer)))
                continue
            meta: dict[str, Any] = {}
            if checked[i]:
                meta["quote_check"] = {
                    "attempts": attempts[i],
                    "passed": passed[i] is not None,
                    "label": passed[i],
                }
                add_count(meta, "quote_retries", attempts[i] - 1)
                add_count(meta, "quote_check_failed", int(passed[i] is None))
                add_count(meta, "quote_retry_invalid", int(invalid_retry[i]))
            ranked: list[str] = []
            scores = None
            if inp["action"] in RECOMMENDATION_ACTIONS and labelled:
                by_label = dict(labelled)
                meta["model_ranking"] = list(answer["ranked_ids"])
                chosen = [by_label[lab] for lab in answer["ranked_ids"]]
                ranked = complete_ranking(chosen, inp["shown"], inp["rest"])
                scores = completion_scores(chosen, inp["shown"], inp["rest"], inp.get("prefilter_scores"))
            outputs.append(self.output(inp, ranked, answer["response"], labels, meta, scores))
        return outputs
