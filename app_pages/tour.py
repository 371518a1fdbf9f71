"""The guided tour: the article's learning path, one workload under every scheduler the factory holds at each stop,
stepped side by side. A thin page: engine.analysis.tour runs the stops, viz.tour says them, ui.tour draws them."""

import streamlit as st

from ui.language import t
from ui.tour import tour_page

st.set_page_config(page_title=t("tour.page_title"), page_icon="🧮", layout="wide")
tour_page()
