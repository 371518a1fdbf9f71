"""A fifth scheduler kind, for tests only: the article's scheduler with its step order turned round (a copy of its
declaration under the id "contrary", declaring no tour), registered in the factory's registry by a test, never by
the app. `register(setitem)` puts it and its name in both languages in place: with pytest's `monkeypatch.setitem`
for a test in this process, or for good in a server the test starts (tests/helpers/fifth_kind_site/)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import ClassVar

from i18n import CATALOGUES
from scheduler.article import Scheduler
from scheduler.contract import SchedulerInfo
from scheduler.factory import SCHEDULERS

KIND = "contrary"
NAMES = {"en": "contrary", "zh": "反着来"}


class Contrary(Scheduler):
    info: ClassVar[SchedulerInfo] = replace(Scheduler.info, kind=KIND, tour=None)

    def __init__(self, config):
        super().__init__(replace(config, prefill_first=not config.value("prefill_first")))


def register(setitem: Callable[[dict, str, object], None]) -> None:
    """The fifth kind in the factory's registry (after the others: the tour runs it last) and its name in the
    catalogues."""
    setitem(SCHEDULERS, KIND, Contrary)
    for lang, name in NAMES.items():
        setitem(CATALOGUES[lang], f"{KIND}.name", name)
