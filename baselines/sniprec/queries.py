"""Query snippets from the user's turns (§3.2, App. C.2, C.3), each with a sign: +1 prefer, -1 dislike.

Every user turn of the row's history is one SnipRec turn. Its question is the system turn before it; a turn
that opens the dialogue gets the paper's fixed opener ("Hello, what category of {type} are you looking
for?"). Known intents are the snippets extracted from the earlier user turns of the same history, so a turn
never repeats them. Everything is a function of the row: the memo only saves recomputation.

- With an LLM: App. C.2 in one batched `generate_json_batch` per dialogue depth, asking for a JSON list of
  `{"prop", "sentiment"}` (the printed prompt's `Intent(prop=..., sentiment=...)` rendered as JSON, which
  the LLM layer validates). A reply still invalid after the layer's repairs gives no snippets and is counted.
- Without: `rules_query_snippets`, a documented approximation: the turn's clauses (`query_clauses`: its
  sentences cut at , ; : and at and / but / although / though / whereas); "no preference" phrasings and questions
  ("Is there anything else?") give nothing; a negated wish ("I don't want", "not into", "avoid", "hate")
  gives a dislike of what follows; "too X" a dislike of X; any other negated clause (a description such as
  "there's no breakfast") gives nothing; everything else a preference, with first-person preambles ("I'd
  like", "I'm looking for", "matters most to me") removed. Clauses with no content word beyond
  conversational filler (`FILLER`) give nothing.
- Rejections (reject_and_refine): the names of the POIs the turn rejects are replaced by "this place" before
  extraction, so "X is too loud" yields the dislike "loud". When the turn yields no dislike, the rejected
  POI's distinctive categories (held by at most half of the other usable candidates; at most
  `MAX_REJECTION_CATEGORIES` = 2) become dislikes in the attribute template's words ("This place is
  categorized as Seafood."), the rejected POI's properties the user turned down.
- Expansion (App. C.3, optional, LLM only): each snippet adds its paraphrase and its support with the same
  sign and its opposite with the sign flipped.
- The comparison systems' `query_mode="utterance"` (§5.1: no query-snippet extraction): the user turn itself,
  sign +1.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from baselines.sniprec.prompts import PromptRunner
from baselines.sniprec.units import PLACE, sentence_spans
from baselines.toolkit.responses import type_noun
from baselines.toolkit.state import phrase_pattern, rejected_pois
from baselines.toolkit.text import content_tokens
from trace_dataset.constants import CLAUSE_NEGATORS, REJECTION_ACTION
from trace_llm import LLMOutputError

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

QUERY_MODES: tuple[str, ...] = ("snippets", "utterance")
ORIGINS: tuple[str, ...] = ("turn", "rejection", "paraphrase", "support", "opposite", "utterance")
OPENING_QUESTION = "Hello, what category of {noun} are you looking for?"
MAX_REJECTION_CATEGORIES = 2
QUERY_SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["prop", "sentiment"],
        "properties": {
            "prop": {"type": "string", "minLength": 1, "maxLength": 120},
            "sentiment": {"type": "string", "enum": ["preference", "dislike"]},
        },
        "additionalProperties": False,
    },
}
_MEMO_LIMIT = 200_000

# Words that carry no preference on their own (a clause made only of these and stop words says nothing): the
# conversational leads, greetings, bridges and acceptances of a traveler ("Let me think.", "Good question.",
# "Hi, short on time here.", "I'll pass on this place.").
FILLER: frozenset[str] = frozenset(
    """
    actually again alternative alternatives anything bit can closest compare contender could else find fine fit
    fits going good great hello help hey hi interesting kind like line look looking lot love main matter matters
    maybe mind mood need nice ok okay one option options perfect place places plans please pick really recommend
    right something somewhere sort sound sounds spot still suggest suggestion sure thank thanks thing think thinking
    try want way wonderful work works would yes change quite rather sold skip go trip visit visiting after
    anything hope question arrived travelling traveling tell know eat stay suggestion hmm oh well hello
    let definitely honestly say guess suppose pass quick short time afternoon day lovely chat hiya appreciate
    shall choose booking done choice good idea sounds promising set beside weigh against excellent suits suit
    recommendation well much nicely very ll ve re
