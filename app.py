"""Hugging Face Space entry point (README front matter: sdk gradio, app_file app.py).

Settings come from environment variables (Space variables and secrets): TRACE_SPACE_DATA, TRACE_SPACE_RESULTS,
TRACE_SPACE_RESULTS_REPO, TRACE_SPACE_RUNS, TRACE_SPACE_BASELINES, TRACE_SPACE_SPLIT, TRACE_SPACE_MAX_UPLOAD_MB,
HF_TOKEN (see docs/space.md). Locally, `trace-bench serve` does the same with command-line options.
"""

from spaces_app.app import build_app, launch_options
from spaces_app.settings import Settings

settings = Settings.from_env()
demo = build_app(settings)

if __name__ == "__main__":
    demo.launch(**launch_options(settings))
