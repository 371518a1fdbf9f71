"""The "this server" panel: the sessions this process serves, the runs they share, and the model worker's
recent batches (continuous batching, applied to the students)."""

import streamlit as st

from engine.run.runner_factory import started_model_worker
from session.run_cache import shared_run_cache
from ui.language import said, t
from ui.state import precomputed

SHOWN_PASSES = 20


def server_panel():
    cache = shared_run_cache().stats()
    with st.sidebar.expander(t("server.title"), icon=":material/dns:"):
        st.markdown(t("server.cache", sessions=cache["sessions"], runs=cache["runs"],
                      mb=f"{cache['bytes'] / 2**20:.1f}", budget=f"{cache['budget_bytes'] / 2**20:.0f}",
                      hits=cache["hits"], misses=cache["misses"]))
        if status := precomputed(st.session_state.runner).status:
            st.caption(t("server.precomputed", presets="; ".join(f"{name} {said(state)}" for name, state
                                                                  in status.items())))
        worker = started_model_worker()
        if worker is None:
            st.caption(t("server.no_model"))
            return
        stats = worker.stats()
        sessions, tokens = stats["recent_sessions"][-SHOWN_PASSES:], stats["recent_tokens"][-SHOWN_PASSES:]
        seconds = stats["recent_seconds"][-SHOWN_PASSES:]
        st.markdown(t("server.worker", passes=stats["forward_passes"],
                      sessions=" ".join(map(str, sessions)) or t("server.none_yet")))
        if tokens:
            st.caption(t("server.tokens", mean=f"{sum(tokens) / len(tokens):.0f}", largest=max(tokens),
                         ms=f"{1000 * sum(seconds) / len(seconds):.0f}"))
        if restarts := stats.get("restarts"):  # the model process's (runner/model_process.py)
            st.caption(t("server.restarts", count=restarts))
