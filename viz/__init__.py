"""Pure functions from recorded frames to Plotly figures and sentences. No Streamlit here."""
