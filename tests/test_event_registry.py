"""One registry of events: the scheduler's and the engine's kinds are all in scheduler.events.EVENT_TYPES, and
each reads back from its dict as the same event (a variant of a kind, by its extra field)."""

from engine.run.frame import AdmittedAfterRebuild, Arrived, FinishedLate, PoolRebuilt
from scheduler.events import EVENT_TYPES, Admitted, Preempted, event_from_dict


def test_every_kind_is_in_the_one_registry_and_reads_back():
    assert {"arrived", "finished_late", "pool_rebuilt", "admitted", "preempted", "speculated"} <= set(EVENT_TYPES)
    for event in (Arrived(0, 5, 1), FinishedLate(2, (3, 4)), PoolRebuilt(-1, 8, 4, (0, 1), 1),
                  Admitted(1, 3, 0, False), AdmittedAfterRebuild(1, 3, 0, True), Preempted(2, 1, "tail", (5,))):
        again = event_from_dict(event.to_dict())
        assert again == event and type(again) is type(event)
