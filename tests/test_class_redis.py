"""A lecture hall's class in Redis (session/redis_store.py), with a Redis of the test's own (`redis_server`): two
server processes (two stores and registries on one Redis) hold one class; a lead published on one reaches a
follower on the other, whose process builds the lecturer's run from the recipe in the lead; a Redis restarted
(append-only file on) keeps the class and its wake-ups resume; a Redis that does not answer is said plainly, in
both languages, and the class picks up when it is back; a process that dies takes only its tabs' seats (its
students' names, votes and submissions stay, and their pages reconnected to another process go on).
(tests/test_session_classroom.py runs the class's logic against both stores; tests/test_app_class_redis.py the
page's side of an unreachable Redis.)"""

import threading
import time

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import in_lang
from session.class_keys import heartbeat
from session.class_store import StoreUnavailable
from session.classroom import Registry
from session.lab import Lab, RunInputs
from session.lead_recipe import LeadRecipes
from session.redis_store import RedisStore
from session.run_cache import RunCache
from tests.helpers.class_stores import settle
from tests.helpers.waiting import wait_until
from tools.golden_runs import digest

HEARD_AGAIN_S = 20.0  # the most a test waits for a store to hear wake-ups again after Redis came back


def same_frame(one, other) -> bool:
    """The same frame, wall-clock times left out (tools/golden_runs.py)."""
    return digest(one.to_dict()) == digest(other.to_dict())


class Tab:
    """A tab's wake-up: counts the times it was woken."""

    def __init__(self):
        self.woken = 0

    def __call__(self) -> bool:
        self.woken += 1
        return True


@pytest.fixture
def hall(redis_server):
    """Two server processes of one lecture hall, each with its own run cache: (registry A, registry B)."""
    made = [Registry(store=RedisStore(redis_server.url), recipes=LeadRecipes(RunCache(2**30))) for _ in range(2)]
    yield made
    for registry in made:
        registry.store.close()


def lecturer_lab(registry: Registry) -> Lab:
    inputs = RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "02_preemption.toml"), "fake")
    return Lab(inputs, cache=registry.recipes.cache)


def test_two_processes_hold_one_class_its_names_votes_and_submissions(hall):
    a, b = hall
    room_a = a.start("browser-L")
    room_b = b.get(room_a.code)  # a student's page on the other process finds the class
    assert room_b is not room_a and room_b.secret == room_a.secret and room_b.is_lecturer("browser-L")
    assert room_b.names.claim("browser-S", "Ada Lovelace") == "Ada Lovelace"
    assert room_a.names.name_of("browser-S") == "Ada Lovelace" and room_a.names.all() == room_b.names.all()
    with pytest.raises(Exception) as refused:
        room_a.names.claim("browser-T", "ada lovelace")  # the look-alike, on the other process: refused as well
    assert refused.value.message_id == "class.name_taken"
    room_b.seats.sit("s1", "browser-S", Tab())
    room_a.seats.sit("s2", "browser-T", Tab())
    assert room_a.seats.counts() == room_b.seats.counts() == (2, 2)  # every process's tabs counted
    lecturer = lecturer_lab(a)
    room_a.lectern.publish(lecturer.shared_run, lecturer.inputs, 0, "02_preemption", predicting=True)
    room_a.polls.ask("T", 3, "?", ("x", "y"), 1)
    assert room_b.vote("s1", "T", 3, 1)  # a vote on B, counted where the lecturer is
    assert room_a.polls.at("T", 3).votes == {room_b.names.all().popitem()[0]: 1}


def test_a_lead_published_on_one_process_reaches_a_follower_on_the_other_with_the_run_built_there(hall):
    a, b = hall
    room_a = a.start("browser-L")
    room_b = b.get(room_a.code)
    follower = Tab()
    room_b.seats.sit("s1", "browser-S", follower)
    lecturer = lecturer_lab(a)
    lecturer.run(7)
    room_a.lectern.publish(lecturer.shared_run, lecturer.inputs, lecturer.cursor, "02_preemption", False)
    settle(a.store, b.store)
    assert follower.woken == 1
    lead = room_b.lead
    assert lead.frame == 7 and lead.run is not None and lead.run is not lecturer.shared_run  # built on B
    assert lead.run.address == lecturer.shared_run.address and lead.inputs.title == lecturer.inputs.title
    assert len(lead.run.engine.frames) > 7  # computed there as far as the lecturer's frame
    assert same_frame(lead.run.engine.frames[7], lecturer.frame)  # the same frame, computed from the recipe


def test_a_lecturers_branch_travels_in_the_recipe(hall):
    a, b = hall
    room_a = a.start("browser-L")
    room_b = b.get(room_a.code)
    lecturer = lecturer_lab(a)
    lecturer.run(4)
    lecturer.set_config(max_num_seqs=1)  # a change mid-run: only the lecturer's run has it
    lecturer.run(3)
    room_a.lectern.publish(lecturer.shared_run, lecturer.inputs, lecturer.cursor, "02_preemption", False)
    lead = room_b.lead
    assert lead.run.spec == lecturer.shared_run.spec and same_frame(lead.run.engine.frames[7], lecturer.frame)


