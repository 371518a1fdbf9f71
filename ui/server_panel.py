"""The "this server" panel: the sessions this process serves (those whose tabs are open: their steps and how long
they waited), the runs they share, what the presets computed at start hold now, and the model worker's recent
passes, who was in them and how large they were (continuous batching, applied to the students). With
$SCHEDLAB_LECTURER_KEY set, whoever gives that key (within the limits on wrong keys) pins the run shown in the run
cache, as the presets computed at start are."""

import streamlit as st

from engine.run.runner_factory import started_model_worker
from i18n import MessageError
from session.classroom import server_lecturer_key
from session.run_cache import shared_run_cache
from ui.class_desk import check_server_key
from ui.classroom import stage_bound
from ui.language import said, t
from ui.state import lab, note_attendance, open_sessions, precomputed

SHOWN_PASSES, DETAILED_PASSES = 20, 5


def server_panel():
    note_attendance(lab())  # this session as it is now, on its own first page too
    if stage_bound() is not None:  # a follower at an open question: the sessions' frames (a classmate's who broke
        return  # away and ran on) and the runs' lengths are past the lecturer's frame
    cache, sessions = shared_run_cache(), open_sessions()
    stats = cache.stats()
    with st.sidebar.expander(t("server.title"), icon=":material/dns:"):
        st.markdown(t("server.cache", sessions=len(sessions), runs=stats["runs"], pinned=stats["pinned"],
                      mb=f"{stats['bytes'] / 2**20:.1f}", budget=f"{stats['budget_bytes'] / 2**20:.0f}",
                      share=f"{stats['share_bytes'] / 2**20:.0f}", hits=stats["hits"], misses=stats["misses"]))
        st.markdown("\n".join(f"- {session_line(session)}" for session in sessions))
        job = precomputed(st.session_state.runner)
        if job.status:
            st.caption(t("server.precomputed", presets="; ".join(
                f"{name} {said(state)}" + (f" ({said(holds)})" if (holds := job.holds(name, cache)) else "")
                for name, state in job.status.items())))
        pin_control()
        worker = started_model_worker()
        if worker is None:
            st.caption(t("server.no_model"))
            return
        worker_panel(worker)


def pin_control():
    """A lecturer pins the run shown: students' runs never evict it (session/run_cache.py)."""
    key = server_lecturer_key()  # the same key starts a class (session/classroom.py)
    if not key or lab().is_trace:
        return
    with st.form("pin_run", border=False):
        given = st.text_input(t("server.lecturer_key"), type="password")
        if st.form_submit_button(t("server.pin")):
            try:
                check_server_key(given, key)  # within the limits on wrong keys
            except MessageError as e:
                st.error(t("server.wrong_key") if e.message.key == "class.wrong_key" else said(e.message))
                return
            lab().pin()
            st.success(t("server.pinned"))


def session_line(session) -> str:
    waits = session.wait_percentiles()
    if waits is None:
        return t("server.session", name=session.name, run=session.run, steps=session.steps)
    return t("server.session_waits", name=session.name, run=session.run, steps=session.steps,
             p50=f"{waits[0]:.2f}", p95=f"{waits[1]:.2f}")


def worker_panel(worker):
    """The model worker's recent passes: sessions per pass, tokens and time, and who was in the latest ones."""
    stats = worker.stats()
    sessions, tokens = stats["recent_sessions"][-SHOWN_PASSES:], stats["recent_tokens"][-SHOWN_PASSES:]
    seconds = stats["recent_seconds"][-SHOWN_PASSES:]
    st.markdown(t("server.worker", passes=stats["forward_passes"],
                  sessions=" ".join(map(str, sessions)) or t("server.none_yet")))
    if tokens:
        budget = worker.loaded.pass_budget
        st.caption(t("server.tokens", mean=f"{sum(tokens) / len(tokens):.0f}", largest=max(tokens),
                     cap=budget.pass_tokens, session=budget.session_tokens,
                     ms=f"{1000 * sum(seconds) / len(seconds):.0f}"))
        passes = [", ".join(f"{'◦' if background else ''}{who or '?'}: {count}" for who, count, background in parts)
                  for parts in stats["recent_parts"][-DETAILED_PASSES:]]
        st.caption(t("server.passes", passes=" | ".join(passes)))
    if restarts := stats.get("restarts"):  # the model process's (runner/model_process.py)
        st.caption(t("server.restarts", count=restarts))
