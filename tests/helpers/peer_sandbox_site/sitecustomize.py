"""Put on PYTHONPATH of an app server a browser test starts (tests/test_browser_lab_own.py), this runs the server's
sandbox workers as the tests' peers (sandbox/jail.py YIELDING), as tests/helpers/sandboxed.py does in-process: on a
machine busy with other tests, a worker yielding to everything else waits past its deadline."""

from sandbox import jail

jail.YIELDING = False
