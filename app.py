"""schedlab's front door: `streamlit run app.py`. A thin page: the sidebar's controls and the stage, wired to
this session's engine. Everything drawn is a pure function in viz/."""

import streamlit as st

from ui.sidebar import sidebar
from ui.stage import stage
from ui.state import init_session

st.set_page_config(page_title="schedlab: LLM inference scheduling, step by step", page_icon="🧮", layout="wide")
st.markdown("<style>.block-container{padding-top:2.6rem;padding-bottom:1rem}</style>", unsafe_allow_html=True)

init_session()
if st.session_state.presentation:  # projector: larger text everywhere, not only in the figures
    st.markdown("<style>[data-testid=stMain] [data-testid=stMarkdownContainer] :is(p, li){font-size:1.3rem}"
                "</style>", unsafe_allow_html=True)
sidebar()
stage()
