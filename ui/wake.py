"""Wake another browser session: rerun its stage fragment now, from this one (a class following its lecturer).

Streamlit reruns a session when its browser asks; nothing public lets one session rerun another. Polling
(`st.fragment(run_every=...)`) would rerun every follower's stage every interval whether the lecturer moved or
not: thirty students at two polls a second is sixty stage reruns a second on a server of two cores. Instead, the
lecturer's step wakes each follower once, with the rerun request the session's own browser would send for the
fragment (widget states unchanged), queued on the server's event loop. This reaches into Streamlit's runtime
(`AppSession.request_rerun`'s own path, Streamlit 1.67); tests/test_browser_class.py drives it in a browser.
"""

from __future__ import annotations

from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

from session.classroom import Alive, Wake


def this_session() -> str | None:
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def waker() -> Wake | None:
    """A callable that reruns, from any thread, the fragment this is called in, in this session; False once the
    session has gone. None outside a fragment run by Streamlit's server (AppTest)."""
    ctx, fragment_id = get_script_run_ctx(), ThreadState.get().fragment_id
    if ctx is None or not fragment_id or not runtime.exists() or not hasattr(runtime.get_instance(), "_session_mgr"):
        return None  # AppTest's runtime is a stand-in without sessions
    session_id = ctx.session_id

    def wake() -> bool:
        info = runtime.get_instance()._session_mgr.get_active_session_info(session_id)
        if info is None:
            return False
        session = info.session
        session._event_loop.call_soon_threadsafe(_rerun_fragment, session, fragment_id)
        return True
    return wake


def alive() -> Alive:
    """A callable that tells, from any thread, whether this session's tab is still open (its connection; a closed
    tab's session lingers in Streamlit's memory a while, inactive). Outside a server (AppTest): always open."""
    ctx = get_script_run_ctx()
    if ctx is None or not runtime.exists() or not hasattr(runtime.get_instance(), "_session_mgr"):
        return lambda: True
    session_id = ctx.session_id
    return lambda: runtime.get_instance().is_active_session(session_id)


def _rerun_fragment(session, fragment_id: str):
    """On the server's event loop: what `AppSession.request_rerun` does for a fragment, keeping widget states."""
    if not session.has_fragment(fragment_id):
        return
    last = session._client_state  # what its browser last sent: the page and URL it is on
    data = RerunData(query_string=last.query_string, page_script_hash=last.page_script_hash,
                     page_name=last.page_name, fragment_id=fragment_id, is_fragment_scoped_rerun=True)
    runner = session._scriptrunner
    if runner is None or not runner.request_rerun(data):
        session._create_scriptrunner(data)
