"""Reference solutions of the starters' exercises (starters/__init__.py names each starter's), for the tests and the
lecturer: each passes `python -m engine check`. The victim exercise's is starters/smart_victim.py."""
