"""Template responses for every system action, quoting verbatim review spans with [Rn] labels.

The paper's non-LLM baselines answer with fixed templates per action and quote review text, which is what
their grounding scores (GS near 1.0, citation density ~0.4) measure. Here every quote is an exact substring
of the cited review's text, chosen by a deterministic rule relevant to the query, so the grounding metrics
see verbatim evidence and nothing else.

Quote rule (`EvidenceIndex`): a review is cut into sentences (at . ! ? followed by space, and at line
breaks) and further at double-quote characters (a quote must not contain one). Pieces of fewer than
`min_words` words are dropped; longer than `max_words` words, the best window of `max_words` words is used.
A span's score is the number of distinct query terms (content tokens, baselines.toolkit.text) it contains; ties go
to the higher-starred review, then the earlier review in knowledge-base order, then the earlier span.
Leading/trailing whitespace and punctuation that would dangle (",;:-" and brackets) are trimmed from a
piece (and from a window); words are the whitespace-separated runs of what remains. A span stays an exact
substring of the review.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from baselines.toolkit.state import DialogueState
from baselines.toolkit.text import STOP_WORDS, TOKEN_RE
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.quotes import CITATION_LABEL_RE, PLACEHOLDER_RE
from trace_dataset.records import Review

DEFAULT_MAX_QUOTE_WORDS = 20
DEFAULT_MIN_QUOTE_WORDS = 4

# Sentence ends, line breaks and double-quote characters delimit candidate pieces.
_PIECE_SPLIT_RE = re.compile(r"(?<=[.!?])\s+|[\r\n]+|[\"\u201c\u201d]")
_WORD_RE = re.compile(r"\S+")
_LEAD_STRIP = " \t\r\n\f\v\u00a0,;:-\u2013\u2014)]}("
_TRAIL_STRIP = " \t\r\n\f\v\u00a0,;:-\u2013\u2014([{"

TYPE_NOUNS: dict[str, tuple[str, str]] = {  # poi_type -> (singular, plural)
    "restaurant": ("restaurant", "restaurants"),
    "hotel": ("hotel", "hotels"),
    "attraction": ("attraction", "attractions"),
}


@dataclass(frozen=True)
class Evidence:
    """One verbatim quote: `span == kb.review_text(review_id)[start:end]`."""

    poi_id: str
    review_id: str
    span: str
    start: int
    end: int
    overlap: int  # distinct query terms in the span


@dataclass(frozen=True)
class _Piece:
    review_pos: int
    review_id: str
    stars: float
    start: int  # offsets of the whole (trimmed) piece in the review text
    end: int
    terms: frozenset[str]  # content tokens of the piece
    # Only for pieces longer than max_words: each word's (start, end) and content tokens, for windows.
    words: tuple[tuple[int, int], ...] | None = None
    word_terms: tuple[frozenset[str], ...] | None = None


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    """Offsets of text[start:end] without leading/trailing whitespace and dangling punctuation."""
    piece = text[start:end]
    lead = len(piece) - len(piece.lstrip(_LEAD_STRIP))
    return start + lead, start + len(piece.rstrip(_TRAIL_STRIP))


def _content(text: str) -> frozenset[str]:
    return frozenset(t for t in TOKEN_RE.findall(text.lower()) if len(t) > 1 and t not in STOP_WORDS)


class EvidenceIndex:
    """Candidate quote spans of each POI's reviews, cut once per review and kept for the pipeline's life.

    Built lazily from one knowledge base, review by review as `best` needs them; it holds no dialogue state,
    so sharing it across dialogues keeps session isolation.
    """

    def __init__(
        self,
        kb: KnowledgeBase,
        max_words: int = DEFAULT_MAX_QUOTE_WORDS,
        min_words: int = DEFAULT_MIN_QUOTE_WORDS,
    ):
        if not 1 <= min_words <= max_words:
            raise ValueError(
                f"need 1 <= min_words <= max_words, got min_words={min_words}, max_words={max_words}"
            )
        self.kb = kb
        self.max_words = max_words
        self.min_words = min_words
        self._pieces: dict[str, list[_Piece]] = {}  # review_id -> its pieces
        self._terms: dict[str, frozenset[str]] = {}  # review_id -> content tokens of the whole review
        self._by_rank: dict[str, list[tuple[int, Review]]] = {}  # poi_id -> (review_pos, review) in tie order
        self._word_terms: dict[str, frozenset[str]] = {}  # a word (as cut) -> its content tokens

    def pieces(self, poi_id: str) -> list[_Piece]:
        """The POI's pieces in review order (knowledge-base order, then order in the review)."""
        return [
            p
            for pos, review in enumerate(self.kb.reviews_of(poi_id))
            for p in self._review_pieces(pos, review)
        ]

    def _ranked(self, poi_id: str) -> list[tuple[int, Review]]:
        """(review_pos, review) in `best`'s tie order: higher-starred reviews first, then knowledge-base order."""
        cached = self._by_rank.get(poi_id)
        if cached is None:
            ordered = sorted(enumerate(self.kb.reviews_of(poi_id)), key=lambda pr: (-pr[1].stars, pr[0]))
            cached = self._by_rank[poi_id] = ordered
        return cached

    def _review_terms(self, review_id: str) -> frozenset[str]:
        """Every content token of the review: no piece of it shares more query terms than the review does."""
        cached = self._terms.get(review_id)
        if cached is None:
            cached = self._terms[review_id] = _content(self.kb.review_text(review_id))
        return cached

    def _review_pieces(self, pos: int, review: Review) -> list[_Piece]:
        cached = self._pieces.get(review.review_id)
        if cached is None:
            cached = self._pieces[review.review_id] = self._cut(pos, review)
        return cached

    def _cut(self, pos: int, review: Review) -> list[_Piece]:
        out: list[_Piece] = []
        text = self.kb.review_text(review.review_id)
        piece_start = 0
        for m in [*_PIECE_SPLIT_RE.finditer(text), None]:
            a, b = piece_start, (len(text) if m is None else m.start())
            piece_start = len(text) if m is None else m.end()
            a, b = _strip(text, a, b)
            piece = text[a:b]
            if "[" in piece and (CITATION_LABEL_RE.search(piece) or PLACEHOLDER_RE.search(piece)):
                continue
            n_words = len(piece.split())
            if n_words < self.min_words:
                continue
            if n_words <= self.max_words:
                out.append(_Piece(pos, review.review_id, review.stars, a, b, _content(piece)))
                continue
            words = tuple((a + w.start(), a + w.end()) for w in _WORD_RE.finditer(piece))
            out.append(
                _Piece(
                    pos,
                    review.review_id,
                    review.stars,
                    a,
                    b,
                    _content(piece),
                    words,
                    tuple(self._terms_of(text[ws:we]) for ws, we in words),
                )
            )
        return out

    def _terms_of(self, word: str) -> frozenset[str]:
        """`_content` of one word, kept: review words repeat far more than they vary."""
        found = self._word_terms.get(word)
        if found is None:
            found = self._word_terms[word] = _content(word)
        return found

    def _best_window(self, piece: _Piece, terms: frozenset[str]) -> tuple[int, int, int]:
        """(overlap, start, end) of the piece's best window of at most max_words words."""
        if piece.words is None or piece.word_terms is None:
            return len(piece.terms & terms), piece.start, piece.end
        words, word_terms = piece.words, piece.word_terms
        width = self.max_words
        best_overlap, best_i = 0, 0
        if piece.terms & terms:
            best_overlap = -1
            for i in range(0, len(words) - width + 1):
                found: set[str] = set()
                for t in word_terms[i : i + width]:
                    found |= t & terms
                if len(found) > best_overlap:
                    best_overlap, best_i = len(found), i
        text = self.kb.review_text(piece.review_id)
        start, end = _strip(text, words[best_i][0], words[best_i + width - 1][1])
        return best_overlap, start, end

    def best(
        self, poi_id: str, terms: Iterable[str], exclude_review_ids: Iterable[str] = ()
    ) -> Evidence | None:
        """The most query-relevant span of the POI's reviews (see the module docstring), or None.

        Reviews are read in the tie order and a piece replaces the best so far only when it shares strictly
        more terms, so the first piece reaching the best overlap wins; a review that as a whole shares no
        more terms than the best so far is skipped without being cut into pieces.
        """
        term_set = frozenset(terms)
        excluded = set(exclude_review_ids)
        best_overlap = -1
        best_span: tuple[str, int, int, int] | None = None
        for pos, review in self._ranked(poi_id):
            if (
                review.review_id in excluded
                or len(self._review_terms(review.review_id) & term_set) <= best_overlap
            ):
                continue
            for piece in self._review_pieces(pos, review):
                if piece.words is None:
                    overlap = len(piece.terms & term_set)
                    if overlap > best_overlap:
                        best_overlap, best_span = overlap, (piece.review_id, piece.start, piece.end, overlap)
                elif len(piece.terms & term_set) > best_overlap:  # a window never shares more than its piece
                    overlap, start, end = self._best_window(piece, term_set)
                    if overlap > best_overlap:
                        best_overlap, best_span = overlap, (piece.review_id, start, end, overlap)
            if best_overlap == len(term_set):
                break  # nothing later can share more, and ties go to the earlier piece
        if best_span is None:
            return None
        review_id, start, end, overlap = best_span
        return Evidence(poi_id, review_id, self.kb.review_text(review_id)[start:end], start, end, overlap)

    def evidence(
        self, poi_id: str, terms: Iterable[str], n: int = 1, exclude_review_ids: Iterable[str] = ()
    ) -> list[Evidence]:
        """Up to `n` spans of the POI, each from a different review, best first."""
        terms = frozenset(terms)
        used = set(exclude_review_ids)
        out: list[Evidence] = []
        while len(out) < n:
            ev = self.best(poi_id, terms, used)
            if ev is None:
                break
            out.append(ev)
            used.add(ev.review_id)
        return out


