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
    TRACE_SPACE_INTERACTIVE    folders of `trace-bench interact` --out folders, or leaderboard.interactive.json
                               files, separated by the path separator (default runs/interactive)
    TRACE_SPACE_CORE           folders of `trace-bench core score` --out folders (default runs/core)
    TRACE_SPACE_CORE_META      a `trace-bench core meta --out` result file (CoRE against human ratings)
    TRACE_SPACE_BLIND          gold folders of blind periods (`trace-bench corpus blind` OUT/gold), separated
                               by the path separator (spaces_app.blind)
    TRACE_SPACE_BLIND_REPOS    private Hub dataset ids holding gold folders, separated by the path separator
                               (downloaded with HF_TOKEN when the app starts)
    TRACE_SPACE_QUOTA          submissions one owner may make to a blind period (default 3)
    HF_TOKEN                   token with write access to TRACE_SPACE_RESULTS_REPO

When TRACE_SPACE_DATA is not set and `runs/demo/hydrated` exists (the output of `trace-bench demo`), the demo's
folders (`trace_harness.main_job.layout.demo_layout`) are used for every setting that is not given, so `trace-bench serve` right after the demo just works.
Interactive and CoRE folders given (the variables, `serve --interactive/--core`, keyword overrides) are read as
given, nothing else; with none given the demo's folders and the defaults where the docs' commands write
(runs/interactive, runs/core, relative to the current folder) are read. Folders that do not exist yet are read
when they appear (on a page load or Refresh), so a run made while the app serves shows up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_dataset.constants import SPLITS
from trace_harness.main_job.layout import DEFAULT_OUT as DEFAULT_DEMO_DIR
from trace_harness.main_job.layout import demo_layout

DEFAULT_MAX_UPLOAD_MB = 50
DEFAULT_QUOTA = 3
DEFAULT_RESULTS_DIR = Path("runs/space")
DEFAULT_INTERACTIVE_DIRS: tuple[Path, ...] = (Path("runs/interactive"),)
DEFAULT_CORE_DIRS: tuple[Path, ...] = (Path("runs/core"),)
ENV_VARS: tuple[str, ...] = (
    "TRACE_SPACE_DATA",
    "TRACE_SPACE_RESULTS",
    "TRACE_SPACE_RESULTS_REPO",
    "TRACE_SPACE_RUNS",
    "TRACE_SPACE_BASELINES",
    "TRACE_SPACE_SPLIT",
    "TRACE_SPACE_MAX_UPLOAD_MB",
    "TRACE_SPACE_AUTH",
    "TRACE_SPACE_INTERACTIVE",
    "TRACE_SPACE_CORE",
    "TRACE_SPACE_CORE_META",
    "TRACE_SPACE_BLIND",
    "TRACE_SPACE_BLIND_REPOS",
    "TRACE_SPACE_QUOTA",
    "HF_TOKEN",
)
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
    interactive_dirs: tuple[Path, ...] = (
        DEFAULT_INTERACTIVE_DIRS  # interact --out folders (or their board JSON)
    )
    core_dirs: tuple[Path, ...] = DEFAULT_CORE_DIRS  # `core score --out` folders
    core_meta: Path | None = None  # a `core meta --out` result file
    blind_dirs: tuple[Path, ...] = ()  # gold folders of blind periods (spaces_app.blind)
    blind_repos: tuple[str, ...] = ()  # private Hub datasets holding gold folders
    quota: int = DEFAULT_QUOTA  # submissions per owner and blind period

    def __post_init__(self) -> None:
        if self.split not in SPLITS:
            raise ValueError(f"unknown split {self.split!r} (TRACE_SPACE_SPLIT); expected one of {SPLITS}")
        if not isinstance(self.max_upload_mb, int) or self.max_upload_mb < 1:
            raise ValueError(
                f"max_upload_mb must be a positive integer (TRACE_SPACE_MAX_UPLOAD_MB); "
                f"got {self.max_upload_mb!r}"
            )
        if not isinstance(self.quota, int) or self.quota < 1:
            raise ValueError(f"quota must be a positive integer (TRACE_SPACE_QUOTA); got {self.quota!r}")
        if self.auth not in AUTH_MODES:
            raise ValueError(
                f"unknown submitter authentication {self.auth!r} (TRACE_SPACE_AUTH); expected one "
                f"of {AUTH_MODES}"
            )

    @classmethod
    def from_env(
        cls, env: Mapping[str, str] | None = None, demo_dir: Path = DEFAULT_DEMO_DIR, **overrides
    ) -> Settings:
        """Settings from `env` (default os.environ); keyword overrides that are not None win."""
        env = os.environ if env is None else env

        def path(name: str) -> Path | None:
            return Path(env[name]) if env.get(name) else None

        def paths(name: str) -> tuple[Path, ...] | None:
            given = [Path(p) for p in env.get(name, "").split(os.pathsep) if p]
            return tuple(given) or None

        def number(name: str, default: int, what: str) -> int:
            text = env.get(name, "")
            try:
                return int(text) if text else default
            except ValueError:
                raise ValueError(f"{name} must be an integer {what}; got {text!r}") from None

        values: dict[str, Any] = {
            "data_dir": path("TRACE_SPACE_DATA"),
            "results_dir": path("TRACE_SPACE_RESULTS"),
            "results_repo": env.get("TRACE_SPACE_RESULTS_REPO") or None,
            "hub_token": env.get("HF_TOKEN") or None,
            "runs_dir": path("TRACE_SPACE_RUNS"),
            "baselines_file": path("TRACE_SPACE_BASELINES"),
            "split": env.get("TRACE_SPACE_SPLIT") or None,
            "max_upload_mb": number("TRACE_SPACE_MAX_UPLOAD_MB", DEFAULT_MAX_UPLOAD_MB, "number of MB"),
            "auth": env.get("TRACE_SPACE_AUTH") or ("oauth" if on_hub_space(env) else None),
            "interactive_dirs": paths("TRACE_SPACE_INTERACTIVE"),
            "core_dirs": paths("TRACE_SPACE_CORE"),
            "core_meta": path("TRACE_SPACE_CORE_META"),
            "blind_dirs": paths("TRACE_SPACE_BLIND"),
            "blind_repos": tuple(r for r in env.get("TRACE_SPACE_BLIND_REPOS", "").split(os.pathsep) if r)
            or None,
            "quota": number("TRACE_SPACE_QUOTA", DEFAULT_QUOTA, "number of submissions"),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        given = {k for k in ("interactive_dirs", "core_dirs") if values.get(k) is not None}
        if values["data_dir"] is None and (demo_dir / "hydrated").is_dir():
            layout = demo_layout(demo_dir)
            for key in ("data_dir", "results_dir", "runs_dir", "baselines_file"):
                if values.get(key) is None:
                    values[key] = layout[key]
            for key in ("interactive_dir", "core_dir"):
                if values.get(key + "s") is None:
                    values[key + "s"] = (layout[key],)
        # with no folder given, where the docs' commands write (`--out runs/interactive/NAME`) too
        for key, defaults in (
            ("interactive_dirs", DEFAULT_INTERACTIVE_DIRS),
            ("core_dirs", DEFAULT_CORE_DIRS),
        ):
            if key not in given:
                values[key] = tuple(dict.fromkeys((*(values.get(key) or ()), *defaults)))
        return cls(**{k: v for k, v in values.items() if v is not None})
