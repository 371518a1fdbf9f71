"""Headless Chromium for the server: where it is, how it starts, and one browser at a time."""

from __future__ import annotations

import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from i18n import MessageError

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
# One browser at a time on the server: a class's steps share its cores, and a student's GIF (80 screenshots) or
# PDF must not become thirty students' at once. A second build waits its turn in its own session.
BROWSER_TURN = threading.Lock()


def require_chromium():
    """A MessageError, said as the page shows it (not a traceback), when this server has no Chromium."""
    if not Path(CHROMIUM).is_file():
        raise MessageError("export.no_browser", path=CHROMIUM)


def in_chromium(page_html: str, width: int, height: int, photograph: Callable, scale: float = 1.0) -> list[bytes]:
    """Open `page_html` offline in headless Chromium at width x height CSS pixels, `scale` device pixels each (no
    motion), and return `photograph(page)`'s PNG bytes."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    require_chromium()
    with BROWSER_TURN, tempfile.TemporaryDirectory() as folder:
        page_path = Path(folder) / "page.html"
        page_path.write_text(page_html)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=scale,
                                            reduced_motion="reduce")
                    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                               else route.abort())  # nothing but the page itself
                    page.goto(page_path.as_uri())
                    return photograph(page)
                finally:
                    browser.close()
        except PlaywrightError as e:
            raise MessageError("export.browser_failed", path=CHROMIUM, detail=str(e).splitlines()[0]) from None