""".split()
)
# A question that asks (not one that states a wish, "anything cozy?"): it gives no snippet.
_QUESTION_START = re.compile(
    r"^(?:is|are|can|could|would|will|do|does|did|what|which|how|where|who|why|any|have|has|help)\b",
    re.IGNORECASE,
)
# (not at "anything but": "it sounds anything but quiet" is one clause, a negation)
_QUERY_CLAUSE_RE = re.compile(
    r"\s*[,;:]\s+|(?<!anything)\s+but\s+|\s+(?:and|although|though|whereas)\s+", re.IGNORECASE
)
_NO_PREFERENCE = re.compile(
    r"\b(?:open to|no (?:particular |specific |real )?preference|(?:don't|do not) mind|(?:doesn't|does not) "
    r"matter|not (?:specifically|particularly|really) looking|anything (?:is )?fine|whatever)\b",
    re.IGNORECASE,
)
_NEGATED_WISH = re.compile(
    r"\b(?:(?:i|we)(?:'d| would)?\s+(?:really\s+)?(?:do not|don't|dont|rather not)\s+(?:want|like|need|fancy|care for)"
    r"|not (?:into|a fan of|keen on|after|looking for)|avoid|hate|dislike|can't stand|no more)\b\s*",
    re.IGNORECASE,
)
_TOO = re.compile(r"(?<!not )\btoo\s+", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:" + "|".join(sorted(CLAUSE_NEGATORS)) + r")\b|n't\b", re.IGNORECASE)
# Clauses that describe a place or the traveler's trip rather than ask for something: a rejection's reason
# ("it's $$$", "its rating is a bit low for me", "the Riverwalk is about 3 km away", "over my limit") and the
# travel context of a greeting ("I'm in Tampa on a business trip"). They give no snippet (a "too X" in them
# still gives the dislike of X).
_DESCRIPTION = re.compile(
    r"^(?:it's|it is)\s+(?!for\b)|^(?:its|it costs|it sounds|it seems|it looks|it feels|it isn't|it doesn't)\b"
    r"|^(?:this place|that place)\s+(?:is|has|costs|sounds|seems)\b"
    r"|\bis (?:about )?[\d.]+ km away\b|^measured to\b|\b(?:over|above|beyond) (?:my|our) (?:limit|budget)\b"
    r"|\b(?:lower|higher|less|more) than (?:i|we)(?:'d| would)? (?:like|want)\b"
    r"|^(?:i'm|i am|we're|we are)\s+(?:in|visiting)\s+(?!the mood\b)|^i've arrived in\b|^this is\b.*\bin\s+\S",
    re.IGNORECASE,
)
# What a clause says around the preference itself ("I'm leaning towards X", "X is what I'm after", "Something
# X would be ideal", "Let's keep it on the X side"), removed; whole sentences of a request for a type of place
# ("I need a place to eat") say nothing beyond the catalogue.
_PREAMBLE = re.compile(
    r"^(?:(?:ok(?:ay)?|right|hmm+|nice|good question|great|sure|yes|well|also|and|so|but|oh|actually|honestly"
    r"|definitely|ideally)[,.!]?\s+)+"
    r"|\b(?:i|we)(?:'d| would| really| also| just| only|'m| am|'re| are)*\s+(?:really\s+|just\s+)?"
    r"(?:like|love|want|prefer|need|looking for|after|thinking of|hoping for|keen on|into|in the mood for"
    r"|leaning towards?|going for|say)(?:\s+(?:to have|it to be|to be|to keep it|places|a suggestion for))?\b"
    r"|\b(?:it|the place|this place)\s+(?:should|must|needs to|has to|ought to)\s+(?:be|have|feel)\b"
    r"|^(?:it|this place)\s+(?:needs|has)\b(?!\s+to\b)|\bit has to fit\b|\bplease make sure it has\b|\bplease\b"
    r"|\bideally\b|\b(?:the\s+)?(?:setting|vibe|feel|atmosphere)\s+(?:should|must|needs to)\s+(?:be|feel)\b"
    r"|\bthe (?:feel|vibe|setting) to be\b|\ban? atmosphere that(?:'s| is)\b|\bthere (?:have|has|need) to be\b"
    r"|\bthere should be\b|\b(?:i'm|i am|we're|we are) on\b|\b(?:we|i) have\b|^(?:let's|let us) keep it\b"
    r"|\bmy price range is\b|\blocation matters\b|\b(?:it's|it is) for\b|\bsomewhere that does\b"
    r"|\b(?:matters most to me|is a must for me|is a must|would make it for me|is what (?:i'm|we're) after"
    r"|(?:is|are) essential(?: for me)?|would be (?:ideal|great|perfect)|would suit (?:me|us)|for me)\b"
    r"|\babove all i care about\b|\bthe main thing for me is\b|\bsomething in the\b|\bline\b"
    r"|^on the\b|\bside$",
    re.IGNORECASE,
)
_VAGUE_LEAD = re.compile(r"^(?:something|somewhere)\s+(?!to\b|that\b|sweet\b|worth\b)", re.IGNORECASE)
_TYPE_REQUEST = re.compile(
    r"^(?:an?\s+)?(?:restaurant|hotel(?: for a few nights)?|attraction|room in town|dinner spot"
    r"|(?:good )?spot (?:for a meal|to spend the afternoon)|place to (?:eat|stay|visit))$"
    r"|^(?:somewhere|something) (?:to (?:eat|stay|see)|worth doing)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class QuerySnippet:
    text: str
    sign: int  # +1 preference, -1 dislike
    origin: str = "turn"

    def to_list(self) -> list[Any]:
        return [self.sign, self.text, self.origin]


@dataclass(frozen=True)
class Exchange:
    """One user turn as SnipRec sees it: the question before it, the (names-generalised) answer."""

    turn_id: int
    question: str
    text: str
    action: str
    rejected: tuple[str, ...] = ()  # POIs this turn rejects


def _clean(text: str) -> str:
    text = " ".join(_PREAMBLE.sub(" ", text).split()).strip(" ,.;:!?-").strip()
    text = (
        " ".join(_PREAMBLE.sub(" ", text).split()).strip(" ,.;:!?-").strip()
    )  # "Ideally it has X": two layers
    text = _VAGUE_LEAD.sub("", text).strip()
    return "" if _TYPE_REQUEST.match(text) else text


_WORK_OUT = re.compile(r"\bwork(?:ing)? out\b", re.IGNORECASE)  # a gym ("somewhere to work out"), not "works"


def informative(text: str) -> bool:
    return any(t not in FILLER for t in content_tokens(_WORK_OUT.sub("workout", text.replace(PLACE, " "))))


def query_clauses(text: str) -> list[str]:
    """A user turn's sentences cut at , ; : and at and / but / although / though / whereas (stripped, non-empty):
    one topic per snippet, as C.2 asks ("a lively spot with good music and maybe outdoor seating" -> two)."""
    out: list[str] = []
    for a, b in sentence_spans(text):
        out.extend(p.strip() for p in _QUERY_CLAUSE_RE.split(text[a:b]) if p.strip())
    return out


def rules_query_snippets(text: str, known: Sequence[str] = ()) -> list[QuerySnippet]:
    """The deterministic query snippets of one user turn (rules in the module docstring)."""
    seen = {k.lower() for k in known}
    out: list[QuerySnippet] = []
    for clause in query_clauses(text):
        if _NO_PREFERENCE.search(clause) or (clause.endswith("?") and _QUESTION_START.match(clause)):
            continue
        wish = _NEGATED_WISH.search(clause)
        too = _TOO.search(clause)
        if wish:
            sign, prop = -1, clause[wish.end() :]
        elif too:
            sign, prop = -1, clause[too.end() :]
        elif _NEGATION.search(clause) or _DESCRIPTION.search(clause):
            continue
        else:
            sign, prop = 1, clause
        prop = _clean(prop)
        if not prop or not informative(prop) or prop.lower() in seen:
            continue
        seen.add(prop.lower())
        out.append(QuerySnippet(prop, sign))
    return out


def format_intents(known: Sequence[QuerySnippet]) -> str:
    """Known intents in the C.2 example's layout ("None" when there are none)."""
    if not known:
        return "None"
    lines = []
    for label, sign in (("preference", 1), ("dislike", -1)):
        props = [q.text for q in known if q.sign == sign]
        if props:
            lines.append(f" - {label}")
            lines.extend(f"   - {p}" for p in props)
    return "\n" + "\n".join(lines)


