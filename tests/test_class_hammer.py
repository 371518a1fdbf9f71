"""Every change of a class's shared state is atomic (session/class_store.py `atomically`), hammered: two server
processes of a lecture hall (spawned processes, each its own store and registry) make the same change at once, at
least 2 x 200 times, against a Redis of the test's own, straight and through a proxy that holds some replies past
the client's timeout (tests/helpers/delay_proxy.py: the client sends the command again although Redis has done
it). Each test counts exactly: nothing lost, nothing counted twice, no exception."""

import concurrent.futures
import multiprocessing
import time
from types import SimpleNamespace

import pytest
import redis

from session.classroom import Registry
from session.names import name_key
from session.redis_store import PREFIX, RedisStore
from tests.helpers.class_hammer import PASSED, big_class, hammer
from tests.helpers.delay_proxy import DelayProxy

N = 200  # calls per process
TIMEOUT_S, DELAY_S, EVERY = 0.5, 0.8, 120  # through the proxy: the client's timeout, a held reply, how often
START_S = 1.0  # both sides start together this long after being handed their job (each waits: one job a side)


@pytest.fixture(scope="module")
def sides():
    """The two server processes, spawned once for the module (importing takes a while)."""
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool


@pytest.fixture(params=["straight", pytest.param("late replies", marks=pytest.mark.slow)])
def hall(request, redis_server, sides):
    """(the Redis URL the two sides use, their client's timeout, the main side's registry, the sides' pool);
    through the proxy (each test a few seconds: `slow`), the test ends by checking that replies were held (so the
    client did send commands again)."""
    main = Registry(store=RedisStore(redis_server.url))
    if request.param == "straight":
        yield redis_server.url, 2.0, main, sides
    else:
        with DelayProxy(redis_server.port, EVERY, DELAY_S) as proxy:
            yield proxy.url, TIMEOUT_S, main, sides
            assert proxy.delayed > 0
    main.store.close()


def started(hall, code: str, job: str, n: int = N) -> list[concurrent.futures.Future]:
    """Sides a and b starting `job` together."""
    url, timeout_s, _, pool = hall
    start_at = time.time() + START_S
    return [pool.submit(hammer, url, timeout_s, code, job, side, n, start_at) for side in "ab"]


def done(sides: list[concurrent.futures.Future]) -> list[dict]:
    """Each side's outcome, once no side raised an exception."""
    outcomes = [side.result(timeout=120) for side in sides]
    assert [d["errors"] for d in outcomes] == [[], []]
    return outcomes


def both(hall, code: str, job: str, n: int = N) -> tuple[list, list]:
    """Sides a and b doing `job` at once; each one's results."""
    a, b = done(started(hall, code, job, n))
    return a["results"], b["results"]


def test_the_same_browser_claiming_its_name_from_two_processes_keeps_it(hall):
    room = big_class(hall[2])
    a, b = both(hall, room.code, "claim_same")
    assert a == b == [f"Student {i}" for i in range(N)]  # every call, on both sides, got the name
    assert room.names.all() == {name_key(f"Student {i}"): f"Student {i}" for i in range(N)}
    assert all(room.names.name_of(f"browser{i}") == f"Student {i}" for i in range(N))


def test_two_browsers_wanting_one_name_one_gets_it_the_other_is_told(hall):
    room = big_class(hall[2])
    a, b = both(hall, room.code, "claim_rival")
    for i, got in enumerate(zip(a, b, strict=True)):
        assert sorted(got, key=str) == sorted([f"Rival {i}", "class.name_taken"], key=str)
        winner = "a" if got[0] == f"Rival {i}" else "b"
        assert room.names.name_of(f"{winner}-browser{i}") == f"Rival {i}"
        assert room.names.name_of(f"{'b' if winner == 'a' else 'a'}-browser{i}") is None
    assert len(room.names.all()) == N


