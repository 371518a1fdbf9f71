"""A heavy export (a browser's drawing, a whole run as a file) built when asked, then offered for download."""

from __future__ import annotations

import streamlit as st

from ui.language import t
from ui.state import USER_ERRORS


def built_on_request(col, store: dict, name: str, make, build_label: str, download_label: str, file_name: str,
                     mime: str):
    """A button that builds `make()` once into `store[name]` (the caller clears the store when what it shows
    changes), then, in its place, the download button."""
    slot = col.empty()
    made = store.get(name)
    if made is None and slot.button(build_label, key=f"build_{name}"):
        try:
            with st.spinner(t("lab.building", file=file_name)):
                made = store[name] = make()
        except (OSError, ImportError, *USER_ERRORS) as e:  # no browser, no Pillow, over the size budget: say so
            slot.error(t("lab.build_failed", file=file_name, error=e))
            return
    if made is not None:
        slot.download_button(download_label, made, file_name, mime, key=f"download_{name}")
