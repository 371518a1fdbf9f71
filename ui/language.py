"""The language of this browser session: opened from the link's `lang=` (session/links.py), switched in the
sidebar, and passed explicitly to every function that writes words (viz/, i18n/)."""

from __future__ import annotations

import streamlit as st

from i18n import LANGUAGES, count, in_lang, language, text

KEY = "lang"  # the session-state key, which is also the switch's widget key


def current_lang() -> str:
    """This session's language; the first page run takes it from the link."""
    if KEY not in st.session_state:
        st.session_state[KEY] = language(st.query_params.get("lang"))
    return st.session_state[KEY]


def t(key: str, **values) -> str:
    """A message in this session's language."""
    return text(current_lang(), key, **values)


def counted(key: str, n: int) -> str:
    """`n` things in this session's language ("1 student", "3 students": the message's `.one` or `.other` form)."""
    return count(current_lang(), key, n)


def said(message) -> str:
    """A Message (or an error carrying one: a refused setting, a link's fix) in this session's language; kept
    unrendered in session state, a message follows the language switch."""
    return in_lang(current_lang(), message)


def language_switch():
    """English / 中文, at the top of the sidebar: every word of both pages follows it."""
    current_lang()
    st.sidebar.radio(text("en", "ui.language") + " / " + text("zh", "ui.language"), list(LANGUAGES), key=KEY,
                     format_func=LANGUAGES.get, horizontal=True, help=t("input.language"))