@dataclass
class Citations:
    """[Rn] labels in order of first citation; citing the same review again reuses its label."""

    mapping: dict[str, str] = field(default_factory=dict)  # label -> review_id
    _by_review: dict[str, str] = field(default_factory=dict)

    def cite(self, review_id: str) -> str:
        label = self._by_review.get(review_id)
        if label is None:
            label = f"R{len(self.mapping) + 1}"
            self.mapping[label] = review_id
            self._by_review[review_id] = label
        return label


@dataclass(frozen=True)
class Response:
    text: str
    citations: dict[str, str]  # label -> review_id
    poi_ids: tuple[str, ...] = ()  # POIs the text names, in order


def quote(ev: Evidence, citations: Citations) -> str:
    """`"span" [Rn]`: the quote, then its label (labels sit right after the quote they support)."""
    return f'"{ev.span}" [{citations.cite(ev.review_id)}]'


def format_distance(meters: float) -> str:
    """App. F (Itinerary): whole metres below 1 km, else km with one decimal ("999 m", "1.0 km")."""
    if meters < 999.5:
        return f"{int(round(meters))} m"
    return f"{meters / 1000:.1f} km"


def type_noun(poi_type: str, plural: bool = False) -> str:
    singular, plural_form = TYPE_NOUNS.get(poi_type, (poi_type, poi_type + "s"))
    return plural_form if plural else singular


