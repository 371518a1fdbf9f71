"""The Streamlit side of the page: session state, the sidebar and the stage. Everything drawn comes from viz/."""
