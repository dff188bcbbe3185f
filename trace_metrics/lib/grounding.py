"""Grounding of one response in the reviews it cites (§3, App. J Algorithm 1, App. L).

A response cites reviews with `[Rn]` labels; `sources[n-1]` is the text of the review label `[Rn]` points
to (None, or n out of range, when the label points nowhere: an *unresolved* label, which cites nothing).
The *cited texts* of a response are the texts of the resolved labels that occur in it.

- **Grounding Score (GS)**: share of the response's quotes (double-quoted spans, straight or curly, via
  `trace_dataset.quotes.extract_quotes`) whose best rapidfuzz `partial_ratio` against the cited texts is
  >= the threshold (0.8). Each quote is checked against every cited text of the response, not only the label
  next to it (responses put labels before, after or once for several quotes). A quote whose response cites
  nothing resolvable is unsupported. No quotes -> GS = 1.0 (vacuous, as the paper says).
- **Citation Density (CD)**: word tokens (`\\w+`) inside *verbatim* quotes (exact substrings of a cited text)
  / word tokens of the response; `[Rn]` labels are markup and count in neither. No tokens -> 0.0.
- **Provenance Coverage (PC)**, Algorithm 1: the 41 aspect terms of `constants.ASPECT_TERMS`, matched
  whole-word and case-insensitively; a mention at offset p is covered when a resolved `[Rn]` label starts
  within [p - w, p + w] (w = 80 characters). Repeated mentions of one term are merged into one mention that is
  covered if any occurrence is; overlapping terms each count once. No mentions -> PC = 1.0.
- **CGS** = GS x min(1, CD / gate) x (0.5 + 0.5 x PC), gate = 0.05 (`composite`). Over several responses,
  `cgs` applies the formula to the GS, CD and PC means (how the paper's Tables 5, 22 and 26 aggregate, and
  the leaderboard's headline); `cgs_turn_mean` is the mean of each response's own CGS (`cgs_per_item`).

`analyse` does the text work once per response; the metric values at any threshold, window or gate are then
cheap, which is what the sensitivity sweeps use.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple

from trace_dataset.constants import ASPECT_TERMS, QUOTE_MATCH_THRESHOLD
from trace_dataset.quotes import CITATION_LABEL_RE, QUOTE_RE, quote_support
from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.tokenize import WORD_RE, ascii_word_tokens, word_count

DEFAULT_FUZZY_THRESHOLD = QUOTE_MATCH_THRESHOLD  # 0.8
DEFAULT_CD_GATE = 0.05
DEFAULT_PC_WINDOW = 80
GROUNDING_IDS: tuple[str, ...] = ("grounding_score", "citation_density", "provenance_coverage", "cgs")

Threshold = float | Literal["exact"]


# ---------------------------------------------------------------------------------------------------
# Aspect mentions (Algorithm 1 lines 2-5)
# ---------------------------------------------------------------------------------------------------
def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"  # what `\w` matches in a str pattern


class AspectMatcher:
    """Finds whole-word, case-insensitive mentions of a term list.

    `mentions` lower-cases the text once, keeps only the terms whose first word (its leading `\\w+` run) is
    one of the text's words (a whole-word match of a term starts with such a word, so no mention is lost),
    and runs `str.find` for those with the `\\b` boundary checks done by hand (every term starts and ends
    with a word character): several times faster than a regex alternation or a `find` per term. Text whose
    lower-casing changes its length (rare Unicode) goes through the regex path. `mentions_reference` is
    Algorithm 1 literally (a word-boundary regex per term); tests check both agree.
    """

    def __init__(self, terms: Sequence[str] = ASPECT_TERMS):
        self.terms = tuple(dict.fromkeys(t.lower() for t in terms))
        if not self.terms or any(not t or not _is_word(t[0]) or not _is_word(t[-1]) for t in self.terms):
            raise ValueError(f"aspect terms must start and end with a letter or digit; got {terms!r}")
        self._patterns = tuple(re.compile(r"\b" + re.escape(t) + r"\b", re.IGNORECASE) for t in self.terms)
        by_word: dict[str, list[int]] = {}  # first word of a term -> indices of the terms starting with it
        for k, t in enumerate(self.terms):
            first = WORD_RE.match(t)
            assert first is not None  # checked above: every term starts with a letter or digit
            by_word.setdefault(first.group(), []).append(k)
        self._by_word = by_word
        self._by_ascii_word = {w.encode("ascii"): ks for w, ks in by_word.items() if w.isascii()}

    def mentions(self, text: str) -> list[tuple[str, int]]:
        """(term, offset) of every mention (per term, in text order)."""
        return self.scan(text)[0]

    def scan(self, text: str) -> tuple[list[tuple[str, int]], int]:
        """(`mentions(text)`, `len(word_tokens(text))`): both from one pass over the words."""
        low = text.lower()
        if text.isascii():
            words: list = ascii_word_tokens(low)  # ASCII lower-casing keeps every word as it is
            n_words = len(words)
            index: Mapping[Any, list[int]] = self._by_ascii_word
        else:
            n_words = len(WORD_RE.findall(text))
            if len(low) != len(text):
                return self.mentions_reference(text), n_words
            # same length: character i of `low` is character i of `text` lower-cased, and a mention's first
            # word is a maximal run of word characters of `low`, i.e. one of these words
            words = WORD_RE.findall(low)
            index = self._by_word
        candidates = index.keys() & words
        if not candidates:
            return [], n_words
        out = []
        n = len(low)
        for k in sorted(k for w in candidates for k in index[w]):
            term = self.terms[k]
            i = low.find(term)
            while i >= 0:
                j = i + len(term)
                if (i == 0 or not _is_word(low[i - 1])) and (j == n or not _is_word(low[j])):
                    out.append((term, i))
                    i = low.find(term, j)
                else:
                    i = low.find(term, i + 1)
        return out, n_words

    def mentions_reference(self, text: str) -> list[tuple[str, int]]:
        """Algorithm 1 literally: for each term, every whole-word case-insensitive regex match."""
        return [
            (t, m.start())
            for t, pattern in zip(self.terms, self._patterns, strict=True)
            for m in pattern.finditer(text)
        ]


DEFAULT_MATCHER = AspectMatcher(ASPECT_TERMS)


# ---------------------------------------------------------------------------------------------------
# One response
# ---------------------------------------------------------------------------------------------------
class GroundingAnalysis(NamedTuple):
    """What the grounding metrics need from one response, parameter-free."""

    supports: tuple[float, ...]  # per quote: best partial_ratio (fraction) against the cited texts
    verbatim: tuple[bool, ...]  # per quote: exact substring of a cited text
    quote_tokens: int  # word tokens inside verbatim quotes (labels excluded)
    tokens: int  # word tokens of the response (labels excluded)
    term_distances: tuple[
        float, ...
    ]  # per distinct aspect term: chars to the nearest resolved label (inf: none)
    labels: int  # [Rn] labels in the response
    unresolved_labels: int  # labels that point to no source text

    def grounding_score(self, threshold: Threshold = DEFAULT_FUZZY_THRESHOLD) -> float:
        if not self.supports:
            return 1.0
        if threshold == "exact":
            return sum(self.verbatim) / len(self.verbatim)
        return sum(1 for s in self.supports if s >= threshold) / len(self.supports)

    def citation_density(self) -> float:
        return self.quote_tokens / self.tokens if self.tokens > 0 else 0.0

    def provenance_coverage(self, window: float = DEFAULT_PC_WINDOW) -> float:
        if not self.term_distances:
            return 1.0
        return sum(1 for d in self.term_distances if d <= window) / len(self.term_distances)

    def cgs(
        self,
        threshold: Threshold = DEFAULT_FUZZY_THRESHOLD,
        gate: float = DEFAULT_CD_GATE,
        window: float = DEFAULT_PC_WINDOW,
    ) -> float:
        return composite(
            self.grounding_score(threshold), self.citation_density(), self.provenance_coverage(window), gate
        )


_new_analysis = tuple.__new__  # GroundingAnalysis(...) without keyword parsing, in the per-response loop


def resolve_labels(text: str, sources: Sequence[str | None]) -> tuple[list[int], list[str], int]:
    """Offsets of resolved labels, the distinct cited texts (in label order) and the unresolved-label count."""
    positions: list[int] = []
    texts: list[str] = []
    unresolved = 0
    if "[R" not in text:
        return positions, texts, unresolved
    for m in CITATION_LABEL_RE.finditer(text):
        n = int(m.group(1))
        source = sources[n - 1] if 1 <= n <= len(sources) else None
        if source is None:
            unresolved += 1
            continue
        positions.append(m.start())
        if source not in texts:
            texts.append(source)
    return positions, texts, unresolved


def analyse(
    response: str, sources: Sequence[str | None], matcher: AspectMatcher = DEFAULT_MATCHER
) -> GroundingAnalysis:
    """Quotes, their support, verbatim tokens and aspect-term citation distances of one response."""
    positions, cited, unresolved = resolve_labels(response, sources)
    n_labels = len(positions) + unresolved
    supports: list[float] = []
    verbatim: list[bool] = []
    quote_tokens = 0
    # `extract_quotes` without building Quote tuples: QUOTE_RE's first group (straight quotes) is never empty
    # when it takes part, so `straight or curly` is the group `extract_quotes` takes
    for straight, curly in QUOTE_RE.findall(response) if '"' in response or "\u201c" in response else ():
        text = straight or curly
        if not text.strip():
            continue
        exact = False
        for c in cited:
            if text in c:
                exact = True
                break
        verbatim.append(exact)
        supports.append(1.0 if exact else quote_support(text, cited))
        if exact:
            n = word_count(text)
            if "[R" in text:
                n -= len(CITATION_LABEL_RE.findall(text))
            quote_tokens += n
    mentions, n_words = matcher.scan(response)
    tokens = n_words - n_labels
    distances: dict[str, float] = {}
    n_pos = len(positions)
    for term, p in mentions:
        if n_pos:
            i = bisect_left(positions, p)
            d = positions[i] - p if i < n_pos else math.inf
            if i > 0 and p - positions[i - 1] < d:
                d = p - positions[i - 1]
        else:
            d = math.inf
        if term not in distances or d < distances[term]:
            distances[term] = d
    return _new_analysis(
        GroundingAnalysis,
        (
            tuple(supports),
            tuple(verbatim),
            quote_tokens,
            max(tokens, 0),
            tuple(distances.values()),
            n_labels,
            unresolved,
        ),
    )


def grounding_score(
    response: str, sources: Sequence[str | None], threshold: Threshold = DEFAULT_FUZZY_THRESHOLD
) -> float:
    return analyse(response, sources).grounding_score(threshold)


def citation_density(response: str, sources: Sequence[str | None]) -> float:
    return analyse(response, sources).citation_density()


def provenance_coverage(
    response: str, sources: Sequence[str | None], window: float = DEFAULT_PC_WINDOW
) -> float:
    return analyse(response, sources).provenance_coverage(window)


def composite(gs, cd, pc, gate: float = DEFAULT_CD_GATE):
    """CGS = GS x min(1, CD / gate) x (0.5 + 0.5 x PC): the one CGS formula (also CGS_ent with GS = entailment).

    Scalars give a float; numpy arrays give an array (elementwise).
    """
    if not gate > 0:
        raise ValueError(f"cd gate must be > 0; got {gate!r}")
    if type(gs) is float and type(cd) is float and type(pc) is float:  # one response (the common case)
        return gs * min(1.0, cd / gate) * (0.5 + 0.5 * pc)
    if any(isinstance(x, (list, tuple)) or getattr(x, "ndim", 0) > 0 for x in (gs, cd, pc)):
        import numpy as np

        gs, cd, pc = (np.asarray(x, dtype=float) for x in (gs, cd, pc))
        return gs * np.minimum(1.0, cd / gate) * (0.5 + 0.5 * pc)
    return float(gs) * min(1.0, float(cd) / gate) * (0.5 + 0.5 * float(pc))


def of_means(
    gs: float | None, cd: float | None, pc: float | None, gate: float = DEFAULT_CD_GATE
) -> float | None:
    """The CGS formula on three means (the tables' CGS, and CGS_ent with the entailment mean); None if any is."""
    if gs is None or cd is None or pc is None:
        return None
    return composite(gs, cd, pc, gate)


def check_parameters(fuzzy_threshold: Threshold, cd_gate: float, pc_window: float) -> None:
    if fuzzy_threshold != "exact" and not (
        isinstance(fuzzy_threshold, (int, float)) and 0.0 <= fuzzy_threshold <= 1.0
    ):
        raise ValueError(f"fuzzy_threshold must be in [0, 1] or 'exact'; got {fuzzy_threshold!r}")
    if not (isinstance(cd_gate, (int, float)) and cd_gate > 0):
        raise ValueError(f"cd_gate must be > 0; got {cd_gate!r}")
    if not (isinstance(pc_window, (int, float)) and pc_window >= 0):
        raise ValueError(f"pc_window must be >= 0 characters; got {pc_window!r}")


def aggregate(
    analyses: Sequence[GroundingAnalysis],
    fuzzy_threshold: Threshold = DEFAULT_FUZZY_THRESHOLD,
    cd_gate: float = DEFAULT_CD_GATE,
    pc_window: float = DEFAULT_PC_WINDOW,
    return_per_item: bool = False,
    recommending: Sequence[bool] | None = None,
) -> dict:
    """Means over responses. `cgs` applies the formula to the GS, CD and PC means (how the paper's Tables 5,
    22 and 26 aggregate); `cgs_turn_mean` is the mean of per-response CGS (`cgs_per_item`).

    `recommending` (one flag per response, for grounding over every system turn): App. J's rule that a turn
    with no aspect mention is left out of the PC mean when it recommends nothing either (its PC item is None;
    its own CGS still takes the vacuous PC = 1). Without it every response counts, as on recommend/compare
    turns, where the rule excludes nothing.
    """
    check_parameters(fuzzy_threshold, cd_gate, pc_window)
    gs = [a.grounding_score(fuzzy_threshold) for a in analyses]
    cd = [a.citation_density() for a in analyses]
    pc = [a.provenance_coverage(pc_window) for a in analyses]
    # per item, vectorised: numpy does the same IEEE operations in the same order as the scalar formula
    cgs: list[float] = composite(gs, cd, pc, cd_gate).tolist()
    if recommending is not None:
        if len(recommending) != len(analyses):
            raise ValueError(f"{len(recommending)} recommending flags for {len(analyses)} responses")
        pc_items: list[float | None] = [
            None if not rec and not a.term_distances else p
            for a, p, rec in zip(analyses, pc, recommending, strict=True)
        ]
    else:
        pc_items = list(pc)
    out: dict = {
        "grounding_score": mean_or_none(gs),
        "citation_density": mean_or_none(cd),
        "provenance_coverage": mean_or_none(pc_items),
    }
    out["cgs"] = of_means(
        out["grounding_score"], out["citation_density"], out["provenance_coverage"], cd_gate
    )
    out["cgs_turn_mean"] = mean_or_none(cgs)
    out["n"] = len(analyses)
    out["n_quotes"] = sum(len(a.supports) for a in analyses)
    out["n_unresolved_labels"] = sum(a.unresolved_labels for a in analyses)
    if return_per_item:
        out["grounding_score_per_item"] = gs
        out["citation_density_per_item"] = cd
        out["provenance_coverage_per_item"] = pc_items
        out["cgs_per_item"] = cgs
    return out


def score(
    predictions: Sequence[str],
    references: Sequence[Sequence[str | None]],
    fuzzy_threshold: Threshold = DEFAULT_FUZZY_THRESHOLD,
    cd_gate: float = DEFAULT_CD_GATE,
    pc_window: float = DEFAULT_PC_WINDOW,
    return_per_item: bool = False,
) -> dict:
    """Grounding metrics of responses; `references[i][n-1]` is the text label [Rn] of response i cites."""
    if len(predictions) != len(references):
        raise ValueError(
            f"{len(predictions)} responses but {len(references)} reference lists; expected one per response"
        )
    check_parameters(fuzzy_threshold, cd_gate, pc_window)
    analyses = []
    for i, (response, sources) in enumerate(zip(predictions, references, strict=True)):
        if not isinstance(response, str):
            raise ValueError(f"response {i} is {type(response).__name__}; expected a string")
        analyses.append(analyse(response, list(sources or ())))
    return aggregate(analyses, fuzzy_threshold, cd_gate, pc_window, return_per_item)
