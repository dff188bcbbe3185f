"""Assemble README.md from the section files in docs/ (one per area), in reading order.

The sections are the source; README.md is generated so each area's documentation lives next to the others'
without merge conflicts. Run: python scripts/build_readme.py
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ORDER = ("00_head", "foundation", "generator", "release", "llm", "metrics", "metrics_models", "baselines",
         "baselines_g2", "results", "space", "99_tail")  # fmt: skip
FRONT_MATTER = re.compile(r"```yaml\n(---\n.*?\n---)\n```", re.S)


def build() -> str:
    space = (ROOT / "docs/space.md").read_text(encoding="utf-8")
    front = FRONT_MATTER.search(space)
    if front is None:
        raise SystemExit("docs/space.md: the Space front matter block (```yaml --- ... --- ```) is missing")
    parts = [front.group(1) + "\n"]
    for name in ORDER:
        text = (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8")
        if name == "space":  # drop the note to the lead that carries the front matter
            text = text[text.index("## The leaderboard Space"):]
        parts.append(text.strip() + "\n")
    return "\n".join(parts)


if __name__ == "__main__":
    (ROOT / "README.md").write_text(build(), encoding="utf-8")
    print("wrote README.md")