def test_no_vote_lands_after_the_reveal_returned_and_every_vote_that_counted_is_kept(hall):
    main = hall[2]
    room = big_class(main)
    for side in "ab":
        for i in range(N):
            room.names.claim(f"{side}-browser{i}", f"{side} student {i}")
    room.lectern.publish(SimpleNamespace(address="run"), "inputs", 0, "T", predicting=True)  # the class votes then
    room.polls.ask("T", 1, "?", ("x", "y"), 0)
    sides = started(hall, room.code, "vote")
    while len(room.polls.at("T", 1).votes) < N // 2 and not all(s.done() for s in sides):
        time.sleep(0.005)
    assert room.polls.reveal("T", 1)  # the lecturer reveals, the students still voting
    revealed = time.monotonic()
    outcomes = done(sides)
    counted = {name_key(f"{side} student {i}"): i % 2 for side, d in zip("ab", outcomes, strict=True)
               for i, (_, ok) in enumerate(d["results"]) if ok}
    assert room.polls.at("T", 1).votes == counted  # nothing lost, nothing counted that was refused
    late = [sent for d in outcomes for sent, ok in d["results"] if ok and sent > revealed]
    assert late == [] and 0 < len(counted) < 2 * N  # refused after the reveal, counted before it


def test_two_lecturer_devices_revealing_and_closing_at_once_lose_no_flag(hall):
    room = hall[2].start()
    for i in range(N):
        room.polls.ask("T", 100 + i, "?", ("x", "y"), 0)
    a, _ = both(hall, room.code, "flags")
    assert a.count(True) == N or hall[1] == TIMEOUT_S  # a reveal sent again says it was revealed before
    polls = room.polls.all()
    assert len(polls) == N and all(p.revealed and p.closed for p in polls)


def test_hand_ins_from_two_processes_are_all_kept_once(hall):
    room = big_class(hall[2])
    for side in "ab":
        for i in range(N):
            room.names.claim(f"{side}-browser{i}", f"{side} {i}")
    a, b = both(hall, room.code, "hand_in")
    assert sorted(a + b) == sorted(name_key(f"{side} {i}") for side in "ab" for i in range(N))
    assert sorted(s.key for s in room.submissions.of("assignment")) == sorted(a + b)


def test_a_submission_deleted_from_two_processes_at_once_is_gone(hall):
    room = hall[2].start()
    for i in range(N):
        room.submissions.submit(f"Student {i}", f"student{i}", "assignment", PASSED)
    a, b = both(hall, room.code, "delete")
    assert room.submissions.of() == []
    said = [x or y for x, y in zip(a, b, strict=True)]
    assert all(said) or hall[1] == TIMEOUT_S  # one of the two deleted it (sent again, both may see it gone)
    assert not any(x and y for x, y in zip(a, b, strict=True))  # never both


def test_roster_codes_given_from_two_processes_one_per_name(hall):
    room = hall[2].start()
    both(hall, room.code, "roster")
    codes = room.names.roster_codes()
    assert sorted(codes) == sorted(f"Pupil {j}" for j in range(N + 9))  # each name once, with one code
    assert len(set(codes.values())) == len(codes)
    filed = redis.Redis.from_url(room.store.url)
    assert filed.hlen(PREFIX + room.keys.codes) == len(codes)  # no code filed twice for a name
    filed.close()


def test_a_class_ended_while_both_processes_name_students_keeps_nothing_filed_after(hall):
    main = hall[2]
    room = big_class(main)
    sides = started(hall, room.code, "claim_many")
    while len(main.store.hgetall(room.keys.names)) < N // 2 and not all(s.done() for s in sides):
        time.sleep(0.005)
    main.close(room.code)
    a, b = done(sides)
    results = a["results"] + b["results"]
    assert "class.unknown" in results and any(r != "class.unknown" for r in results)
    filed = redis.Redis.from_url(room.store.url)
    assert list(filed.scan_iter(match=f"{PREFIX}{room.keys.prefix}*")) == []  # nothing filed under it after
    filed.close()
