"""The printed handout as PDF: Chromium's own printing of the offline handout page (viz/html_export.handout_html),
a title page and one page per key frame."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path

from i18n import MessageError
from render import chromium
from viz.handout import Handout
from viz.html_export import handout_html

PDF_TIMEOUT_S = 60  # the most one PDF may take the server's browser


def handout_pdf(handout: Handout, timeout_s: float = PDF_TIMEOUT_S) -> bytes:
    """The printed handout as PDF; a MessageError when there is no browser, it fails or it takes more than
    `timeout_s`."""
    chromium.require_chromium()
    with chromium.BROWSER_TURN, tempfile.TemporaryDirectory() as folder:
        page, pdf = Path(folder) / "handout.html", Path(folder) / "handout.pdf"
        page.write_text(handout_html(handout))
        command = [chromium.CHROMIUM, "--headless", *chromium.CHROMIUM_ARGS, f"--user-data-dir={folder}/profile",
                   "--no-pdf-header-footer", f"--print-to-pdf={pdf}", page.as_uri()]
        browser = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)  # its own process group: a timeout ends all of it
        try:
            _, errors = browser.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(browser.pid, signal.SIGKILL)
            browser.communicate()
            raise MessageError("export.pdf_timeout", s=timeout_s) from None
        if not pdf.is_file() or not pdf.stat().st_size:
            detail = (errors.strip().splitlines() or [f"exit status {browser.returncode}"])[-1]
            raise MessageError("export.browser_failed", path=chromium.CHROMIUM, detail=detail)
        return pdf.read_bytes()
