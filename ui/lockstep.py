"""The policy lab's lockstep stages: player/lockstep.js as a Streamlit component (st.components.v2), sent every
frame of the comparison's runs at once, so stepping, playing and the slider never wait for the server. The
message is built once per comparison and language and kept as JSON text (a fraction of its size as Python
objects); a rerun sends the same text, which the browser keeps as it is (playing or not)."""

from __future__ import annotations

import json

import streamlit as st

from ui.language import current_lang, t
from viz.html_export import lockstep_message, lockstep_sources

LAST_STEP = 2000  # the stages hold steps 0..LAST_STEP: four long runs stay a few MB


@st.cache_resource(show_spinner=False)
def _component_sources() -> tuple[str, str]:
    """The players' and the lockstep's JS as the module a v2 component runs (its default export mounts), and CSS."""
    js, css = lockstep_sources()
    return (js + "\nexport default function (component) { return window.SchedlabLockstep.mount(component); }\n",
            css + "\n.sp-ls { --sp-ls-top: 3.75rem; }\n")  # its bar stops under Streamlit's header


def _message(runs, lang: str) -> str:
    """The lockstep message of `runs` in `lang` as JSON, built once per comparison and language."""
    built = st.session_state.get("lockstep_messages")
    if built is None or built["runs"] is not runs:
        built = st.session_state.lockstep_messages = {"runs": runs}
    if lang not in built:
        with st.spinner(t("lab.lockstep_preparing")):
            built[lang] = json.dumps(lockstep_message([(r.label, r.frames) for r in runs], lang, LAST_STEP))
    return built[lang]


def lockstep_stages(runs):
    """Every run's stage at the same step, on one slider, with the steps where their decisions part."""
    st.subheader(t("lab.lockstep"))
    st.caption(t("lab.lockstep_caption"))
    if (longest := max(len(r.frames) for r in runs) - 1) > LAST_STEP:
        st.caption(t("lab.lockstep_first", last=f"{LAST_STEP:,}", steps=f"{longest:,}"))
    js, css = _component_sources()
    component = st.components.v2.component("schedlab_lockstep", js=js, css=css, isolate_styles=False)
    component(data=_message(runs, current_lang()), key="lockstep")
