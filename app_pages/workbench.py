"""The Workbench: write a scheduler of one's own in the browser and run it, in the sandbox, on the same stage as the
built-in ones. A thin page: ui.workbench draws it."""

import streamlit as st

from ui.language import t
from ui.workbench import workbench_page

st.set_page_config(page_title=t("workbench.page_title"), page_icon="🧮", layout="wide")
workbench_page()
