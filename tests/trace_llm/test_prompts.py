"""The one prompt-file format and loader (trace_llm/prompts.py): sections, comments, placeholders, hashes,
errors."""

from __future__ import annotations

import hashlib

import pytest

from trace_bench.errors import TraceBenchError
from trace_llm.prompts import PromptFileError, PromptRenderError, load_prompt, parse_prompt


def test_sections_comments_and_hash():
    text = "# v1\n# about\n\n=== system ===\nHi $city.\n=== user ===\n  A {json} ${x}s $$5\n\nend\n"
    p = parse_prompt(text, name="t.txt")
    assert p.sections == {"system": "Hi $city.", "user": "  A {json} ${x}s $$5\n\nend"}  # spaces kept
    assert p.sha256 == hashlib.sha256(text.encode()).hexdigest()
    assert p.describe() == {"file": "t.txt", "sha256": p.sha256}
    assert p.render("system", city="Reno", unused="ignored") == "Hi Reno."
    assert (
        p.render("user", x="$city {x}") == "  A {json} $city {x}s $5\n\nend"
    )  # one pass: values stay as given
    assert p.placeholders("user") == ("x",)


def test_a_missing_value_or_section_is_an_error_not_a_hole():
    p = parse_prompt("=== user ===\nA $x and $y\n", name="t.txt")
    with pytest.raises(PromptRenderError, match="prompt t.txt, section 'user': no value for placeholder 'y'"):
        p.render("user", x=1)
    with pytest.raises(KeyError, match="no section 'nope'; it has \\['user'\\]"):
        p.render("nope")


@pytest.mark.parametrize(
    "text, match",
    [
        ("no sections", "no '=== section ===' line"),
        ("stray\n=== a ===\nx", "line 1: text before the first section must be '#' comments"),
        ("=== a ===\nx\n=== a ===\ny", "line 3: section 'a' defined twice"),
        ("=== a ===\ncosts $ 5", "section 'a': a '\\$' that starts no placeholder on its line 1"),
        ("[system]\nthe format before the merge", "no '=== section ===' line"),
    ],
)
def test_bad_prompt_files_are_refused(text, match):
    with pytest.raises(PromptFileError, match=match) as caught:
        parse_prompt(text, name="bad.txt")
    assert isinstance(caught.value, TraceBenchError) and isinstance(caught.value, ValueError)


def test_load_names_the_file(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("# c\n=== s ===\nx\n", encoding="utf-8")
    assert load_prompt(path).describe()["file"] == "p.txt"
    assert load_prompt(path, name="pkg/p.txt").name == "pkg/p.txt"
    with pytest.raises(PromptFileError, match="not found"):
        load_prompt(tmp_path / "missing.txt")
    (tmp_path / "latin.txt").write_bytes(b"=== s ===\ncaf\xe9")
    with pytest.raises(PromptFileError, match="not UTF-8"):
        load_prompt(tmp_path / "latin.txt")
