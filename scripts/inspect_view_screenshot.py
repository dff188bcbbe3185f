"""Render docs/assets/inspect_view.png: `inspect view` on a log of `trace_bench/trace`, one turn's scoring.

    .venv/bin/python scripts/inspect_view_screenshot.py [--out docs/assets/inspect_view.png]

The log is made here, offline: the small built-in world (synthetic bundle at scale 0.1, 11 POIs per cell, 48
template dialogues, as the tests' `small_corpus`), one seeded dialogue of its test split, and the tests'
scripted model (tests/support/inspect_model.py: it ranks the cards from last to first and quotes the first
review with its label), so the picture shows the protocol and the citations, not a model's quality. `inspect
view` serves the log on 127.0.0.1 and Debian's Chromium (Playwright, headless) photographs the first
recommend turn's Scoring tab: its per-turn metric values and the ranking, gold and citations by name.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, free_port  # noqa: E402
from tests.support.inspect_model import inspect_model  # noqa: E402

VIEWPORT = {"width": 1400, "height": 900}


def make_log(work: Path) -> Path:
    from inspect_ai import eval as inspect_eval

    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb
    from trace_dataset.yelp.synth import write_synthetic_bundle

    bundle = write_synthetic_bundle(work / "bundle", seed=42, scale=0.1)
    build_kb(bundle, work / "kb", per_cell=11)
    generate_corpus(work / "kb", work / "corpus", n=48, seed=42, workers=1, progress=False)
    model, _ = inspect_model()
    [log] = inspect_eval(
        "trace_bench/trace",
        model=model,
        task_args={"data": str(work / "corpus"), "subset": 1, "n_boot": 1000},
        log_dir=str(work / "logs"),
        display="none",
    )
    return Path(log.location)


def wait_for(url: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"inspect view did not answer at {url}")


def photograph(log: Path, out: Path) -> None:
    from inspect_ai.log import read_eval_log
    from playwright.sync_api import sync_playwright

    sample = next(s.id for s in read_eval_log(str(log)).samples if s.metadata["action"] == "recommend")
    port = free_port()
    inspect = Path(sys.executable).with_name("inspect")
    view = subprocess.Popen(
        [str(inspect), "view", "--log-dir", str(log.parent), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for(f"{base}/api/logs")
        page_url = (
            f"{base}/#/tasks/{log.name}/samples/sample/{urllib.parse.quote(str(sample), safe='')}/1/scoring"
        )
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(page_url, wait_until="networkidle")
            page.get_by_text("citations:", exact=False).first.wait_for(timeout=30_000)
            page.screenshot(path=str(out))
            browser.close()
    finally:
        view.terminate()
        view.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "assets" / "inspect_view.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        photograph(make_log(Path(tmp)), args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