def parse_intents(
    value: Sequence[Mapping[str, Any]], known: Sequence[QuerySnippet] = ()
) -> list[QuerySnippet]:
    """C.2's JSON reply -> query snippets (empty props and repeats of known intents dropped)."""
    seen = {q.text.lower() for q in known}
    out = []
    for item in value:
        prop = " ".join(str(item["prop"]).split()).strip()
        if not prop or prop.lower() in seen:
            continue
        seen.add(prop.lower())
        out.append(QuerySnippet(prop, 1 if item["sentiment"] == "preference" else -1))
    return out


def exchanges(
    history: Sequence[Mapping[str, Any]], poi_type: str, names: Mapping[str, str]
) -> list[Exchange]:
    """The user turns of a history with their questions; rejected POIs' names replaced by "this place"."""
    out = []
    question = OPENING_QUESTION.format(noun=type_noun(poi_type))
    before: list[str] = []
    for i, turn in enumerate(history):
        if turn["role"] == "system":
            question = turn["text"]
            continue
        text = turn["text"]
        rejected: tuple[str, ...] = ()
        if turn["action"] == REJECTION_ACTION:
            now = rejected_pois({"rejected_poi_ids": [], "history": history[: i + 1]}, names)
            rejected = tuple(p for p in now if p not in before)
            before = now
        for pid in names:
            if names[pid] and names[pid].lower() in text.lower():
                text = phrase_pattern(names[pid]).sub(PLACE, text)
        out.append(Exchange(int(turn["turn_id"]), question, text, turn["action"], rejected))
    return out


