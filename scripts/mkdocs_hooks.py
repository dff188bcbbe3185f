"""mkdocs hooks (mkdocs.yml `hooks:`): site pages whose source lives outside docs/, so it has one copy.

- `index.md` is README.md (the front page on GitHub and of the Hugging Face Space) without its Space front
  matter, its links into docs/ pointed at the site's pages.
- `cards/<name>.md` is the metric card trace_metrics/<name>/README.md (evaluate-style; its `>>>` examples run
  as tests). mkdocs reads the card's YAML header as page metadata (`title`), so the page shows the card's text.
- A page written for the old one-file README starts at `##` (its title) with `###` sections: its headings are
  raised one level on the site, so the title is the page's `<h1>` instead of a second title under the theme's.

Nothing here reaches the network; `mkdocs build --strict` (tests/docs/test_docs_site.py) builds the site offline.
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
CARDS = ROOT / "trace_metrics"
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_DOCS_LINK = re.compile(r"\]\(docs/")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def readme_as_home(text: str) -> str:
    """README.md as the site's index.md: no Space header, `docs/x.md` links as `x.md`."""
    return _DOCS_LINK.sub("](", _FRONT_MATTER.sub("", text, count=1))


def card_pages() -> dict[str, Path]:
    """Site path -> metric card, for every trace_metrics/<name>/README.md."""
    return {f"cards/{p.parent.name}.md": p for p in sorted(CARDS.glob("*/README.md"))}


def raise_headings(markdown: str) -> str:
    """`## Title` / `### Section` -> `# Title` / `## Section` when the page has no `#` heading (code untouched)."""
    lines, fence, levels = markdown.split("\n"), None, []
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if m:
            fence = None if fence and m.group(1).startswith(fence) else (fence or m.group(1))
        elif fence is None and re.match(r"#{1,6} ", line):
            levels.append((i, len(line) - len(line.lstrip("#"))))
    if not levels or levels[0][1] != 2 or any(level == 1 for _, level in levels):
        return markdown
    for i, _ in levels:
        lines[i] = lines[i][1:]
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:
    return raise_headings(markdown)


def on_files(files: Files, config) -> Files:
    files.append(
        File.generated(config, "index.md", content=readme_as_home((ROOT / "README.md").read_text("utf-8")))
    )
    for uri, card in card_pages().items():
        files.append(File.generated(config, uri, content=card.read_text("utf-8")))
    return files
