"""Stage 3, `template` backend: renders a DialoguePlan into turn texts with a paraphrase grammar.

Offline and deterministic (every choice comes from the dialogue's RNG). The system names only facts the
knowledge base supports (attributes, distance, price, stars, or review evidence) and backs each POI it
names with verbatim review spans, quoted and labelled [Rn].
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import NamedTuple

import trace_dataset.generate.phrases as P
from trace_dataset.generate.index import CellIndex, PoiProfile, Span
from trace_dataset.generate.personas import personas
from trace_dataset.generate.plan import DialoguePlan, PlannedTurn
from trace_dataset.generate.preferences.constraints import (
    Constraint,
    _attribute_verdict,
    landmark_distance_km,
    violation_is_explicit,
)
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.quotes import QUOTE_RE

ADJECTIVE_KINDS = ("noise", "ambience")


class Citation(NamedTuple):
    label: str
    review_id: str
    business_id: str


class RenderedTurn(NamedTuple):
    text: str
    citations: list[Citation]
    quotes: list[Span]  # quoted spans in order of appearance in `text`


def display_name(name: str) -> str:
    """POI names go into text unquoted; double quotes would read as review quotes."""
    return name.replace('"', "'").replace("\u201c", "'").replace("\u201d", "'").strip()


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


_DOUBLE_STOP = re.compile(r"(?<=[^.])\.\.(?=\s|$)")


def _tidy(text: str) -> str:
    """'Pizza Co..' -> 'Pizza Co.' (a name ending in a period), outside quotes only."""
    out, pos = [], 0
    for m in QUOTE_RE.finditer(text):
        out.append(_DOUBLE_STOP.sub(".", text[pos : m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(_DOUBLE_STOP.sub(".", text[pos:]))
    return "".join(out)


_AN_EXCEPTIONS = ("eu", "one", "once", "uni", "usa", "use", "usu", "ute")  # vowel letter, consonant sound
_AN_SILENT_H = ("heir", "honest", "honour", "honor", "hour")


def indefinite_article(phrase: str) -> str:
    """'a' or 'an' for the phrase's first word, by sound where the spelling misleads ("an hour", "a unique")."""
    word = phrase.strip().lower()
    vowel_sound = (
        (word[:1] in ("a", "e", "i", "o", "u") and not word.startswith(_AN_EXCEPTIONS))
        or word.startswith(_AN_SILENT_H)
        or re.match(r"(8|11|18)(\D|$)", word) is not None
    )
    return "an" if vowel_sound else "a"


def _join(parts: list[str]) -> str:
    return _tidy(" ".join(p for p in (x.strip() for x in parts) if p))