def test_redis_restarted_keeps_the_class_and_the_wake_ups_resume(hall, redis_server):
    a, b = hall
    room_a = a.start("browser-L")
    room_b = b.get(room_a.code)
    room_b.names.claim("browser-S", "Ada")
    room_b.seats.sit("s1", "browser-S", follower := Tab())
    lecturer = lecturer_lab(a)
    lecturer.run(3)
    room_a.lectern.publish(lecturer.shared_run, lecturer.inputs, 3, "02_preemption", predicting=True)
    room_a.polls.ask("T", 5, "?", ("x", "y"), 0)
    assert room_b.vote("s1", "T", 5, 0)
    redis_server.restart()  # its append-only file read back
    assert a.find(room_a.code) is room_a and room_b.names.name_of("browser-S") == "Ada"
    assert room_a.polls.at("T", 5).votes == {"ada": 0} and room_b.lead.frame == 3
    woken = follower.woken
    deadline = time.monotonic() + HEARD_AGAIN_S
    while follower.woken == woken and time.monotonic() < deadline:  # until B's listener has subscribed again
        lecturer.step()  # each step a new lead, published
        room_a.lectern.publish(lecturer.shared_run, lecturer.inputs, lecturer.cursor, "02_preemption", False)
        time.sleep(0.2)
    assert follower.woken > woken and room_b.lead.frame == lecturer.cursor > 3


def test_an_unreachable_redis_is_said_plainly_and_the_class_picks_up_when_it_is_back(hall, redis_server):
    a, b = hall
    room_a = a.start("browser-L")
    lecturer = lecturer_lab(a)
    redis_server.stop()
    with pytest.raises(StoreUnavailable) as down:
        room_a.lectern.publish(lecturer.shared_run, lecturer.inputs, 0, "02_preemption", False)
    assert down.value.message_id == "class.store_down"
    assert "Redis" in in_lang("en", down.value.message) and "Redis" in in_lang("zh", down.value.message)
    assert in_lang("zh", down.value.message) != in_lang("en", down.value.message)
    lecturer.run(2)  # the lecturer's own stage goes on without the class
    assert lecturer.cursor == 2
    redis_server.start()
    deadline = time.monotonic() + HEARD_AGAIN_S
    while time.monotonic() < deadline:  # the store fails fast for a moment after a failure, then tries again
        try:
            room_a.lectern.publish(lecturer.shared_run, lecturer.inputs, lecturer.cursor, "02_preemption", False)
            break
        except StoreUnavailable:
            time.sleep(0.2)
    assert b.get(room_a.code).lead.frame == 2


def test_a_process_that_dies_takes_only_its_tabs_its_students_votes_and_submissions_stay(hall, redis_server):
    a, b = hall
    room_a = a.start("browser-L")
    room_b = b.get(room_a.code)
    room_b.names.claim("browser-S", "Ada")
    room_b.seats.sit("s1", "browser-S", Tab())
    room_a.seats.sit("s2", "browser-T", Tab())
    lecturer = lecturer_lab(a)
    room_a.lectern.publish(lecturer.shared_run, lecturer.inputs, 0, "02_preemption", predicting=True)
    room_a.polls.ask("T", 5, "?", ("x", "y"), 0)
    assert room_b.vote("s1", "T", 5, 1)
    assert room_a.seats.counts() == (2, 2)
    assert room_a.seats.tabs_by_process() == {a.store.process: 1, b.store.process: 1}
    b.store.close()  # process B killed: its heartbeat stops, nothing of it is cleaned up
    # only the tabs of the process still up are counted, once B's heartbeat expires
    wait_until(lambda: room_a.seats.counts() == (1, 1), "B's heartbeat to expire", HEARD_AGAIN_S, poll_s=0.5)
    assert room_a.polls.at("T", 5).votes == {"ada": 1} and room_a.names.name_of("browser-S") == "Ada"
    reconnected = Registry(store=RedisStore(redis_server.url)).get(room_a.code)  # Ada's page, reconnected
    try:
        reconnected.seats.sit("s1-again", "browser-S", Tab())
        assert reconnected.vote("s1-again", "T", 5, 0)  # the same student, from the tab on another process
        assert room_a.polls.at("T", 5).votes == {"ada": 0}  # still one vote: their last
        assert reconnected.names.name_of("browser-S") == "Ada" and room_a.seats.counts() == (2, 2)
    finally:
        reconnected.store.close()


