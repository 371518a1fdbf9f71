"""The tour page under Streamlit's AppTest: every stop draws its partings with their source links, and a kind that
cannot run a stop is a plain message, never a traceback."""

from dataclasses import replace
from typing import ClassVar

from engine.analysis.compare import MAX_VARIANTS
from engine.analysis.tour import STOPS
from i18n import CATALOGUES
from scheduler.article.scheduler import Scheduler
from scheduler.contract import SchedulerInfo
from scheduler.factory import SCHEDULERS
from tests.helpers.app import opened_page


def test_every_stop_tells_its_partings_with_links_to_the_source():
    at = opened_page("tour")
    for stop in STOPS:
        at.segmented_control(key="tour_stop").set_value(stop.id).run()
        assert not at.exception and not at.error
        told = [m.value for m in at.markdown if "](https://github.com/" in m.value]
        assert told, f"stop {stop.id}: no parting told with its source lines"
        assert set(at.session_state.tour_runs) >= {(stop.id, tuple(SCHEDULERS))}


class Refusing(Scheduler):
    """A kind for this test only, which refuses every config."""
    info: ClassVar[SchedulerInfo] = replace(Scheduler.info, kind="refusing", tour=None)

    def __init__(self, config):
        raise ValueError("refusing: no config will do")


def test_a_kind_that_cannot_run_a_stop_is_said_not_raised(monkeypatch):
    monkeypatch.setitem(SCHEDULERS, "refusing", Refusing)
    for lang in CATALOGUES:
        monkeypatch.setitem(CATALOGUES[lang], "refusing.name", "refusing")
    at = opened_page("tour")
    assert [e.value for e in at.error] == ["This stop cannot run under every scheduler: refusing: no config will do"]


def test_more_kinds_than_a_comparison_holds_are_said_not_raised(monkeypatch):
    """Past the bound of runs one comparison holds (RUN_BOUNDS["variants"]), the stop says so; the page stays."""
    for n in range(len(SCHEDULERS), MAX_VARIANTS + 1):
        kind = f"copy{n}"
        monkeypatch.setitem(SCHEDULERS, kind, type(kind, (Scheduler,), {"info": replace(Scheduler.info, kind=kind)}))
        for lang in CATALOGUES:
            monkeypatch.setitem(CATALOGUES[lang], f"{kind}.name", kind)
    at = opened_page("tour")
    assert [e.value for e in at.error] == [
        f"This stop cannot run under every scheduler: compare 2 to {MAX_VARIANTS} configs, not {MAX_VARIANTS + 1}"]