class TemplateRenderer:
    def __init__(self, plan: DialoguePlan, cell: CellIndex, kb: KnowledgeBase, rng: random.Random):
        self.plan, self.cell, self.kb, self.rng = plan, cell, kb, rng
        self.arche = personas().archetypes[plan.persona_type]
        self.by_id: dict[str, PoiProfile] = {p.poi.business_id: p for p in cell.profiles}
        self.used: set[Span] = set()
        self.what_cache: dict[str, str] = {}

    # -- small helpers ---------------------------------------------------------------------------
    def pick(self, options) -> str:
        return self.rng.choice(options)

    def your_context(self) -> str:
        """'a tasting trip' -> 'your tasting trip'."""
        words = self.plan.travel_context.split(" ", 1)
        if len(words) == 2 and words[0].lower() in ("a", "an", "the"):
            return "your " + words[1]
        return "your " + self.plan.travel_context

    def name(self, bid: str) -> str:
        return display_name(self.by_id[bid].poi.name)

    def what(self, c: Constraint) -> str:
        """The human name of a constraint's value, fixed per dialogue so user and system agree."""
        if c.key in self.what_cache:
            return self.what_cache[c.key]
        v = c.value
        if c.kind == "amenity":
            w = self.pick(P.bank().amenity_names[v])
        elif c.kind == "aspect":
            w = self.pick(P.bank().aspect_names[v])
        elif c.kind == "ambience":
            w = self.pick(P.bank().ambience_names[v])
        elif c.kind == "dietary":
            w = self.pick(P.bank().dietary_names[v])
        elif c.kind == "meal":
            w = self.pick(P.bank().meal_names[v])
        elif c.kind == "noise":
            w = self.pick(P.bank().noise_names[v])
        elif c.kind == "rating":
            w = self.pick(P.bank().rating_phrases)
            w = w.format(v=v if v != "4.0" else "four")
        elif c.kind == "location":
            w = self.pick(P.bank().radius_phrases[c.radius_km]).format(L=v)
        elif c.kind == "category":
            w = v
        elif c.kind == "price":
            w = v
        else:
            raise ValueError(f"unknown constraint kind {c.kind!r}")
        self.what_cache[c.key] = w
        return w

    def state(self, c: Constraint) -> str:
        """One user sentence stating constraint c."""
        w = self.what(c)
        template = self.pick(P.bank().state.get(c.key) or P.bank().state[c.kind])
        return template.format(word=c.value, what=w, What=_cap(w), a_what=f"{indefinite_article(w)} {w}")

    # -- quotes ------------------------------------------------------------------------------------
    def quote_spans(self, bid: str, prefer: list[Constraint], k: int) -> list[Span]:
        """Up to k unused spans of the POI's reviews: evidence for the preferred constraints first."""
        prof = self.by_id[bid]
        out: list[Span] = []
        for c in prefer:
            spans = [s for s in prof.evidence.get(c.key, ()) if s not in self.used and s not in out]
            if spans:
                out.append(self.rng.choice(spans[:4]))
            if len(out) >= k:
                return out
        generic = [s for s in prof.generic if s not in self.used and s not in out]
        if out and len(out) < k:  # a second quote from another review where there is one
            other = [s for s in generic if all(s.review_id != x.review_id for x in out)]
            generic = other or generic
        while len(out) < k and generic:
            s = self.rng.choice(generic[:6])
            generic.remove(s)
            out.append(s)
        if not out:  # every span used already: repeat one rather than cite nothing
            pool = [s for c in prefer for s in prof.evidence.get(c.key, ())] + prof.generic
            if pool:
                out.append(pool[0])
        return out

    class _Turn:
        def __init__(self):
            self.labels: dict[str, str] = {}
            self.citations: list[Citation] = []
            self.quotes: list[Span] = []

    def cite(self, t: _Turn, span: Span, bid: str) -> str:
        label = t.labels.get(span.review_id)
        if label is None:
            label = f"R{len(t.labels) + 1}"
            t.labels[span.review_id] = label
            t.citations.append(Citation(label, span.review_id, bid))
        t.quotes.append(span)
        self.used.add(span)
        text = self.kb.review_text(span.review_id)[span.start : span.end]
        return f'"{text}" [{label}]'

    # -- claims about a POI ------------------------------------------------------------------------
    def _facts(self, bid: str) -> dict[str, str]:
        poi = self.by_id[bid].poi
        return {
            "price": "$" * poi.price if poi.price else "",
            "stars": f"{poi.stars:g}",
            "n": str(poi.review_count),
            "short": P.bank().type_short[poi.poi_type],
        }

    def claim(self, bid: str, c: Constraint) -> str:
        prof = self.by_id[bid]
        poi = prof.poi
        f = self._facts(bid)
        w = self.what(c)
        if c.kind == "price":
            if poi.price is not None:
                return self.pick(P.bank().claim["price"]).format(**f)
            return self.pick(P.bank().claim["price_evidence"])
        if c.kind == "rating":
            return self.pick(P.bank().claim["rating"]).format(**f)
        if c.kind == "location":
            d = f"{landmark_distance_km(poi, c.value):.1f}"
            return self.pick(P.bank().claim["location"]).format(d=d, L=c.value)
        if c.kind == "category":
            return self.pick(P.bank().claim["category"]).format(cat=c.value)
        verdict = None if c.kind == "aspect" else _attribute_verdict(poi, c)
        if verdict:
            if c.kind in ("noise", "ambience", "dietary", "meal"):
                return self.pick(P.bank().claim[c.kind]).format(what=w)
            return self.pick(P.bank().claim_attr).format(what=w)
        return self.pick(
            P.bank().claim_evidence_adj if c.kind in ADJECTIVE_KINDS else P.bank().claim_evidence
        ).format(what=w)

    def violation(self, bid: str, c: Constraint) -> str:
        """How the system says a POI misses c: a stated fact, or the absence of review evidence."""
        poi = self.by_id[bid].poi
        f = self._facts(bid)
        w = self.what(c)
        if violation_is_explicit(poi, c):
            if c.kind == "price":
                return self.pick(P.bank().compare_miss_explicit).format(
                    b=self.name(bid), reason=self.pick(P.bank().violation["price"]).format(**f)
                )
            if c.kind == "rating":
                reason = self.pick(P.bank().violation["rating"]).format(**f)
            elif c.kind == "location":
                reason = self.pick(P.bank().violation["location"]).format(
                    d=f"{landmark_distance_km(poi, c.value):.1f}", L=c.value
                )
            elif c.kind == "category":
                reason = self.pick(P.bank().violation["category"]).format(cat=c.value)
            elif c.kind == "noise":
                reason = self.pick(P.bank().violation["noise"]).format(
                    level=(poi.attributes.get("noise_level") or "").replace("_", " ")
                )
            else:
                reason = self.pick(P.bank().violation["default"]).format(what=w)
            return self.pick(P.bank().compare_miss_explicit).format(b=self.name(bid), reason=reason)
        if c.kind == "price":
            return self.pick(P.bank().compare_miss_explicit).format(
                b=self.name(bid), reason=P.bank().violation["price_unknown"][0]
            )
        options = (
            P.bank().compare_miss_evidence_adj
            if c.kind in ADJECTIVE_KINDS
            else P.bank().compare_miss_evidence
        )
        return self.pick(options).format(b=self.name(bid), what=w)

    def reason(self, bid: str, c: Constraint) -> str:
        """The user's reason for rejecting bid: the new constraint it violates."""
        poi = self.by_id[bid].poi
        w = self.what(c)
        if violation_is_explicit(poi, c):
            if c.kind == "price":
                return self.pick(P.bank().reason_explicit["price"]).format(price="$" * (poi.price or 0))
            if c.kind == "rating":
                return self.pick(P.bank().reason_explicit["rating"]).format(stars=f"{poi.stars:g}")
            if c.kind == "location":
                return self.pick(P.bank().reason_explicit["location"]).format(
                    d=f"{landmark_distance_km(poi, c.value):.1f}", L=c.value
                )
            if c.kind == "category":
                return self.pick(P.bank().reason_explicit["category"])
            if c.kind == "noise":
                return self.pick(P.bank().reason_explicit["noise"]).format(what=w)
            return self.pick(P.bank().reason_explicit["default"]).format(what=w)
        if c.kind == "price":
            return self.pick(P.bank().reason_price_unknown)
        return self.pick(
            P.bank().reason_missing_adj if c.kind in ADJECTIVE_KINDS else P.bank().reason_missing
        ).format(what=w)

    # -- turns -----------------------------------------------------------------------------------
    def render(self) -> list[RenderedTurn]:
        out: list[RenderedTurn] = []
        turns = self.plan.turns
        for i, t in enumerate(turns):
            prev = turns[i - 1] if i else None
            rt = self._Turn()
            method = getattr(self, "_" + t.action)
            text = method(t, prev, rt)
            out.append(RenderedTurn(text, rt.citations, rt.quotes))
        return out

    def _greet_and_seek(self, t: PlannedTurn, prev, rt) -> str:
        plan = self.plan
        parts = [
            self.pick(P.bank().greetings[self.arche.voice]),
            self.pick(self.arche.intros),
            self.pick(P.bank().context_sentences).format(city=plan.city, context=plan.travel_context),
            self.pick(P.bank().requests).format(type=self.pick(P.bank().type_nouns[plan.poi_type])),
        ]
        if self.rng.random() < 0.5:
            parts[1], parts[2] = parts[2], parts[1]
        parts.extend(self.state(c) for c in t.new)
        return _join(parts)

    def _ask_preference(self, t: PlannedTurn, prev, rt) -> str:
        c = t.focus
        assert c is not None  # the planner gives every ask_preference turn a focus
        lead = (
            self.pick(P.bank().ask_leads)
            if prev and prev.action == "greet_and_seek"
            else self.pick(P.bank().persona_nods)
        )
        lead = lead.format(your=self.your_context())
        q = self.pick(P.bank().ask[c.kind]).format(
            city=self.plan.city, type=P.bank().type_short[self.plan.poi_type]
        )
        return _join([lead, q])

    def _provide_preference(self, t: PlannedTurn, prev, rt) -> str:
        if prev is not None and prev.action == "ask_preference":
            return _join([self.pick(P.bank().answer_leads)] + [self.state(c) for c in t.new])
        name = self.name(t.pois[0]) if t.pois else "That one"
        parts = [self.pick(P.bank().extra_leads).format(name=name)]
        if t.new:
            parts.extend(self.state(c) for c in t.new)
        elif t.focus is not None:
            w = self.what(t.focus)
            parts.append(self.pick(P.bank().priority).format(what=w, What=_cap(w)))
        parts.append(self.pick(P.bank().compare_asks))
        return _join(parts)

    def _reject_and_refine(self, t: PlannedTurn, prev, rt) -> str:
        name = self.name(t.pois[0])
        if t.revised:
            old, new = t.revised[0]
            tmpl = self.pick(P.bank().revise[old.kind])
            ow, nw = self.what(old), self.what(new)
            if old.kind == "location":
                ow, nw = old.value, new.value
            body = tmpl.format(old=ow, new=nw, name=name)
            extra = self.state(new) if old.kind == "location" else ""
            return _join([self.pick(P.bank().revise_leads), body, extra, self.pick(P.bank().reject_bridges)])
        c = t.new[0]
        lead = self.pick(P.bank().reject_leads).format(name=name)
        reason = self.reason(t.pois[0], c)
        return _join([lead, _cap(reason) + ".", self.state(c), self.pick(P.bank().reject_bridges)])

    def _accept(self, t: PlannedTurn, prev, rt) -> str:
        return self.pick(P.bank().accept[self.arche.voice]).format(name=self.name(t.pois[0]))

    def _farewell(self, t: PlannedTurn, prev, rt) -> str:
        main = self.pick(P.bank().farewells[self.arche.voice]).format(
            name=self.name(t.pois[0]), city=self.plan.city
        )
        return _join([main, self.pick(P.bank().farewell_context).format(your=self.your_context())])

    def _prefer(self, t: PlannedTurn, prev: PlannedTurn | None) -> list[Constraint]:
        """Constraints to back with evidence: the newest first (what the user just asked for)."""
        newest = list(prev.stated) if prev is not None else []
        rest = [c for c in reversed(t.active) if c not in newest]
        return newest + rest

    def _support(
        self, bid: str, prefer: list[Constraint], rt, k: int, lead: bool = True
    ) -> tuple[str, list[str]]:
        """(claims sentence, quote sentences) for one POI."""
        claims = [self.claim(bid, c) for c in prefer[:2]]
        if len(claims) == 2:
            sentence = self.pick(P.bank().claim_join).format(a=claims[0], b=claims[1])
        elif claims:
            sentence = claims[0]
        else:
            sentence = ""
        spans = self.quote_spans(bid, prefer, k)
        quotes = []
        options: Sequence[str]
        for j, s in enumerate(spans):
            q = self.cite(rt, s, bid)
            if j == 0:
                options = P.bank().quote_intros
            else:
                options = (
                    P.bank().quote_same if s.review_id == spans[j - 1].review_id else P.bank().quote_adds
                )
            quotes.append(self.pick(options).format(q=q))
        if not sentence:
            return "", quotes
        return (_cap(self.pick(P.bank().claim_leads) + sentence) if lead else sentence) + ".", quotes

    def _recommend(self, t: PlannedTurn, prev, rt) -> str:
        bid = t.gold[0]
        parts = []
        if prev is not None and prev.action == "reject_and_refine":
            parts.append(
                self.pick(P.bank().after_revision)
                if prev.revised
                else self.pick(P.bank().after_reject).format(old=self.name(prev.pois[0]))
            )
        parts.append(self.pick(P.bank().rec_openers).format(name=self.name(bid)))
        f = self._facts(bid)
        facts = [x for x in P.bank().facts if f["price"] or "{price}" not in x]
        if self.rng.random() < 0.6:
            parts.append(self.pick(facts).format(**f))
        claims, quotes = self._support(bid, self._prefer(t, prev), rt, 2 if self.rng.random() < 0.55 else 1)
        parts.append(claims)
        parts.extend(quotes)
        parts.append(self.pick(P.bank().rec_closers))
        return _join(parts)

    def _compare(self, t: PlannedTurn, prev, rt) -> str:
        a, b = t.pois[0], t.pois[1]
        na, nb = self.name(a), self.name(b)
        parts = []
        if prev is not None and prev.action == "reject_and_refine":
            parts.append(
                self.pick(P.bank().after_revision)
                if prev.revised
                else self.pick(P.bank().after_reject).format(old=self.name(prev.pois[0]))
            )
        parts.append(self.pick(P.bank().compare_openers).format(a=na, b=nb))
        prefer = self._prefer(t, prev)
        claims, quotes = self._support(a, prefer, rt, 1, lead=False)
        parts.append(f"{na}: {claims}" if claims else "")
        parts.extend(quotes)
        prof_b = self.by_id[b]
        missed = [c for c in t.active if not self.cell.sat_of(c) >> self.cell.ids.index(b) & 1]
        missed.sort(key=lambda c: not violation_is_explicit(prof_b.poi, c))
        if missed:
            parts.append(self.violation(b, missed[0]))
            verdict = self.pick(P.bank().verdict_strong)
        else:
            parts.append(self.pick(P.bank().compare_both_fit).format(b=nb, stars=f"{prof_b.poi.stars:g}"))
            pa, pb = self.by_id[a].poi, prof_b.poi
            verdict = (
                self.pick(P.bank().verdict_both) if pa.stars > pb.stars else self.pick(P.bank().verdict_tie)
            )
        b_spans = self.quote_spans(b, [c for c in prefer if c not in missed], 1)
        for s in b_spans:
            parts.append(self.pick(P.bank().quote_intros).format(q=self.cite(rt, s, b)))
        parts.append(verdict.format(a=na))
        return _join(parts)


def render_template(
    plan: DialoguePlan, cell: CellIndex, kb: KnowledgeBase, rng: random.Random
) -> list[RenderedTurn]:
    return TemplateRenderer(plan, cell, kb, rng).render()
