"""schedlab's front door: `streamlit run app.py`. Four pages: the stepper (the sidebar's controls and the stage,
wired to this session's engine), the policy lab, the guided tour (the article's learning path) and the Workbench (a
scheduler of one's own, written in the browser). Everything drawn is a pure function in viz/."""

import streamlit as st

from ui import browser_states
from ui.class_desk import class_panel
from ui.classroom import follow_lead, join_from_url, left_the_stage
from ui.errors import logged
from ui.language import language_switch, t
from ui.server_panel import server_panel
from ui.sidebar import sidebar
from ui.stage import stage
from ui.state import as_this_session, init_session, keep_widget_state
from ui.tour import tour_pointer


def stepper():
    with as_this_session():  # the model steps of this page run (a link's, a branch in the sidebar) are this session's
        init_session()
        join_from_url()
        follow_lead()  # before the sidebar, which shows the lecturer's scenario and settings
        if st.session_state.presentation:  # projector: larger text everywhere, not only in the figures
            st.markdown("<style>[data-testid=stMain] [data-testid=stMarkdownContainer] :is(p, li){font-size:1.3rem}"
                        "</style>", unsafe_allow_html=True)
        sidebar()
        if not st.session_state.presentation:
            tour_pointer(TOUR)
        server_panel()
        class_panel()
        stage()


browser_states.install()  # every widget state a browser sends is checked before Streamlit reads it
st.set_page_config(page_title=t("app.page_title"), page_icon="🧮", layout="wide",
                   initial_sidebar_state="collapsed" if st.query_params.get("present") == "1" else "auto")
keep_widget_state()
TOUR = st.Page("app_pages/tour.py", title=t("app.tour"), icon=":material/route:", url_path="Tour")
pages = [st.Page(stepper, title=t("app.stepper"), icon=":material/skip_next:", default=True),
         st.Page("app_pages/policy_lab.py", title=t("app.policy_lab"), icon=":material/balance:",
                 url_path="Policy_lab"), TOUR,
         st.Page("app_pages/workbench.py", title=t("workbench.page"), icon=":material/code:", url_path="Workbench")]
language_switch()  # every page speaks the language chosen, and shares the page's CSS
st.markdown("<style>.block-container{padding-top:2.6rem;padding-bottom:1rem}</style>", unsafe_allow_html=True)
with logged("drawing the page"):
    page = st.navigation(pages)
    if page is not pages[0]:
        left_the_stage()  # a follower on another page is on their own
    page.run()
