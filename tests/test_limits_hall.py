"""The limits on guessing in a lecture hall (issue 47, point 1 across processes): the counts of wrong codes, keys
and new names live in the classes' store, so N server processes on one Redis give a guesser one allowance, not N
(two registries on a Redis of the test's own stand for two processes); each count expires once it no longer
matters; the same back-off, waits and counts on the memory store of a single server."""

import contextlib
import threading
import time

import pytest

from session import class_door, limits
from session.class_error import ClassError
from session.class_keys import guesses_key
from session.classroom import Registry
from session.redis_store import RedisStore
from tests.helpers.guesses import waits_as_used_up


@pytest.fixture
def hall(redis_server):
    """Two server processes of a lecture hall: two registries, each with its own client, on one Redis."""
    made = [Registry(store=RedisStore(redis_server.url)) for _ in range(2)]
    yield made
    for registry in made:
        registry.store.close()


def test_wrong_codes_on_two_processes_of_a_hall_share_one_allowance(hall):
    """Before, each process kept its own counts: PER_IDENTITY wrong codes on each, 2 x PER_IDENTITY in all."""
    checked = 0
    for n in range(2 * limits.PER_IDENTITY):  # a new session per guess, every other one on the other process
        try:
            class_door.find_class(hall[n % 2], f"ZZ{n:03}", limits.Guesser(f"s{n}", "203.0.113.7"), "T")
        except ClassError:
            checked += 1
        except limits.TooManyGuesses as refused:
            assert refused.message.values["seconds"] == 60
    assert checked == limits.PER_IDENTITY
    room = hall[0].start("L")
    with pytest.raises(limits.TooManyGuesses):  # the right code from that network, on either process: unchecked
        class_door.find_class(hall[1], room.code, limits.Guesser("fresh", "203.0.113.7"), "T2")
    assert class_door.find_class(hall[1], room.code, limits.Guesser("other", "198.51.100.1"), "T3").code == room.code


def test_new_names_from_one_identity_on_two_processes_share_one_allowance(hall):
    room = hall[0].start("L")
    room.names.set_most(500)
    rooms = [room, hall[1].find(room.code)]
    for n in range(limits.NEW_NAMES):
        class_door.claim_name(rooms[n % 2], f"T{n}", f"Made Up {n}", limits.Guesser(f"s{n}", "203.0.113.7"))
    for here in rooms:
        with pytest.raises(limits.TooManyGuesses) as refused:
            class_door.claim_name(here, "T-last", "Made Up Last", limits.Guesser("s-last", "203.0.113.7"))
        assert refused.value.message_id == "limit.names"
    assert len(room.names.all()) == limits.NEW_NAMES


def test_wrong_server_keys_on_two_processes_share_one_allowance_and_a_strong_key_is_never_refused(hall):
    short, strong = "bench-key-12", "k" * class_door.STRONG_KEY_CHARS
    for n in range(limits.PER_IDENTITY):
        with pytest.raises(ClassError):
            class_door.check_server_key(hall[n % 2], "wrong", short, limits.Guesser(f"s{n}", "10.0.0.1"))
    for registry in hall:
        with pytest.raises(limits.TooManyGuesses) as refused:
            class_door.check_server_key(registry, short, short, limits.Guesser("new", "10.0.0.1"))
        assert refused.value.message_id == "limit.keys"
        class_door.check_server_key(registry, strong, strong, limits.Guesser("new", "10.0.0.1"))


def test_guessers_at_once_on_two_processes_get_no_more_checked_than_the_allowance(hall):
    """Counted as it is let through, in the change that sees the wait: were the wait read first and the guess
    counted after its check, guessers at once on two processes got a few more than the allowance checked."""
    counts = [limits.Guesses("codes", registry.store) for registry in hall]
    let_through = []

    def guesser(n: int):
        for _ in range(limits.PER_SESSION):
            with contextlib.suppress(limits.TooManyGuesses):
                let_through.append(counts[n % 2].take(limits.Guesser(f"s{n}", "203.0.113.7")))
    threads = [threading.Thread(target=guesser, args=(n,)) for n in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(let_through) == limits.PER_IDENTITY  # of 80 tried


def test_a_right_guess_is_taken_back_even_the_one_that_used_up_the_allowance(new_registry):
    guesses = limits.Guesses("keys", new_registry().store, per_session=3, per_identity=3)
    who = limits.Guesser("s", "10.0.0.1")
    guesses.take(who)
    guesses.forgive(guesses.take(who))  # a right one: as if never counted
    guesses.take(who)
    assert guesses.wait_s(who) == 0
    guesses.forgive(guesses.take(who))  # the third counted, which started the wait: right after all
    assert guesses.wait_s(who) == 0
    guesses.take(who)
    assert guesses.wait_s(who) > 0  # the third wrong one


def test_the_back_off_doubles_and_is_told_alike_on_either_store(new_registry, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("session.limits.clock", lambda: clock[0])
    guesses = limits.Guesses("codes", new_registry().store, per_session=2, per_identity=3, window_s=60)
    who = limits.Guesser("s", "10.0.0.1")
    assert waits_as_used_up(guesses, who, clock, allowance=2, rounds=3) == [60, 120, 240]
    for n in range(3):  # three sessions of that identity within a window: its allowance used up
        guesses.take(limits.Guesser(f"other{n}", "10.0.0.1"))
    with pytest.raises(limits.TooManyGuesses) as refused:
        guesses.check(limits.Guesser("fresh", "10.0.0.1"))
    assert refused.value.message.values["seconds"] == 60
    guesses.check(limits.Guesser("fresh", "10.0.0.2"))  # another identity: its own allowance


def test_each_count_expires_once_it_no_longer_matters(new_registry, monkeypatch):
    monkeypatch.setattr(limits, "QUIET_S", 0.3)
    store = new_registry().store
    guesses = limits.Guesses("codes", store, per_session=2, window_s=0.2)
    who = limits.Guesser("s", "10.0.0.1")
    guesses.take(who), guesses.take(who)
    keys = [guesses_key("codes", "session", "s"), guesses_key("codes", "identity", "10.0.0.1")]
    assert all(store.get(key) is not None for key in keys) and guesses.wait_s(who) > 0
    if isinstance(store, RedisStore):
        assert all(0 < store._redis.pttl("schedlab:" + key) <= 300 for key in keys)
    time.sleep(0.5)
    assert all(store.get(key) is None for key in keys) and guesses.wait_s(who) == 0
