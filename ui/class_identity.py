"""Who this browser is in a class: a token the server issued (session/tokens.py), kept in a cookie, so a reload (a
new Streamlit session) is the same student, or the same lecturer; and who is guessing, for the limits on wrong codes
and keys (session/limits.py).

Streamlit reads the cookies a browser sent when its page connected (`st.context.cookies`) but cannot set one, and
a cookie set by the page itself (`document.cookie`) is one every page of the host can read, whatever its port. So
the server sets it: a browser without an issued token gets a fresh one, and the page is handed a one-use ticket
for it, which a one-line component sends to the server's route (ui/token_route.py); its answer sets the cookie
HttpOnly (no page reads it), SameSite=Strict, Secure behind HTTPS. A token the server never issued is refused.
No password: the token is the proof, unguessable, never in an address nor in a page.
"""

from __future__ import annotations

import streamlit as st
from streamlit import runtime

from session.classroom import classes
from session.client_identity import client_identity, trusted_proxies
from session.limits import Guesser
from ui.language import t
from ui.token_route import TOKEN_COOKIE, mounted, route_path
from ui.wake import this_session

SEND_TICKET_JS = """
const sent = new Set();  // each ticket once per page (the page's runs draw it again until a reload)
export default function ({data}) {
  if (!data || !data.ticket || sent.has(data.ticket)) return;
  sent.add(data.ticket);
  fetch(data.route, {method: 'POST', credentials: 'same-origin', body: data.ticket})
    .catch(() => sent.delete(data.ticket));  // not reached: sent again on the next run
}
"""
BROWSERS = (("Edg/", "Edge"), ("Firefox/", "Firefox"), ("Chrome/", "Chrome"), ("Chromium/", "Chromium"),
            ("Safari/", "Safari"))  # the first a browser's User-Agent names (Chrome's names Safari too)
SYSTEMS = (("Android", "Android"), ("iPhone", "iOS"), ("iPad", "iPadOS"), ("Windows", "Windows"),
           ("Macintosh", "macOS"), ("CrOS", "ChromeOS"), ("Linux", "Linux"))


def browser_token() -> str:
    """This browser's token: its cookie's when the server issued it, else one issued now (sent by `keep_token`)."""
    state = st.session_state
    if "browser_token" not in state:
        sent = _cookies().get(TOKEN_COOKIE, "")
        issued = classes().tokens.issued(sent)
        state.browser_token = sent if issued else classes().tokens.issue()
        state.token_sent = issued
    return state.browser_token


def use_token(token: str):
    """This browser goes by `token` from now on (issued now: the lecturer's, when the class's secret is rotated);
    `keep_token` has its cookie set."""
    st.session_state.update(browser_token=token, token_sent=False)


def keep_token():
    """Have the server set the token's cookie in this browser, until its page connects with it (drawn on full page
    runs): the page sends a ticket, never the token."""
    token, state = browser_token(), st.session_state
    if state.get("token_sent"):
        return
    if not mounted() and _served():  # `streamlit run app.py`: nothing would set the cookie
        st.warning(t("class.needs_serve"))
        return
    if state.get("token_ticket", ("",))[0] != token:
        state.token_ticket = (token, classes().tokens.ticket(token))
    sender = st.components.v2.component("schedlab_browser_token", js=SEND_TICKET_JS, isolate_styles=False)
    sender(data={"route": route_path(), "ticket": state.token_ticket[1]}, key="browser_token_cookie")


def device() -> str:
    """This browser and its system as its User-Agent names them ("Chrome · Linux"; "" when it names neither): the
    lecturer's desk lists its devices so."""
    agent = _user_agent()
    found = [next((name for mark, name in marks if mark in agent), None) for marks in (BROWSERS, SYSTEMS)]
    return " · ".join(name for name in found if name)


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


def _served() -> bool:
    """Whether this page is served by a Streamlit server (not AppTest's stand-in runtime)."""
    return runtime.exists() and hasattr(runtime.get_instance(), "_session_mgr")


def _user_agent() -> str:
    try:
        return st.context.headers.get("User-Agent") or ""
    except (AttributeError, RuntimeError):
        return ""
