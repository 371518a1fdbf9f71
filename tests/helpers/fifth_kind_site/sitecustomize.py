"""Put on PYTHONPATH of an app server a browser test starts (tests/test_browser_tour.py), this registers the fifth
kind of tests/helpers/fifth_kind.py in that server as it starts, before the app is first run."""

from tests.helpers.fifth_kind import register

register(dict.__setitem__)
