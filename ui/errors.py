"""An error no page expected: logged on the server with what the session was doing, shown as a sentence (the
server never shows tracebacks: .streamlit/config.toml sets client.showErrorDetails to none)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from ui.language import t

LOG = logging.getLogger("schedlab")


def session_context() -> str:
    """The link, the run and the frame shown: what the user did, in one line for the log."""
    lab = st.session_state.get("lab")
    run = "no run yet" if lab is None else f"run {lab.title!r} at frame {lab.cursor} of {lab.last}"
    return f"query {st.query_params.to_dict()}, {run}"


@contextmanager
def logged(action: str) -> Iterator[None]:
    """Run a page's code; an unexpected exception is logged with `action` and the session's context, and the
    user reads that it happened and how to go on."""
    try:
        yield
    except Exception:  # Streamlit's reruns and stops are BaseExceptions and pass through
        LOG.exception("unexpected error while %s (%s)", action, session_context())
        st.error(t("errors.unexpected"))
