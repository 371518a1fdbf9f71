"""The "this server" panel: the sessions this process serves, the runs they share, and the model worker's
recent batches (continuous batching, applied to the students)."""

import streamlit as st

from engine.runners import started_model_worker
from session.run_cache import shared_run_cache
from ui.state import precomputed

SHOWN_PASSES = 20


def server_panel():
    cache = shared_run_cache().stats()
    with st.sidebar.expander("This server", icon=":material/dns:"):
        st.markdown(f"**{cache['sessions']}** sessions · **{cache['runs']}** runs cached "
                    f"({cache['bytes'] / 2**20:.1f} of {cache['budget_bytes'] / 2**20:.0f} MB) · "
                    f"{cache['hits']} opened or branched from the cache, {cache['misses']} computed")
        if status := precomputed(st.session_state.runner).status:
            st.caption("Computed at start ($SCHEDLAB_PRECOMPUTE): " + "; ".join(f"{name} {state}" for name, state
                                                                               in status.items()))
        worker = started_model_worker()
        if worker is None:
            st.caption("The real model is not loaded in this process: nothing to batch.")
            return
        stats = worker.stats()
        sessions, tokens = stats["recent_sessions"][-SHOWN_PASSES:], stats["recent_tokens"][-SHOWN_PASSES:]
        seconds = stats["recent_seconds"][-SHOWN_PASSES:]
        st.markdown(f"Model worker: **{stats['forward_passes']}** forward passes. Sessions per pass, latest "
                    f"last: {' '.join(map(str, sessions)) or 'none yet'}")
        if tokens:
            st.caption(f"Tokens per pass: mean {sum(tokens) / len(tokens):.0f}, largest {max(tokens)}; "
                       f"{1000 * sum(seconds) / len(seconds):.0f} ms per pass. Every session "
                       "waiting for the model joins the next pass, so more students cost fewer passes each.")