def test_once_redis_is_back_every_tab_looks_again_without_a_new_wake_up(hall, redis_server):
    """What was published while a process could not hear it is lost: once subscribed again, each process wakes its
    followers (to read the lead) and its lecturer's tab (to publish where the lecturer stands)."""
    a, b = hall
    room_a = a.start("browser-L")
    room_a.lectern.lecture("l1", lecturer := Tab())
    room_b = b.get(room_a.code)
    room_b.seats.sit("s1", "browser-S", follower := Tab())
    settle(a.store, b.store)
    woken = (lecturer.woken, follower.woken)
    redis_server.restart()  # nothing published after it
    wait_until(lambda: lecturer.woken > woken[0] and follower.woken > woken[1], "both tabs woken after the restart",
               HEARD_AGAIN_S, poll_s=0.2)


def test_a_process_reads_the_lead_once_per_change_it_hears_not_once_per_tab(hall, monkeypatch):
    a, b = hall
    room_a = a.start("browser-L")
    room_b = b.get(room_a.code)
    lecturer = lecturer_lab(a)
    room_a.lectern.publish(lecturer.shared_run, lecturer.inputs, 1, "02_preemption", False)
    settle(a.store, b.store)
    reads = []
    read = b.store.get
    monkeypatch.setattr(b.store, "get", lambda key: reads.append(key) or read(key))
    assert [room_b.lead.frame for _ in range(20)] == [1] * 20  # twenty tabs' page runs
    assert reads.count(f"class:{room_a.code}:lead") == 1
    lecturer.step()
    room_a.lectern.publish(lecturer.shared_run, lecturer.inputs, 2, "02_preemption", False)
    settle(a.store, b.store)
    assert [room_b.lead.frame for _ in range(20)] == [2] * 20
    assert reads.count(f"class:{room_a.code}:lead") == 2


class LateStore(RedisStore):
    """A process's store whose thread hears each wake-up only once `late` is set (a loaded machine)."""

    def __init__(self, url: str):
        self.late = threading.Event()
        super().__init__(url)

    def listen(self, listener):
        super().listen(lambda code, what: self.late.wait(HEARD_AGAIN_S) and listener(code, what))


def test_a_class_closed_wakes_the_tabs_of_its_process_however_late_that_process_hears_it(redis_server):
    """The registry forgets a class as it closes it: this process's tabs are woken all the same, once, when its own
    wake-up is heard after that."""
    store = LateStore(redis_server.url)
    try:
        registry = Registry(store=store)
        room = registry.start()
        room.seats.sit("s1", "browser-S", tab := Tab())
        registry.close(room.code)
        store.late.set()
        settle(store)
        assert tab.woken == 1 and room.ended and registry.find(room.code) is None
    finally:
        store.close()


def test_the_seats_of_a_silent_process_leave_by_themselves_and_the_lecturer_is_woken_to_count_again(hall):
    """Nobody counts: the other process's beat notices the silence, drops the seats and wakes the lecturer's tab
    (whose desk then reads the counts without the dead)."""
    a, b = hall
    room_a = a.start("browser-L")
    room_a.lectern.lecture("l1", lecturer := Tab())
    room_b = b.get(room_a.code)
    room_b.seats.sit("s1", "browser-S", Tab())
    room_b.seats.sit("s2", "browser-T", Tab())
    settle(a.store, b.store)
    woken = lecturer.woken
    b.store.close()  # process B stops answering: its heartbeat expires
    stopped = time.monotonic()
    wait_until(lambda: lecturer.woken > woken, "the lecturer woken", HEARD_AGAIN_S, poll_s=0.1)
    assert time.monotonic() - stopped < a.store.silent_after_s + 2.5  # the heartbeat's life, then a beat or two
    assert a.store.hgetall(room_a.keys.processes) == {}  # dropped by the beat, before anyone counted
    assert room_a.seats.counts() == (0, 0)


def test_just_after_redis_came_back_a_process_not_beaten_yet_keeps_its_seats(hall, redis_server):
    """A restarted Redis has lost the heartbeats that expired while it was down; each process beats again within a
    second of hearing it, so for a heartbeat's life no process takes another's silence for its end."""
    a, b = hall
    room_a = a.start("browser-L")
    b.get(room_a.code).seats.sit("s1", "browser-S", Tab())
    redis_server.restart()
    wait_until(lambda: not a.store._lost and a.store.check() is None, "A to hear Redis again", HEARD_AGAIN_S,
               poll_s=0.1)
    assert not a.store.settled()
    a.store.delete(heartbeat(b.store.process))  # B has not beaten yet
    room_a.seats.counts()  # (B's seat counted or not, as B has beaten again or not yet)
    assert b.store.process in a.store.hgetall(room_a.keys.processes)  # not dropped
    assert "s1" in a.store.hgetall(room_a.keys.seats(b.store.process))
    wait_until(a.store.settled, "A's store to settle", HEARD_AGAIN_S, poll_s=0.2)
    assert room_a.seats.counts() == (1, 1)  # B beat again meanwhile: its seat counted