def rejection_dislikes(kb: KnowledgeBase, rejected: str, candidates: Sequence[str]) -> list[QuerySnippet]:
    """The rejected POI's distinctive categories as dislike snippets (rule in the module docstring)."""
    others = [kb.poi(pid) for pid in candidates if pid != rejected]
    out = []
    for category in kb.poi(rejected).categories:
        held = sum(category in p.categories for p in others)
        if others and held / len(others) > 0.5:
            continue
        out.append(QuerySnippet(f"This place is categorized as {category}.", -1, "rejection"))
        if len(out) == MAX_REJECTION_CATEGORIES:
            break
    return out


EXPANSIONS: tuple[str, ...] = ("paraphrase", "support", "opposite")


def expansion_snippets(text: str, sign: int, lines: Mapping[str, str]) -> list[QuerySnippet]:
    """App. C.3's replies for one snippet -> query snippets: an opposite flips the sign; empty replies and
    replies repeating the snippet are dropped."""
    out = []
    for kind in EXPANSIONS:
        line = lines.get(kind, "")
        if line and line.lower() != text.lower():
            out.append(QuerySnippet(line, -sign if kind == "opposite" else sign, kind))
    return out


class QueryExtractor:
    """Query snippets of every user turn of many rows at once (LLM calls batched per dialogue depth)."""

    def __init__(self, runner: PromptRunner | None = None, expansion: bool = False):
        if expansion and runner is None:
            raise ValueError("query expansion (App. C.3) needs an LLM: give llm=SPEC (--llm SPEC)")
        self.runner = runner
        self.expansion = expansion
        self._memo: dict[tuple, tuple[list[QuerySnippet], bool]] = {}  # -> (snippets, failed)
        self._expanded: dict[tuple[str, str, int], list[QuerySnippet]] = {}

    def extract(
        self, dialogues: Sequence[tuple[Sequence[Exchange], str]]
    ) -> list[list[tuple[list[QuerySnippet], bool]]]:
        """For each (exchanges, poi_type): per exchange (its extracted snippets, whether extraction failed)."""
        if len(self._memo) > _MEMO_LIMIT:
            self._memo.clear()
        results: list[list[tuple[list[QuerySnippet], bool]]] = [[] for _ in dialogues]
        depth = 0
        while True:
            pending: dict[tuple, tuple[Exchange, str, list[QuerySnippet]]] = {}
            keys: list[tuple[int, tuple]] = []
            for i, (exs, poi_type) in enumerate(dialogues):
                if depth >= len(exs):
                    continue
                known = [q for snips, _ in results[i] for q in snips]
                ex = exs[depth]
                key = (poi_type, ex.question, ex.text, tuple((q.sign, q.text) for q in known))
                keys.append((i, key))
                if key not in self._memo:
                    pending[key] = (ex, poi_type, known)
            if not keys:
                return results
            if pending:
                self._memo.update(self._run(pending))
            for i, key in keys:
                results[i].append(self._memo[key])
            depth += 1

    def _run(
        self, pending: Mapping[tuple, tuple[Exchange, str, list[QuerySnippet]]]
    ) -> dict[tuple, tuple[list[QuerySnippet], bool]]:
        if self.runner is None:
            return {
                key: (rules_query_snippets(ex.text, [q.text for q in known]), False)
                for key, (ex, _, known) in pending.items()
            }
        replies = self.runner.json(
            "query_snippets",
            [
                (poi_type, {"question": ex.question, "response": ex.text, "intents": format_intents(known)})
                for ex, poi_type, known in pending.values()
            ],
            QUERY_SCHEMA,
        )
        out = {}
        for (key, (_, _, known)), reply in zip(pending.items(), replies, strict=True):
            failed = isinstance(reply, LLMOutputError)
            out[key] = ([] if failed else parse_intents(reply, known), failed)
        return out

    def expand(
        self, snippets: Sequence[QuerySnippet], poi_type: str
    ) -> dict[tuple[str, int], list[QuerySnippet]]:
        """App. C.3 for each (text, sign): paraphrase and support (same sign), opposite (sign flipped)."""
        if not self.expansion or self.runner is None:
            return {}
        todo = list(dict.fromkeys((poi_type, q.text, q.sign) for q in snippets))
        todo = [key for key in todo if key not in self._expanded]
        if todo:
            replies = {
                kind: self.runner.text(f"expand_{kind}", [(poi_type, {"sentence": t}) for _, t, _ in todo])
                for kind in EXPANSIONS
            }
            for j, key in enumerate(todo):
                _, text, sign = key
                self._expanded[key] = expansion_snippets(
                    text, sign, {kind: replies[kind][j] for kind in EXPANSIONS}
                )
        return {(q.text, q.sign): self._expanded[(poi_type, q.text, q.sign)] for q in snippets}
