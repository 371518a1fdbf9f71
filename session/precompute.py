"""Presets computed when the server starts, so a class's steps on them are reads of the run cache.

`SCHEDLAB_PRECOMPUTE` names presets (their file names without .toml, separated by commas, e.g.
"05_prefix_caching,08_chat_poisson"). The process's first page starts one background thread that opens each, as
a student's link opens it, and runs it to its end, one preset after the other: what a lecturer does by hand with
Run N before the class. Bounded like a session's own run (at most MAX_APP_STEPS frames each), in the background
(runner/share.py: at a lower share of the model than any student's step). Each run is pinned in the run cache, so
students' runs never evict it; `holds` says what the cache holds of it now. A student who opens a preset while it
is being computed shares the run at once and waits only for the frames it asks for.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

from engine.inputs.scenario import Scenario
from engine.run.limits import MAX_APP_STEPS
from i18n import Message
from runner.share import asking
from session.lab import LabError
from session.links import open_link, parse_link
from session.run_cache import RunCache

PRECOMPUTE_ENV = "SCHEDLAB_PRECOMPUTE"


def precompute_names(value: str | None = None) -> list[str]:
    """The presets $SCHEDLAB_PRECOMPUTE names, in order, without repeats or blanks."""
    value = os.environ.get(PRECOMPUTE_ENV, "") if value is None else value
    return list(dict.fromkeys(name.strip() for name in value.split(",") if name.strip()))


class Precompute:
    """Runs the named presets to their ends in one background thread; `status` says how far each got."""

    def __init__(self, names: list[str], scenarios: Mapping[str, Scenario], runner: str):
        self.status: dict[str, Message] = {}
        self._todo: list[str] = []
        for name in names:
            if name in scenarios:
                self.status[name], self._todo = Message("precompute.waiting"), [*self._todo, name]
            else:
                self.status[name] = Message("precompute.unknown")
        self._scenarios, self._runner = scenarios, runner
        self.addresses: dict[str, str] = {}  # the run of each preset opened so far, pinned in the run cache
        self.thread = threading.Thread(target=self._run_all, name="schedlab-precompute", daemon=True)

    def start(self) -> Precompute:
        if self._todo:
            self.thread.start()
        return self

    @property
    def done(self) -> bool:
        return not self.thread.is_alive()

    def holds(self, name: str, cache: RunCache) -> Message | None:
        """What the run cache holds of preset `name` now (its frames, or that it was evicted); None before its run
        was opened."""
        if (address := self.addresses.get(name)) is None:
            return None
        frames = cache.frames_of(address)
        return Message("precompute.evicted") if frames is None else Message("precompute.cached", frames=frames - 1)

    def _run_all(self):
        with asking(who="precompute", background=True):
            for name in self._todo:
                self._run_one(name)

    def _run_one(self, name: str):
        self.status[name] = Message("precompute.computing")
        try:
            lab = open_link(parse_link({"scenario": name}, self._scenarios), self._scenarios, self._runner)
            self.addresses[name] = lab.pin()
            lab.run(MAX_APP_STEPS)
            self.status[name] = Message("precompute.done" if lab.is_over else "precompute.frames", frames=lab.last)
        except (LabError, ValueError, RuntimeError) as e:  # a refused or failing step: the others still run
            self.status[name] = Message("precompute.stopped", error=e)
