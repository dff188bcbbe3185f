"""The prediction record: one system turn's answer, as every pipeline returns it and a predictions file holds it.

Its fields are the prediction fields of `schema` (`PREDICTION_FEATURES` in order, then the optional `meta`; a
test ties the two), and it converts to and from the JSON line:

    {"dialogue_id", "turn_id", "ranked_poi_ids", "response", "citations": {"R1": review_id, ...}, "meta"?}

in that key order (`to_json` is the line `trace-bench run` writes, without its newline), and to the Features
form of `schema.PREDICTION_FEATURES` (`to_features`: citations as a list of {label, review_id}, no `meta`).
`meta` (free-form, ignored by the metrics; `meta.counts` are the per-row counters a run sums) is None when the
line has none, so a line read with `from_dict` is written back byte for byte.

Read as a mapping, a record is its JSON object (`p["ranked_poi_ids"]` is a list, `dict(p) == p.to_dict()`),
as a `transformers` `ModelOutput` reads as a dict: code written against the dict rows keeps working.
The validation of rows from outside (files, submissions) is `trace_metrics.lib.predictions`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

from trace_dataset.io import dumps


@dataclass(frozen=True, eq=False, slots=True)
class Prediction(Mapping[str, Any]):
    """One evaluated system turn: the ranking, the response and the reviews its [Rn] labels cite."""

    dialogue_id: str
    turn_id: int
    ranked_poi_ids: tuple[str, ...]  # best first; empty on turns without a ranking (farewell)
    response: str
    citations: Mapping[str, str]  # {"R1": review_id, ...}, in the order the labels were given
    meta: Mapping[str, Any] | None = None  # free-form; None: the line has no "meta"

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> Prediction:
        """The record of a JSON line's object (a trusted row: `trace_metrics.lib.predictions` checks others)."""
        return cls(
            row["dialogue_id"],
            row["turn_id"],
            tuple(row["ranked_poi_ids"]),
            row["response"],
            dict(row["citations"]),
            row.get("meta"),
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON line's object, keys in the schema's order; "meta" only when the record has one."""
        out: dict[str, Any] = {
            "dialogue_id": self.dialogue_id,
            "turn_id": self.turn_id,
            "ranked_poi_ids": list(self.ranked_poi_ids),
            "response": self.response,
            "citations": dict(self.citations),
        }
        if self.meta is not None:
            out["meta"] = dict(self.meta)
        return out

    def to_json(self) -> str:
        """The JSON line (`trace_dataset.io.dumps`: no spaces, UTF-8 text), without its newline."""
        return dumps(self.to_dict())

    def to_features(self) -> dict[str, Any]:
        """The row in the form of `schema.PREDICTION_FEATURES` (citations as a list of {label, review_id})."""
        return {
            "dialogue_id": self.dialogue_id,
            "turn_id": self.turn_id,
            "ranked_poi_ids": list(self.ranked_poi_ids),
            "response": self.response,
            "citations": [{"label": k, "review_id": v} for k, v in self.citations.items()],
        }

    # -- the mapping view: the JSON object ---------------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        if key == "ranked_poi_ids":
            return list(self.ranked_poi_ids)
        if key in _KEYS and (key != "meta" or self.meta is not None):
            return getattr(self, key)
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(_KEYS if self.meta is not None else _KEYS[:-1])

    def __len__(self) -> int:
        return len(_KEYS) - (self.meta is None)


_KEYS: tuple[str, ...] = tuple(f.name for f in fields(Prediction))  # the JSON keys, "meta" last

__all__ = ["Prediction"]
