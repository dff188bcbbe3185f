"""Review text of the synthetic Yelp bundle: the composer (its phrase banks are review_banks.json, read
through review_banks.py).

Reviews talk about concrete aspects (dishes, service, ambience, value, location, amenities, rooms, exhibits)
with a polarity that follows the review's stars, and they draw on the POI's own facts (its signature dishes or
exhibits, staff names, nearby landmark, parking, noise, price, the attributes it really has), so that
retrieval baselines and text metrics see real differences between POIs.

The phrase banks belong to the synthetic review text only. The dialogue generator writes its own
sentences and must not reuse these: released dialogues are checked to contain no 6 consecutive words of
any review.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trace_dataset.yelp.review_banks import banks

# ---------------------------------------------------------------------------------------------------
# Per-POI facts the composer draws on (filled in by synth.py)
# ---------------------------------------------------------------------------------------------------


@dataclass
class PoiFacts:
    poi_type: str  # restaurant | hotel | attraction | other
    kind: str  # e.g. "italian", "boutique", "museum_history", "nightlife_jazz"
    name: str
    city: str
    price: int | None
    specialties: list[str]  # signature dishes / room features / exhibits (POI-specific)
    staff: list[str]
    landmark: str | None  # a named place within walking distance, if any
    attrs: dict[str, Any] = field(default_factory=dict)  # canonical attribute values (schema)


# ---------------------------------------------------------------------------------------------------
# Composer
# ---------------------------------------------------------------------------------------------------
LONG_REVIEW_SHARE = 0.4
PARKING_SHARE = 0.35  # reviews where parking is one of the aspects on offer


def _polarity(stars: int) -> str:
    return "pos" if stars >= 4 else ("mix" if stars == 3 else "neg")


def _amount(rng: random.Random, price: int | None, per: str) -> int:
    base = {1: 18, 2: 45, 3: 95, 4: 190}.get(price or 2, 45)
    if per == "night":
        base = {1: 79, 2: 139, 3: 229, 4: 389}.get(price or 2, 139)
    elif per == "ticket":
        base = {1: 8, 2: 18, 3: 32, 4: 55}.get(price or 2, 18)
    return int(base * rng.uniform(0.8, 1.3))


def _by_polarity(rng: random.Random, pol: str, pos: tuple, neg: tuple, mix: tuple | None = None) -> str:
    if pol == "pos":
        return rng.choice(pos)
    if pol == "neg":
        return rng.choice(neg)
    return rng.choice(mix) if mix and rng.random() < 0.6 else rng.choice(pos if rng.random() < 0.5 else neg)


def _ambience_words(rng: random.Random, facts: PoiFacts) -> tuple[str, str]:
    b = banks()
    words = [b.ambience_words[k] for k in facts.attrs.get("ambience") or () if k in b.ambience_words]
    noise = facts.attrs.get("noise_level")
    if noise in b.noise_words:
        words.append(rng.choice(b.noise_words[noise]))
    if facts.kind in ("cafe", "bakery", "breakfast"):
        words.append("cozy")
    words += ["welcoming", "warm", "cozy", "bright"][: max(0, 2 - len(words))]
    rng.shuffle(words)
    return words[0], words[1] if len(words) > 1 and words[1] != words[0] else "welcoming"


def _parking_sentence(rng: random.Random, facts: PoiFacts, pol: str) -> str:
    b = banks()
    kinds = list(facts.attrs.get("parking") or ())
    key = rng.choice(kinds) if kinds else None
    options = b.parking_sentences[key]
    if key == "street" and pol == "neg":
        return options[-1]
    return rng.choice(options)


def _location_sentence(rng: random.Random, facts: PoiFacts, pol: str) -> str:
    b = banks()
    if facts.landmark:
        return rng.choice(b.location_near)
    return rng.choice(b.location_far)


def _value_sentence(rng: random.Random, facts: PoiFacts, pol: str) -> str:
    b = banks()
    level = facts.price or 2
    if facts.poi_type == "hotel":
        return _by_polarity(rng, pol, b.hotel_value_pos, b.hotel_value_neg)
    if facts.poi_type == "attraction" and not facts.kind.startswith("nightlife"):
        return _by_polarity(rng, pol, b.admission_pos, b.admission_neg)
    return _by_polarity(rng, pol, b.value_pos[level], b.value_neg[level], b.value_mix)


def _extras(facts: PoiFacts) -> list[str]:
    b = banks()
    out: list[str] = []
    a = facts.attrs
    for (key, value), sentences in b.restaurant_extras.items():
        if a.get(key) == value:
            out.extend(sentences)
    out.extend(b.diet_sentences[d] for d in a.get("dietary") or () if d in b.diet_sentences)
    out.extend(b.meal_sentences[m] for m in a.get("good_for_meal") or () if m in b.meal_sentences)
    return out


def _hotel_amenity(rng: random.Random, facts: PoiFacts, pol: str) -> str:
    b = banks()
    a = facts.attrs
    options: list[str] = []
    for amenity in facts.attrs.get("_amenities", ()):
        good, bad = b.hotel_amenities[amenity]
        options.append(good if pol == "pos" or (pol == "mix" and rng.random() < 0.5) else bad)
    wifi = a.get("wifi")
    if wifi in b.hotel_wifi:
        good, bad = b.hotel_wifi[wifi]
        options.append(good if pol != "neg" else bad)
    if a.get("dogs_allowed"):
        options.extend(b.hotel_pets)
    if a.get("wheelchair_accessible"):
        options.extend(b.hotel_access)
    if not options:
        options.append(_parking_sentence(rng, facts, pol))
    return rng.choice(options)


def _aspect_sentences(rng: random.Random, facts: PoiFacts, pol: str) -> list[Callable[[str], str]]:
    """The menu of aspect sentence makers for this POI, each a callable from a polarity to a sentence."""
    b = banks()
    t = facts.poi_type
    makers: list[Callable[[str], str]]
    if t == "restaurant":
        makers = [
            lambda p: _by_polarity(rng, p, b.food_pos, b.food_neg, b.food_mix),
            lambda p: _by_polarity(rng, p, b.food_pos, b.food_neg, b.food_mix),
            lambda p: _by_polarity(rng, p, b.service_pos, b.service_neg, b.service_mix),
            lambda p: _by_polarity(rng, p, b.ambience_pos, b.ambience_neg, b.ambience_mix),
            lambda p: _value_sentence(rng, facts, p),
            lambda p: _location_sentence(rng, facts, p),
        ]
        if rng.random() < PARKING_SHARE:
            makers.append(lambda p: _parking_sentence(rng, facts, p))
        extras = _extras(facts)
        if extras:
            makers += [lambda p: rng.choice(extras)] * 2
    elif t == "hotel":
        makers = [
            lambda p: _by_polarity(rng, p, b.room_pos, b.room_neg, b.room_mix),
            lambda p: _by_polarity(rng, p, b.room_pos, b.room_neg, b.room_mix),
            lambda p: _by_polarity(rng, p, b.front_desk_pos, b.front_desk_neg, b.front_desk_mix),
            lambda p: _hotel_amenity(rng, facts, p),
            lambda p: _hotel_amenity(rng, facts, p),
            lambda p: _by_polarity(rng, p, b.hotel_noise_pos, b.hotel_noise_neg),
            lambda p: _location_sentence(rng, facts, p),
            lambda p: _value_sentence(rng, facts, p),
            lambda p: _parking_sentence(rng, facts, p),
        ]
    elif t == "attraction":
        night = facts.kind.startswith("nightlife")
        makers = [
            lambda p: _by_polarity(
                rng,
                p,
                b.night_pos if night else b.exhibit_pos,
                b.night_neg if night else b.exhibit_neg,
                None if night else b.exhibit_mix,
            ),
            lambda p: _by_polarity(
                rng,
                p,
                b.night_pos if night else b.exhibit_pos,
                b.night_neg if night else b.exhibit_neg,
                None if night else b.exhibit_mix,
            ),
            lambda p: _by_polarity(
                rng, p, b.night_vibe_pos if night else b.crowd_pos, b.night_vibe_neg if night else b.crowd_neg
            ),
            lambda p: _location_sentence(rng, facts, p),
            lambda p: _value_sentence(rng, facts, p),
        ]
        if rng.random() < PARKING_SHARE:
            makers.append(lambda p: _parking_sentence(rng, facts, p))
        if facts.kind.startswith("tour"):
            makers += [lambda p: _by_polarity(rng, p, b.guide_pos, b.guide_neg)] * 2
        if facts.attrs.get("good_for_kids") and not night:
            makers.append(lambda p: _by_polarity(rng, p, b.kids_pos, b.kids_neg))
        if facts.kind in ("park", "landmark", "garden", "tour_boat"):
            makers.append(lambda p: rng.choice(b.views))
        if facts.attrs.get("wheelchair_accessible") and rng.random() < 0.5:
            makers.append(lambda p: "Mostly wheelchair accessible, with ramps and elevators to every level.")
        if facts.attrs.get("dogs_allowed"):
            makers.append(lambda p: "Dogs are welcome on a leash, so it is a good pet-friendly outing.")
    else:
        makers = [lambda p: _by_polarity(rng, p, b.other_pos, b.other_neg)] * 3
    return makers


class _Slots(dict):
    """Template slots; `item` / `item2` draw the POI's next specialty, so one review names several."""

    def __init__(self, rng: random.Random, specialties: list[str], **values: Any):
        super().__init__(**values)
        self._items = list(specialties) or ["food", "drinks"]
        rng.shuffle(self._items)
        self._next = 0

    def __missing__(self, key: str) -> str:
        if key in ("item", "item2"):
            value = self._items[self._next % len(self._items)]
            self._next += 1
            return value
        raise KeyError(key)


