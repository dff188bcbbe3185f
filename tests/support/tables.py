"""Reading the app's HTML tables in tests: what each cell and header shows, without its markup."""

from __future__ import annotations

import re
from html import unescape


def text(markup: str) -> str:
    """What a piece of markup shows: its tags removed, character references resolved."""
    return unescape(re.sub(r"<[^>]+>", "", markup))


def cells(markup: str) -> list[str]:
    """The shown text of every <td> in `markup`, in order."""
    return [text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", markup, re.S)]


def headers(markup: str) -> list[str]:
    """The shown text of every <th> in `markup`, in order."""
    return [text(c) for c in re.findall(r"<th[^>]*>(.*?)</th>", markup, re.S)]
