"""Presets computed when the server starts, so a class's steps on them are reads of the run cache.

`SCHEDLAB_PRECOMPUTE` names presets (their file names without .toml, separated by commas, e.g.
"05_prefix_caching,08_chat_poisson"). The process's first page starts one background thread that opens each, as
a student's link opens it, and runs it to its end, one preset after the other: what a lecturer does by hand with
Run N before the class. Bounded like a session's own run (at most MAX_APP_STEPS frames each); the runs are then
in the run cache like any other, evicted the same way when its budget is short. A student who opens a preset
while it is being computed shares the run at once and waits only for the frames it asks for.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping

from engine.inputs.scenario import Scenario
from engine.run.limits import MAX_APP_STEPS
from i18n import Message
from session.lab import LabError
from session.links import open_link, parse_link

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
        self.thread = threading.Thread(target=self._run_all, name="schedlab-precompute", daemon=True)

    def start(self) -> Precompute:
        if self._todo:
            self.thread.start()
        return self

    @property
    def done(self) -> bool:
        return not self.thread.is_alive()

    def _run_all(self):
        for name in self._todo:
            self.status[name] = Message("precompute.computing")
            try:
                lab = open_link(parse_link({"scenario": name}, self._scenarios), self._scenarios, self._runner)
                lab.run(MAX_APP_STEPS)
                self.status[name] = Message("precompute.done" if lab.is_over else "precompute.frames", frames=lab.last)
            except (LabError, ValueError, RuntimeError) as e:  # a refused or failing step: the others still run
                self.status[name] = Message("precompute.stopped", error=e)
