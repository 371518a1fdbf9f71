"""The Workbench's code editor: CodeMirror 6 (editor/src/editor.js), bundled from npm by esbuild at `make install`
into editor/dist/ (ignored; editor/package-lock.json pins every package), mounted as a Streamlit v2 component.

Why our own component, measured against the PyPI ones (December 2026, streamlit==1.67.0):
- streamlit-monaco 0.1.3 loads Monaco from cdn.jsdelivr.net at run time: no editor on a machine without internet.
- streamlit-ace 0.1.1 was last released in December 2021 and offers no way to mark an error at a line.
- streamlit-code-editor 0.1.22 (Ace through react-ace, last released December 2024) bundles its editor (16 MB
  wheel) and takes Ace annotations, but runs in a v1 component's iframe, resized by messages, and its React build
  is a second frontend to keep.
CodeMirror 6 is maintained, small (the bundle ~400 kB), offline once built, has Python highlighting and line numbers,
and its lint package marks a diagnostic at its line in the gutter with the message; a v2 component (as the stage
player is, ui/stage.py) puts it in the page itself, with no iframe.

The server owns the text: `code_editor` shows `source` when `doc_id` is new (a starter picked, a file uploaded) and
the learner's edits come back as the component's `source` state (read by `on_change`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

BUNDLE = Path(__file__).resolve().parent / "dist" / "editor.js"
EDITOR_KEY = "workbench_editor"  # the component's key: its state holds the learner's text (`edited_source`)


@dataclass(frozen=True)
class Marker:
    """An error shown at `line` (1-based) of the editor's text: a gutter mark, the line underlined, `message`."""
    line: int
    message: str


def editor_built() -> bool:
    """Whether `make install` has built the editor's bundle (npm and esbuild)."""
    return BUNDLE.is_file()


@st.cache_resource(show_spinner=False)
def _component():
    return st.components.v2.component("schedlab_code_editor", js=BUNDLE.read_text(), isolate_styles=False)


def code_editor(source: str, doc_id: str, markers: tuple[Marker, ...], marker_id: str, label: str,
                on_change: Callable[[], None], height: int):
    """The editor, showing `source` when `doc_id` is new and `markers` when `marker_id` is new."""
    _component()(data={"source": source, "doc_id": doc_id, "markers": [m.__dict__ for m in markers],
                       "marker_id": marker_id, "height": height, "label": label},
                 key=EDITOR_KEY, on_source_change=on_change)


def edited_source() -> str | None:
    """The text the learner's editor last sent (None before any edit); a string, whatever the browser sent."""
    state = st.session_state.get(EDITOR_KEY)
    value = state.get("source") if hasattr(state, "get") else None
    return value if isinstance(value, str) else None
