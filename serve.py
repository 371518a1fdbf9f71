"""schedlab's server: `streamlit run serve.py` serves the app (app.py) with what schedlab adds to Streamlit's web
server (ui/token_route.py): the route that sets a browser's token cookie HttpOnly, and the websocket's origin
checked with its port. `streamlit run app.py` still serves the pages, but a class needs these."""

import streamlit as st
from starlette.middleware import Middleware

from ui.token_route import WebsocketOrigin, routes

app = st.App("app.py", routes=routes(), middleware=[Middleware(WebsocketOrigin)])
