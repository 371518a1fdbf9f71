"""What several test modules share, with no tests of its own: driving the app in AppTest (`app`), small engine
runs (`engines`), a bare scheduler loop (`scheduler_loop`) and a tiny seeded model for the runner (`tiny_model`).
Fixtures live in tests/conftest.py; no test module imports another."""
