"""spaces_app: the Trace leaderboard as a Gradio app (`trace-bench serve`, or a Hugging Face Space).

`build_app(settings)` builds the app; nothing happens at import.
"""

from __future__ import annotations

__all__ = ["build_app", "Settings"]


def __getattr__(name: str):
    if name == "build_app":
        from spaces_app.app import build_app

        return build_app
    if name == "Settings":
        from spaces_app.settings import Settings

        return Settings
    raise AttributeError(f"module 'spaces_app' has no attribute {name!r}")
