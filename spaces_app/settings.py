"""Space settings, read from environment variables (documented in docs/space.md) or given explicitly.

    TRACE_SPACE_DATA           hydrated Trace data directory (dialogue browser, scoring of submissions)
    TRACE_SPACE_RESULTS        local results-store folder (default runs/space)
    TRACE_SPACE_RESULTS_REPO   Hub dataset repo id: results store on the Hub instead of a folder
    TRACE_SPACE_RUNS           folder of baseline prediction files shown in the dialogue browser
    TRACE_SPACE_BASELINES      leaderboard.json written by `trace-bench leaderboard` (the baseline rows)
    TRACE_SPACE_SPLIT          split that submissions are scored on (default test)
    TRACE_SPACE_MAX_UPLOAD_MB  upload size limit in MB (default 50)
    TRACE_SPACE_AUTH           who owns a submission: oauth (Hugging Face login; the default on a Hub-hosted
                               Space) or token (a submitter token; the default elsewhere)
    HF_TOKEN                   token with write access to TRACE_SPACE_RESULTS_REPO

When TRACE_SPACE_DATA is not set and `runs/demo/hydrated` exists (the output of `trace-bench demo`), the demo's
folders are used for every setting that is not given, so `trace-bench serve` right after the demo just works.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from trace_dataset.constants import SPLITS

DEFAULT_MAX_UPLOAD_MB = 50
DEFAULT_RESULTS_DIR = Path("runs/space")
DEFAULT_DEMO_DIR = Path("runs/demo")
ENV_VARS: tuple[str, ...] = (
    "TRACE_SPACE_DATA", "TRACE_SPACE_RESULTS", "TRACE_SPACE_RESULTS_REPO", "TRACE_SPACE_RUNS",
    "TRACE_SPACE_BASELINES", "TRACE_SPACE_SPLIT", "TRACE_SPACE_MAX_UPLOAD_MB", "TRACE_SPACE_AUTH", "HF_TOKEN",
)  # fmt: skip
AUTH_MODES: tuple[str, ...] = ("oauth", "token")


def on_hub_space(env: Mapping[str, str]) -> bool:
    """Whether this process runs as a Hugging Face Space (the variables the Hub sets; Gradio's own test)."""
    return env.get("SYSTEM") == "spaces" and bool(env.get("SPACE_ID"))


@dataclass(frozen=True)
class Settings:
    data_dir: Path | None = None  # a hydrated Trace data directory (dialogues + knowledge base with text)
    results_dir: Path = DEFAULT_RESULTS_DIR  # local results store (the default backend)
    results_repo: str | None = None  # Hub dataset repo id: selects the Hub results store
    hub_token: str | None = field(default=None, repr=False)
    runs_dir: Path | None = None  # baseline prediction files shown in the dialogue browser
    baselines_file: Path | None = None  # leaderboard.json of `trace-bench leaderboard` (baseline rows)
    split: str = "test"
    max_upload_mb: int = DEFAULT_MAX_UPLOAD_MB
    show_paper_rows: bool = True
    auth: str = "token"  # who owns a submission: "oauth" (Hugging Face login) or "token" (submitter token)

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"unknown split {self.split!r} (TRACE_SPACE_SPLIT); expected one of {SPLITS}")
        if not isinstance(self.max_upload_mb, int) or self.max_upload_mb < 1:
            raise ValueError(f"max_upload_mb must be a positive integer (TRACE_SPACE_MAX_UPLOAD_MB); "
                             f"got {self.max_upload_mb!r}")
        if self.auth not in AUTH_MODES:
            raise ValueError(f"unknown submitter authentication {self.auth!r} (TRACE_SPACE_AUTH); expected one "
                             f"of {AUTH_MODES}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, demo_dir: Path = DEFAULT_DEMO_DIR,
                 **overrides) -> Settings:
        """Settings from `env` (default os.environ); keyword overrides that are not None win."""
        env = os.environ if env is None else env

        def path(name: str) -> Path | None:
            return Path(env[name]) if env.get(name) else None

        max_mb = env.get("TRACE_SPACE_MAX_UPLOAD_MB", "")
        try:
            max_upload_mb = int(max_mb) if max_mb else DEFAULT_MAX_UPLOAD_MB
        except ValueError:
            raise ValueError(f"TRACE_SPACE_MAX_UPLOAD_MB must be an integer number of MB; got {max_mb!r}") from None
        values = {
            "data_dir": path("TRACE_SPACE_DATA"),
            "results_dir": path("TRACE_SPACE_RESULTS"),
            "results_repo": env.get("TRACE_SPACE_RESULTS_REPO") or None,
            "hub_token": env.get("HF_TOKEN") or None,
            "runs_dir": path("TRACE_SPACE_RUNS"),
            "baselines_file": path("TRACE_SPACE_BASELINES"),
            "split": env.get("TRACE_SPACE_SPLIT") or None,
            "max_upload_mb": max_upload_mb,
            "auth": env.get("TRACE_SPACE_AUTH") or ("oauth" if on_hub_space(env) else None),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        if values["data_dir"] is None and (demo_dir / "hydrated").is_dir():
            for key, default in demo_layout(demo_dir).items():
                if values.get(key) is None:
                    values[key] = default
        return cls(**{k: v for k, v in values.items() if v is not None})


def demo_layout(demo_dir: Path) -> dict[str, Path]:
    """Where `trace-bench demo --out DEMO_DIR` puts what the app reads."""
    return {
        "data_dir": demo_dir / "hydrated",
        "results_dir": demo_dir / "space",
        "runs_dir": demo_dir / "runs" / "closed",
        "baselines_file": demo_dir / "leaderboard" / "leaderboard.json",
    }
