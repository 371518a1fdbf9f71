"""Waiting for a condition instead of sleeping a fixed time: a test goes on as soon as what it waits for holds, and
fails saying what it waited for when it never does."""

import time
from collections.abc import Callable


def wait_until(condition: Callable[[], object], what: str, timeout_s: float = 30.0, poll_s: float = 0.005):
    """Poll `condition` until it is true (returning its value), or fail after `timeout_s` naming `what`."""
    deadline = time.monotonic() + timeout_s
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout_s:g} s for {what}")
        time.sleep(poll_s)
    return value