def rejection_ack(kb: KnowledgeBase, state: DialogueState) -> str:
    """The opening of the turn after a rejection: name what the user turned down."""
    if not state.after_rejection or not state.rejected_poi_ids:
        return ""
    pid = state.rejected_poi_ids[-1]
    name = poi_name(kb, pid) if pid in kb.pois else "that one"
    return f"Understood, {name} is off the list. "


def ask_preference_text(city: str, poi_type: str, state: DialogueState, n_candidates: int) -> str:
    """Ask for what the user has not stated yet: budget, area, then what matters most."""
    missing = []
    if state.price_ceiling is None:
        missing.append("your budget")
    if state.anchor is None:
        missing.append("which part of town you will be in")
    missing.append("what matters most to you")
    asks = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
    noun = type_noun(poi_type, plural=True)
    lead = (
        f"I have {n_candidates} {noun} in {city} in mind"
        if n_candidates
        else f"I am looking at {noun} in {city}"
    )
    return f"{lead}. To narrow it down, could you tell me {asks}?"


def no_match_text(city: str, poi_type: str) -> str:
    return (
        f"I'm afraid none of the remaining {type_noun(poi_type, plural=True)} in {city} fit what you asked for. "
        "Could you relax one of your requirements?"
    )


def farewell_text(city: str, poi_type: str) -> str:
    closing = {
        "restaurant": f"Enjoy your meal in {city}!",
        "hotel": f"Enjoy your stay in {city}!",
        "attraction": f"Enjoy exploring {city}!",
    }.get(poi_type, f"Enjoy {city}!")
    return f"{closing} If you need anything else, just ask."


def poi_name(kb: KnowledgeBase, pid: str) -> str:
    """The POI's name as it appears in a response: double quotes inside it would open a false quote."""
    return kb.pois[pid].name.replace('"', "'").replace("\u201c", "'").replace("\u201d", "'")


class EvidenceSource(Protocol):
    """Where the response templates take their quotes from: an `EvidenceIndex`, or a system's own source with
    the same `evidence` method (SnipRec's `SnippetEvidence`, which quotes the reviews behind its snippets)."""

    def evidence(
        self, poi_id: str, terms: Iterable[str], n: int = 1, exclude_review_ids: Iterable[str] = ()
    ) -> list[Evidence]: ...


