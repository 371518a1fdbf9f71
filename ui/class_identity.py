"""Who this browser is in a class: a token kept in a cookie, so a reload (a new Streamlit session) is the same
student, or the same lecturer; and who is guessing, for the limits on wrong codes and keys (session/limits.py).

Streamlit reads the cookies a browser sent when its page connected (`st.context.cookies`) but cannot set one; a
one-line component sets it in the page (`document.cookie`). The token is drawn on the server; a browser without
the cookie yet gets a new one, written by the page. No password: the token is the proof, unguessable (24 random
bytes), and never in an address.
"""

from __future__ import annotations

import re
import secrets

import streamlit as st

from session.client_identity import client_identity, trusted_proxies
from session.limits import Guesser
from ui.wake import this_session

TOKEN_COOKIE = "schedlab_browser"
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{32}")
TOKEN_DAYS = 180
WRITE_COOKIE_JS = """
export default function ({data}) {
  if (!data || !data.name) return;
  const secure = location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `${data.name}=${data.value}; path=/; max-age=${data.max_age}; SameSite=Lax${secure}`;
}
"""


def browser_token() -> str:
    """This browser's token: its cookie's, or one drawn now (written by `keep_token`)."""
    state = st.session_state
    if "browser_token" not in state:
        sent = _cookies().get(TOKEN_COOKIE, "")
        state.browser_token = sent if TOKEN_SHAPE.fullmatch(sent) else secrets.token_urlsafe(24)
        state.token_sent = state.browser_token == sent
    return state.browser_token


def keep_token():
    """Write the token's cookie in this browser, until its page connects with it (drawn on full page runs)."""
    token = browser_token()
    if st.session_state.get("token_sent"):
        return
    writer = st.components.v2.component("schedlab_browser_token", js=WRITE_COOKIE_JS, isolate_styles=False)
    writer(data={"name": TOKEN_COOKIE, "value": token, "max_age": TOKEN_DAYS * 86400}, key="browser_token_cookie")


def guesser() -> Guesser:
    """This session and the client identity its connection comes from (behind a proxy the operator declared
    trusted, the client's address the proxy names: session/client_identity.py)."""
    try:
        address, forwarded = st.context.ip_address, st.context.headers.get_all("x-forwarded-for")
    except (AttributeError, RuntimeError):
        address, forwarded = None, []
    address = address if isinstance(address, str) else None  # (AppTest's context is a stand-in)
    return Guesser(this_session() or "", client_identity(address, forwarded, trusted_proxies()))


def _cookies() -> dict[str, str]:
    try:
        return dict(st.context.cookies or {})
    except (AttributeError, RuntimeError):  # AppTest's context has no request
        return {}
