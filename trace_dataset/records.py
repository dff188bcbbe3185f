"""Typed interchange records for the knowledge base, with converters from the on-disk dicts.

Dialogues and turns stay plain dicts shaped by `schema.DIALOGUE_FEATURES` (that is what `datasets`
hands out); POIs and reviews are looked up constantly by every stage, so they get frozen dataclasses.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Poi:
    business_id: str
    name: str
    address: str
    city: str
    state: str
    latitude: float
    longitude: float
    categories: tuple[str, ...]
    stars: float
    review_count: int
    price: int | None
    attributes: dict[str, Any] = field(hash=False, compare=False)
    poi_type: str
    review_ids: tuple[str, ...]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Poi:
        return cls(
            business_id=d["business_id"],
            name=d["name"],
            address=d.get("address") or "",
            city=d["city"],
            state=d.get("state") or "",
            latitude=float(d["latitude"]),
            longitude=float(d["longitude"]),
            categories=tuple(d.get("categories") or ()),
            stars=float(d["stars"]),
            review_count=int(d.get("review_count") or 0),
            price=None if d.get("price") is None else int(d["price"]),
            attributes=dict(d.get("attributes") or {}),
            poi_type=d["poi_type"],
            review_ids=tuple(d.get("review_ids") or ()),
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["categories"] = list(self.categories)
        d["review_ids"] = list(self.review_ids)
        return d


@dataclass(frozen=True)
class Review:
    review_id: str
    business_id: str
    stars: float
    date: str
    text: str | None = None  # None where the knowledge base has no review text (a non-hydrated release)
    length: int | None = None  # characters of the original text (review_index), when known

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Review:
        return cls(
            review_id=d["review_id"],
            business_id=d["business_id"],
            stars=float(d["stars"]),
            date=d.get("date") or "",
            text=d.get("text"),
            length=d.get("length"),
        )
