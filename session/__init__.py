"""Per-browser-session state without Streamlit: a learner's run (the lab), shareable links. No figures."""
