"""Schedulers of one's own in tests: kinds loaded from files leave the factory's registry and the catalogues as they
were (`registry`, a fixture to import), and a starter's source written to a file as the learner gets it (`written`)."""

from pathlib import Path

import pytest

from i18n import CATALOGUES
from scheduler.factory import SCHEDULERS
from starters import Starter, source


@pytest.fixture(autouse=True)
def registry():
    saved = dict(SCHEDULERS), {lang: dict(c) for lang, c in CATALOGUES.items()}
    yield
    SCHEDULERS.clear()
    SCHEDULERS.update(saved[0])
    for lang, catalogue in CATALOGUES.items():
        catalogue.clear()
        catalogue.update(saved[1][lang])


def written(starter: Starter, folder: Path) -> str:
    """The starter's source as the learner gets it, in a file of its own: its `path:class`."""
    path = folder / f"{starter.id}.py"
    path.write_text(source(starter), encoding="utf-8")
    return f"{path}:{starter.class_name}"