def recommend_text(
    kb: KnowledgeBase,
    evidence: EvidenceSource,
    poi_id: str,
    terms: Sequence[str],
    citations: Citations,
    note: str = "",
    n_quotes: int = 2,
) -> str:
    """`I recommend NAME (note), rated X stars. One reviewer says "..." [R1], and another "..." [R2].`"""
    poi = kb.pois[poi_id]
    note = f" ({note})" if note else ""
    head = f"I recommend {poi_name(kb, poi_id)}{note}, rated {poi.stars:.1f} stars."
    evs = evidence.evidence(poi_id, terms, n=n_quotes)
    if not evs:
        return head
    parts = [f" One reviewer says {quote(evs[0], citations)}"]
    if len(evs) > 1:
        parts.append(f", and another writes {quote(evs[1], citations)}")
    return head + "".join(parts) + "."


def compare_text(
    kb: KnowledgeBase,
    evidence: EvidenceSource,
    poi_ids: Sequence[str],
    terms: Sequence[str],
    citations: Citations,
    notes: Mapping[str, str] | None = None,
) -> str:
    """Two POIs side by side, one quote each, then their ratings."""
    notes = notes or {}
    a, b = poi_ids[0], poi_ids[1]
    pa, pb = kb.pois[a], kb.pois[b]
    na, nb = poi_name(kb, a), poi_name(kb, b)

    def side(pid: str) -> str:
        note = f" ({notes[pid]})" if notes.get(pid) else ""
        evs = evidence.evidence(pid, terms, n=1)
        said = f", a reviewer says {quote(evs[0], citations)}" if evs else ""
        return f"for {poi_name(kb, pid)}{note}{said}"

    return (
        f"Comparing {na} and {nb}: {side(a)}; {side(b)}. "
        f"{na} is rated {pa.stars:.1f} stars and {nb} {pb.stars:.1f}."
    )


def template_response(
    action: str,
    *,
    kb: KnowledgeBase,
    evidence: EvidenceSource,
    ranked: Sequence[str],
    terms: Sequence[str],
    city: str,
    poi_type: str,
    state: DialogueState,
    n_candidates: int | None = None,
    notes: Mapping[str, str] | None = None,
) -> Response:
    """The response for one system action from a ranking (the shared template of the non-LLM baselines).

    - ask_preference: a question for what the user has not stated yet (no quotes).
    - recommend: the top-ranked POI with two quotes from different reviews.
    - compare: the top two POIs, one quote each (one POI left: a recommendation).
    - farewell: a closing line (no quotes).
    After a rejection the response first says which POI is off the list. `notes` adds a short annotation
    after a POI's name (Spatial: the distance to the anchor).
    """
    notes = notes or {}
    citations = Citations()
    if action == "ask_preference":
        n = len(ranked) if n_candidates is None else n_candidates
        text = rejection_ack(kb, state) + ask_preference_text(city, poi_type, state, n)
        return Response(text, {}, ())
    if action == "farewell":
        return Response(farewell_text(city, poi_type), {}, ())
    if action not in ("recommend", "compare"):
        raise ValueError(
            f"unknown system action {action!r}; expected ask_preference, recommend, compare or farewell"
        )
    ack = rejection_ack(kb, state)
    if not ranked:
        return Response(ack + no_match_text(city, poi_type), {}, ())
    if action == "compare" and len(ranked) >= 2:
        text = compare_text(kb, evidence, ranked[:2], terms, citations, notes)
        return Response(ack + text, dict(citations.mapping), tuple(ranked[:2]))
    text = recommend_text(kb, evidence, ranked[0], terms, citations, notes.get(ranked[0], ""))
    return Response(ack + text, dict(citations.mapping), (ranked[0],))


def turn_response(
    inp: Mapping[str, Any],
    ranked: Sequence[str],
    *,
    kb: KnowledgeBase,
    evidence: EvidenceSource,
    notes: Mapping[str, str] | None = None,
) -> Response:
    """`template_response` for one turn's input (a `preprocess` output: its action, query terms, city, type,
    dialogue state and usable candidates): the template every system that answers with it calls."""
    return template_response(
        inp["action"],
        kb=kb,
        evidence=evidence,
        ranked=ranked,
        terms=inp["terms"],
        city=inp["city"],
        poi_type=inp["poi_type"],
        state=inp["state"],
        n_candidates=len(inp["candidates"]),
        notes=notes,
    )
