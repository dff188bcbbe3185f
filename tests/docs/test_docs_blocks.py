"""The block finder of the docs tests: what counts as a tested block, and what is refused."""

from __future__ import annotations

import pytest

from tests.support.docs_blocks import marked_blocks, run_python


def test_marked_blocks_only_in_order(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "text\n```python\nnot = 'tested'\n```\n<!-- test -->\n```python\nx = 1\n```\n\n"
        "<!-- test -->\n```console\n$ echo hi\nhi\n```\n<!-- test -->\n````bash\necho '```'\n````\n"
    )
    blocks = marked_blocks(page)
    assert [(b.language, b.line, b.code) for b in blocks] == [
        ("python", 7, "x = 1\n"),
        ("console", 12, "$ echo hi\nhi\n"),
        ("bash", 17, "echo '```'\n"),
    ]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("<!-- test -->\n\n```python\nx = 1\n```\n", "followed directly"),
        ("<!-- test -->\n```text\nx\n```\n", "cannot run a 'text' block"),
        ("<!-- test -->\n```python\nx = 1\n", "never closed"),
    ],
)
def test_a_marker_that_tests_nothing_is_an_error(tmp_path, text, error):
    page = tmp_path / "page.md"
    page.write_text(text)
    with pytest.raises(ValueError, match=error):
        marked_blocks(page)


def test_python_blocks_share_a_namespace_and_doctests_check_output(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- test -->\n```python\nx = 40\n```\n<!-- test -->\n```python\n>>> x + 2\n42\n```\n"
        "<!-- test -->\n```python\n>>> x\n41\n```\n"
    )
    first, second, third = marked_blocks(page)
    namespace: dict = {}
    run_python(first, namespace)
    run_python(second, namespace)
    with pytest.raises(AssertionError, match="Expected:\n    41"):
        run_python(third, namespace)
