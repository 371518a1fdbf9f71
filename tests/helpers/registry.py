"""The factory's registry and the catalogues kept as they were around a test that registers kinds of its own (a
learner's file loaded, engine/learner.py; a kind's declaration registered as the sandbox does on the server)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from i18n import CATALOGUES
from scheduler.factory import SCHEDULERS


@contextmanager
def registry_kept() -> Iterator[None]:
    """The kinds and words registered inside the block are gone after it."""
    saved = dict(SCHEDULERS), {lang: dict(c) for lang, c in CATALOGUES.items()}
    try:
        yield
    finally:
        SCHEDULERS.clear()
        SCHEDULERS.update(saved[0])
        for lang, catalogue in CATALOGUES.items():
            catalogue.clear()
            catalogue.update(saved[1][lang])
