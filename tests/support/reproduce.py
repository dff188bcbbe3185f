"""Builders for the `trace-bench reproduce` tests: a config file over the LLM baselines' tiny data directory
(tests.support.llm_baselines), and a stub-server responder that answers exactly as the dry run does.

Models are told apart by name at the transport: `sys` serves the systems, `sim` the traveler, `judge` the LLM
judge and `core` CoRE, so that requests can be counted per role where they arrive.
"""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import yaml

from tests.support.stub_server import completion
from trace_harness.reproduce.collect import CORE_SYNTHETIC_TEXT
from trace_llm.collecting import SYNTHETIC_TEXT, synthetic_reply

ROLE_OF_MODEL = {"sys": "systems", "sim": "simulator", "judge": "judge", "core": "core"}
PREFLIGHT_TEXT = "Reply with the word: ready"


def dry_run_responder(body: dict[str, Any]):
    """The answer the dry run assumes: a minimal schema-valid JSON value, else the fixed text (a valid rating for
    CoRE's factor requests), from the model the request names."""
    text = CORE_SYNTHETIC_TEXT if body["model"] == "core" else SYNTHETIC_TEXT
    return (200, {**completion(synthetic_reply(body["messages"], text)), "model": body["model"]})


def requests_by_role(requests: list[dict[str, Any]]) -> dict[str, int]:
    """Requests a stub received, per role (preflight requests left out)."""
    counts = collections.Counter(
        ROLE_OF_MODEL.get(r["model"], r["model"])
        for r in requests
        if r["messages"][-1]["content"] != PREFLIGHT_TEXT
    )
    return dict(counts)


def write_config(path: Path, data: Path, url: str, **overrides: Any) -> Path:
    """A reproduce config over `data` whose models are served at `url` (a stub or a dead address)."""
    config: dict[str, Any] = {
        "data": str(data),
        "out": str(path.parent / "out"),
        "parts": ["table5"],
        "systems": ["popularity", "llm_zero_shot"],
        "closed": {"split": "all"},
        "open": {"split": "all", "subset": 2},
        "models": {
            "systems": {
                "llm": f"openai:{url}#sys",
                "max_new_tokens": 48,
            },  # a ranking of 16 cards closes in 48
            "simulator": f"openai:{url}#sim",
            "judge": f"openai:{url}#judge",
            "core": f"openai:{url}#core",
        },
        "transport": {"backoff": 0.0, "max_retries": 1, "timeout": 20},
        "cache": str(path.parent / "cache" / "llm.sqlite"),
        "leaderboard": {"n_boot": 20},
    }
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path
