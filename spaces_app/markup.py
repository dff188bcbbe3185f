"""Text that comes from data (system names, descriptions, dialogue text, usernames) put into markup as text.

Every renderer of the app gets data through here and nothing else: `esc` for HTML (gr.HTML values, titles,
attributes) also turns the characters of template syntaxes (`$ { } ` @ \\`) into character references, so
no template or math layer a front end may run over an HTML value (Gradio's HTML templates, LaTeX
delimiters, plotly's label markup) can read a name as code; `plot_text` does the same for plotly labels,
whose pseudo-HTML (<b>, <br>, <a>) and `$...$` math would otherwise render.
"""

from __future__ import annotations

import html
from typing import Any

_TEMPLATE_CHARS = {ord(c): f"&#{ord(c)};" for c in "${}`@\\"}


def esc(text: Any) -> str:
    """`text` as HTML text or attribute value: nothing in it is markup, a template or math."""
    return html.escape(str(text), quote=True).translate(_TEMPLATE_CHARS)


def plot_text(text: Any) -> str:
    """`text` for a plotly label, legend or hover text: plotly decodes character references, so the same
    escaping shows the characters themselves and never tags or math."""
    return esc(text)
