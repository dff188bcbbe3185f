"""Decoding settings in one place: every backend reads these, every result records them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from trace_bench import SEED
from trace_llm.errors import LLMConfigError

DEFAULT_TEMPERATURE = 0.0
DEFAULT_TOP_P = 1.0
DEFAULT_MAX_NEW_TOKENS = 256


@dataclass(frozen=True)
class DecodingSettings:
    """How a model decodes. temperature 0 means greedy (deterministic); above 0, sampling seeded by `seed`."""

    temperature: float = DEFAULT_TEMPERATURE
    top_p: float = DEFAULT_TOP_P
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    seed: int = SEED

    def __post_init__(self) -> None:
        # Normalise numeric types so 0 and 0.0 give the same cache key.
        for name, kind in (("temperature", float), ("top_p", float)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise LLMConfigError(f"decoding setting {name}={value!r}: expected a number")
            object.__setattr__(self, name, kind(value))
        for name in ("max_new_tokens", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise LLMConfigError(f"decoding setting {name}={value!r}: expected an integer")
        if not 0.0 <= self.temperature <= 5.0:
            raise LLMConfigError(
                f"temperature={self.temperature!r}: expected 0 <= temperature <= 5 (0 = greedy)"
            )
        if not 0.0 < self.top_p <= 1.0:
            raise LLMConfigError(f"top_p={self.top_p!r}: expected 0 < top_p <= 1")
        if self.max_new_tokens < 1:
            raise LLMConfigError(f"max_new_tokens={self.max_new_tokens!r}: expected a positive integer")
        if self.seed < 0:
            raise LLMConfigError(f"seed={self.seed!r}: expected a non-negative integer")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DecodingSettings:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise LLMConfigError(f"unknown decoding settings {unknown}; expected some of {sorted(known)}")
        return cls(**data)

    def replace(self, **changes: Any) -> DecodingSettings:
        return replace(self, **changes)
