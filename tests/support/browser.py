"""Start the app on 127.0.0.1 and drive Debian's Chromium with Playwright (never a downloaded browser)."""

from __future__ import annotations

import contextlib
import html
import os
import socket
from collections.abc import Iterator

CHROMIUM = os.environ.get("TRACE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
# the System column of the rendered leaderboard, top to bottom (the name, without a note mark)
SYSTEMS_JS = """() => [...document.querySelectorAll('#leaderboard-table table.trace-board tbody tr[data-system]')]
    .map(r => r.querySelector('td.sys bdi').textContent)"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _await(url: str, deadline_s: float = 300.0) -> None:
    """Return once `url` answers (any HTTP status); raise after `deadline_s` without an answer."""
    import time

    import httpx

    stop = time.monotonic() + deadline_s
    while True:
        try:
            httpx.head(url, timeout=30.0)
            return
        except httpx.TransportError:
            if time.monotonic() > stop:
                raise
            time.sleep(0.2)


@contextlib.contextmanager
def served(app, max_file_size: str = "5mb") -> Iterator[str]:
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    port = free_port()
    from spaces_app.app import theme

    app.launch(
        server_name="127.0.0.1",
        server_port=port,
        prevent_thread_lock=True,
        quiet=True,
        max_file_size=max_file_size,
        theme=theme(),
        # Gradio's own check (five HEADs of 3 s) fails on a loaded machine ("localhost is not accessible"):
        # skipped, and the server awaited here with a patient deadline instead
        _frontend=False,
    )  # the theme every launch of the app uses
    url = f"http://127.0.0.1:{port}/"
    _await(url)
    try:
        yield url
    finally:
        app.close()


@contextlib.contextmanager
def chromium() -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def chromium_page(browser=None) -> Iterator:
    """A fresh page (own context: no shared storage) in `browser`, or in a browser started for it."""
    with contextlib.ExitStack() as stack:
        if browser is None:
            browser = stack.enter_context(chromium())
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        stack.callback(context.close)
        page = context.new_page()
        page.set_default_timeout(60_000)  # a shared, loaded machine can be slow; a real failure still fails
        yield page


def systems(page) -> list[str]:
    return page.evaluate(SYSTEMS_JS)


def wait_for_table(page, text: str, present: bool = True, timeout: float = 60_000) -> None:
    page.wait_for_function(
        "([t, present]) => { const el = document.querySelector('#leaderboard-table');"
        " return !!el && el.innerText.includes(t) === present; }",
        arg=[text, present],
        timeout=timeout,
    )


# ---- the gap plot: hovering a point as a user does ----
GAP_PLOT = "#gap-plot .js-plotly-plot"
POINT_JS = """([group, name]) => {  // the page position of a named trace's point that stands furthest from the rest
  const gd = document.querySelector('#gap-plot .js-plotly-plot');
  const L = gd._fullLayout, box = gd.getBoundingClientRect();
  const px = (x, y) => [L.xaxis.l2p(x), L.yaxis.l2p(y)];
  const t = gd._fullData.find(t => t.legendgroup === group && t.name === name);
  const others = gd._fullData.flatMap(u => u.x.map((x, j) => [u, j])).filter(([u, j]) => u.y[j] != null)
    .map(([u, j]) => ({u, j, p: px(u.x[j], u.y[j])}));
  let best = 0, room = -1;  // the closest-hover pick is unambiguous only where no other point is near
  t.x.forEach((x, i) => {
    const [a, b] = px(x, t.y[i]);
    const d = Math.min(...others.filter(o => !(o.u === t && o.j === i)).map(o => Math.hypot(o.p[0] - a, o.p[1] - b)));
    if (d > room) { room = d; best = i; }
  });
  const [a, b] = px(t.x[best], t.y[best]);
  return {x: box.left + L._size.l + a, y: box.top + L._size.t + b, label: t.customdata[best][0]};
}"""


def hover_point(page, group: str, name: str) -> str:
    """The hover text of the trace's most isolated point (the plot may still be redrawing when the tab has just
    opened: the point is looked up again until its own label shows)."""
    text = ""
    for _ in range(8):
        point = page.evaluate(POINT_JS, [group, name])
        page.mouse.move(point["x"] + 40, point["y"] + 40)
        page.mouse.move(point["x"], point["y"])
        page.wait_for_selector("#gap-plot .hoverlayer .hovertext")
        text = page.eval_on_selector(
            "#gap-plot .hoverlayer .hovertext",
            "g => [...g.querySelectorAll('tspan.line')].map(t => t.textContent).join('\\n') || g.textContent",
        )
        if text.startswith(html.unescape(point["label"])):
            return text
        page.wait_for_timeout(500)
    return text
