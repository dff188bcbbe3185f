"""The documentation site builds with warnings as errors (`mkdocs build --strict`, offline), every page is in
its nav, and the README front page keeps what the Hugging Face Space and the site need from it."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def _load_hooks():
    """scripts/mkdocs_hooks.py, the file mkdocs.yml names (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", REPO / "scripts" / "mkdocs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_hooks = _load_hooks()
card_pages, raise_headings, readme_as_home = _hooks.card_pages, _hooks.raise_headings, _hooks.readme_as_home


def _nav_files(nav) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [f for v in nav.values() for f in _nav_files(v)]
    return [f for item in nav for f in _nav_files(item)]


def test_site_builds_strict_and_offline(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Five-minute tour" in home and "sdk: gradio" not in home  # README, without the Space header
    assert "Metric Card for Trace Accuracy" in (site / "cards" / "accuracy" / "index.html").read_text("utf-8")
    assert "fonts.googleapis.com" not in home  # nothing fetched when the page is opened offline either


def test_pages_written_from_level_two_get_their_title_as_h1():
    page = "## Title\n\n```bash\n# a comment\n```\n### Section\n"
    assert raise_headings(page) == "# Title\n\n```bash\n# a comment\n```\n## Section\n"
    assert raise_headings("# Title\n## Section\n") == "# Title\n## Section\n"  # already right: unchanged


def test_the_nav_covers_every_page():
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_files(config["nav"])
    pages = sorted(p.name for p in (REPO / "docs").glob("*.md"))
    assert sorted(set(pages) - set(nav)) == [], "add these docs/ pages to the nav in mkdocs.yml"
    generated = {"index.md", *card_pages()}
    assert sorted(generated - set(nav)) == [], "add these metric cards to the nav in mkdocs.yml"
    assert sorted(set(nav) - set(pages) - generated) == [], "the nav names pages that do not exist"
    assert len(nav) == len(set(nav))


def test_readme_begins_with_the_space_header():
    """The Space reads its settings from the README's front matter; docs/space.md documents the block."""
    space = (REPO / "docs" / "space.md").read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(---\n.*?\n---)\n```", space, re.S)
    assert block, "docs/space.md no longer shows the Space header (```yaml --- ... --- ```)"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert readme.startswith(block.group(1) + "\n")
    header = yaml.safe_load(block.group(1).strip("-\n"))
    assert header["sdk"] == "gradio" and header["app_file"] == "app.py" and header["hf_oauth"] is True


def test_readme_stays_a_front_page():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 200
    for must in ("bash scripts/demo.sh", "bash scripts/test.sh", "source .venv/bin/activate"):
        assert must in readme
    home = readme_as_home(readme)
    assert not home.startswith("---") and "](docs/" not in home
    for link in re.findall(r"\]\(([^)#]+\.md)(?:#[^)]*)?\)", home):
        assert (REPO / "docs" / link).is_file(), f"README links to docs/{link}, which does not exist"


def _results_page_rows() -> dict[str, list[str]]:
    """System -> its Table 5 (closed pool) values in docs/results.md, in the page's column order."""
    text = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    block = text.split("Table 5: headline — pool: closed\n", 1)[1].split("\n\n", 1)[0].split("```", 1)[0]
    header, *lines = block.strip("\n").splitlines()
    lines = [ln for ln in lines if not ln.startswith("Lead: ")]  # the line on the leads under the table
    columns = [c.replace(" ", "") for c in re.split(r"\s{2,}", header.strip())]
    return {
        parts[0]: dict(zip(columns, parts, strict=True))
        for parts in (re.split(r"\s{2,}", ln.strip()) for ln in lines)
    }


def _number(cell: str) -> str:
    """The value of a table cell without its interval or significance mark: "0.349 ±0.014*" -> "0.349"."""
    return cell.split()[0].rstrip("*")


def test_readme_results_match_the_results_page():
    """The front page's table is a copy of docs/results.md's closed-pool Table 5: the same numbers."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Results on the built-in corpus", 1)[1].split("\n## ", 1)[0]
    rows = [
        [c.strip() for c in ln.strip().strip("|").split("|")]
        for ln in table.splitlines()
        if ln.startswith("|")
    ]
    header, _, *body = rows
    page = _results_page_rows()
    assert [r[0] for r in body] == list(page)  # every system of the page, in its order
    for row in body:
        for column, value in zip(header[1:], row[1:], strict=True):
            assert _number(page[row[0]][column.replace(" ", "")]) == _number(value), (row[0], column)


PACKAGED_ROW = re.compile(r"^(?P<system>.+?\(SmolLM2-135M-Instruct\.Q4_1\.gguf\)\S*(?: \[[^\]]+\])?)\s+\d")


def _packaged_rows(text: str) -> dict[str, str]:
    """System label -> its table line, for the rows of the packaged model's runs in a page."""
    return {
        m["system"]: " ".join(line.split()) for line in text.splitlines() if (m := PACKAGED_ROW.match(line))
    }


def test_packaged_model_rows_are_written_once():
    """The packaged model's LLM rows live in docs/results.md; a page or the README that shows one shows the
    same numbers (docs/llm_baselines.md's older table at another temperature disagreed with it)."""
    home = _packaged_rows((REPO / "docs" / "results.md").read_text(encoding="utf-8"))
    assert len(home) >= 6  # the six LLM baselines
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        if page.name == "results.md":
            continue
        for system, line in _packaged_rows(page.read_text(encoding="utf-8")).items():
            assert home.get(system) == line, f"{page.name}: {system} differs from docs/results.md"


def _markdown_table(text: str, first_header: str) -> tuple[list[str], list[list[str]]]:
    """(header, body rows) of the first markdown table of `text` whose header starts with `first_header`."""
    start = text.index(f"| {first_header} |")
    lines = text[start:].split("\n\n", 1)[0].splitlines()
    header, _, *body = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines]
    return header, body


def test_readme_live_table_matches_the_interactive_page():
    """The front page's live table is a copy of columns of docs/interactive.md's TF-versus-live table."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Live, with a simulated traveller", 1)[1].split("\n## ", 1)[0]
    header, body = _markdown_table(section, "System")
    page_header, page_body = _markdown_table(
        (REPO / "docs" / "interactive.md").read_text(encoding="utf-8"), "Baseline"
    )
    page = {r[0]: dict(zip(page_header, r, strict=True)) for r in page_body}
    assert [r[0] for r in body] == list(page)
    for row in body:
        for column, value in zip(header[1:], row[1:], strict=True):
            assert page[row[0]][column] == value, (row[0], column)


# Words of how the package was made, not of what it is: a reader has no issue, round or style guide to look up.
PROCESS_WORDS = re.compile(
    r"\b(?:[Tt]he issue's|[Ii]ssue \d+|STYLE \d+|(?:[Bb]efore|predate|[Aa]fter) this round|this round's)\b"
)


def test_no_process_words_in_the_docs_or_the_product():
    """The docs pages, the README, the metric cards and the product's modules (docstrings, comments, help) never
    cite an issue, a work round or a style guide outside the repository."""
    packages = (
        "trace_bench",
        "trace_llm",
        "trace_dataset",
        "trace_metrics",
        "baselines",
        "trace_harness",
        "spaces_app",
    )
    files = [
        REPO / "README.md",
        *(REPO / "docs").rglob("*.md"),
        *(REPO / "scripts").glob("*.sh"),
        *(REPO / "benchmarks").glob("*.py"),
    ]
    files += [
        p for pkg in packages for p in (REPO / pkg).rglob("*") if p.suffix in (".py", ".md", ".txt", ".yaml")
    ]
    found = [
        f"{path.relative_to(REPO)}:{n}: {m.group(0)!r}"
        for path in sorted(files)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for m in PROCESS_WORDS.finditer(line)
    ]
    assert not found, "process words (say what the package does, not how it got there):\n" + "\n".join(found)
    assert PROCESS_WORDS.search("the issue's reading") and PROCESS_WORDS.search("Before this round it")
    assert not PROCESS_WORDS.search("a city rejected this round but proposed again")  # Collab-REC's rounds


def _doc_commands() -> list[tuple[str, str]]:
    """(page, command) of every `trace-bench ...` line of the docs' shell blocks and every inline command that
    names its --out (a whole command, not a fragment); optional parts of a synopsis ("[--seed 42]") left out."""
    found = []
    for path in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        commands = [
            line.strip()
            for fence in re.findall(r"```(?:bash|sh|console)?\n(.*?)```", text, flags=re.S)
            for line in fence.replace("\\\n", " ").splitlines()
            if line.strip().startswith("trace-bench ")
        ]
        inline = re.sub(r"```.*?```", "", text, flags=re.S)
        commands += [
            " ".join(m.group(1).split())
            for m in re.finditer(r"(?<!`)`(trace-bench [a-z-]+ [^`]*--out [^`]*)`(?!`)", inline)
        ]
        for command in commands:
            command = re.sub(r"\[[^\]]*\]", "", re.split(r" #|;|&&|\||>", command)[0])
            if "..." not in command:
                found.append((str(path.relative_to(REPO)), command))
    return found


def test_every_command_in_the_docs_parses():
    """Each documented command is accepted by the command line as written (a required option left out, as
    `--out` was from collab_rec.md's first try, stops the test, not a reader)."""
    import contextlib
    import io
    import shlex

    from trace_bench.cli import build_parser

    parser = build_parser()
    commands = _doc_commands()
    wrong = []
    for page, command in commands:
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                parser.parse_args(shlex.split(command)[1:])
        except SystemExit as e:
            if e.code:
                wrong.append(f"{page}: {command}\n    {err.getvalue().strip().splitlines()[-1]}")
    assert len(commands) > 50 and not wrong, "\n".join(wrong)
    assert ("docs/collab_rec.md", next(c for p, c in commands if "collab_rec_try" in c)) in commands