def compose_review(rng: random.Random, facts: PoiFacts, stars: int) -> str:
    """One review: opener, 2-4 aspect sentences (6-9 for long reviews), maybe a tip, a closer."""
    b = banks()
    pol = _polarity(stars)
    staff = rng.choice(facts.staff) if facts.staff else rng.choice(b.first_names)
    slots = _Slots(
        rng,
        facts.specialties,
        city=facts.city,
        staff=staff,
        landmark=facts.landmark or facts.city,
        pos=rng.choice(b.food_pos_adj),
        neg=rng.choice(b.food_neg_adj),
        mix=rng.choice(b.food_mix_adj),
        decor=rng.choice(b.decor),
        fits=rng.choice(b.fits),
        wait=rng.choice((20, 25, 30, 40, 45)),
        spot=rng.choice(b.view_spots),
        pool_kind=rng.choice(("rooftop", "outdoor", "heated indoor", "saltwater")),
        amount=_amount(
            rng, facts.price, {"hotel": "night", "attraction": "ticket"}.get(facts.poi_type, "meal")
        ),
    )
    slots["amb1"], slots["amb2"] = _ambience_words(rng, facts)

    parts: list[str] = []
    if rng.random() < 0.6:
        verb = rng.choice(b.visit_verbs.get(facts.poi_type, b.visit_verbs["other"]))
        verb = verb.format(
            meal=rng.choice(b.meals),
            nights=rng.choice(("two", "three", "four", "five")),
            part=rng.choice(b.day_parts),
        )
        occasion = rng.choice(b.occasions).format(city=facts.city)
        parts.append(f"{rng.choice(b.companions)} {verb} {occasion}.")
    makers = _aspect_sentences(rng, facts, pol)
    long_review = rng.random() < LONG_REVIEW_SHARE
    n_aspects = min(len(makers), rng.randint(6, 9) if long_review else rng.randint(2, 4))
    used: set[str] = set()
    for maker in rng.sample(makers, n_aspects):  # each aspect at most once (those listed twice: twice)
        # mixed reviews alternate; others stay on their polarity with an occasional counterpoint
        p = pol
        if pol == "mix":
            p = rng.choice(("pos", "neg", "mix"))
        elif rng.random() < 0.12:
            p = "mix"
        template = maker(p)
        if template in used:
            continue
        used.add(template)
        parts.append(template.format_map(slots))
    if long_review or rng.random() < 0.2:
        tip_bank = b.tip_bodies.get(facts.poi_type, b.tip_bodies["other"])
        parts.append(rng.choice(b.tips).format(tip=rng.choice(tip_bank)))
    closers = {"pos": b.closers_pos, "mix": b.closers_mix, "neg": b.closers_neg}[pol]
    if rng.random() < 0.8:
        parts.append(rng.choice(closers).format(city=facts.city))
    text = " ".join(parts)
    if long_review and len(parts) > 4 and rng.random() < 0.5:  # a paragraph break, as real reviews have
        cut = text.find(". ", len(text) // 2)
        if cut > 0:
            text = text[: cut + 1] + "\n\n" + text[cut + 2 :]
    return text
