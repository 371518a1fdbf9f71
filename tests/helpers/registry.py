"""The factory's registry of kinds and the catalogues, restored after a test that registers kinds of its own (a
learner's file loaded on the command line, a kind the sandbox declares on the server)."""

from __future__ import annotations

from contextlib import contextmanager

from i18n import CATALOGUES
from scheduler.factory import SCHEDULERS


@contextmanager
def kinds_restored():
    saved = dict(SCHEDULERS), {lang: dict(c) for lang, c in CATALOGUES.items()}
    try:
        yield
    finally:
        SCHEDULERS.clear()
        SCHEDULERS.update(saved[0])
        for lang, catalogue in CATALOGUES.items():
            catalogue.clear()
            catalogue.update(saved[1][lang])
