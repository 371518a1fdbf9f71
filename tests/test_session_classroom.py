"""A class without Streamlit (session/classroom.py): codes, the lecturer's secret, following the lecturer's run,
breaking away, and the class's predictions."""

import csv
import io

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from session.classroom import CODE_ALPHABET, CODE_LENGTH, ClassError, Registry
from session.lab import Lab, RunInputs
from session.run_cache import RunCache


class Seat:
    """A session's wake-up: counts the times it was woken; `gone` says its tab has closed."""

    def __init__(self):
        self.woken, self.gone = 0, False

    def __call__(self) -> bool:
        self.woken += 1
        return not self.gone


def test_a_class_has_a_short_code_and_its_own_secret_unless_the_server_has_a_lecturer_key():
    registry = Registry()
    room, other = registry.start(), registry.start()
    assert len(room.code) == CODE_LENGTH and set(room.code) <= set(CODE_ALPHABET) and room.code != other.code
    assert room.secret != other.secret and room.is_lecturer_secret(room.secret)
    assert not room.is_lecturer_secret("guess") and not room.is_lecturer_secret(None)
    assert registry.start("s3cret").is_lecturer_secret("s3cret")
    assert registry.get(room.code.lower()) is room  # typed from a projector, in any case
    with pytest.raises(ClassError) as refused:
        registry.get("NOPE9")
    assert refused.value.message_id == "class.unknown"


def test_the_oldest_class_closes_beyond_the_bound():
    registry = Registry(max_classes=2)
    first = registry.start()
    registry.start(), registry.start()
    with pytest.raises(ClassError):
        registry.get(first.code)


def test_followers_are_woken_by_a_new_lead_and_not_by_the_same_one_nor_when_broken_away():
    room = Registry().start()
    following, away, gone = Seat(), Seat(), Seat()
    room.sit("a", following), room.sit("b", away, following=False), room.sit("c", gone)
    gone.gone = True
    assert room.publish("run", "inputs", 3, "05_prefix_caching", False)
    assert (following.woken, away.woken, gone.woken) == (1, 0, 1)
    assert room.seats() == (2, 1)  # the closed tab left its seat
    assert not room.publish("run", "inputs", 3, "05_prefix_caching", False)  # nothing new: nobody woken
    assert room.publish("run", "inputs", 4, "05_prefix_caching", False)
    assert following.woken == 2 and room.lead.version == 2 and room.lead.frame == 4
    room.sit("b", away, following=True)
    room.publish("run", "inputs", 5, "05_prefix_caching", False)
    assert away.woken == 1


def test_a_follower_shows_the_lecturers_run_itself_at_the_lecturers_frame():
    cache = RunCache(2**30)
    lecturer = Lab(RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "02_preemption.toml"), "fake"),
                   cache=cache)
    lecturer.run(6)
    lecturer.set_config(max_num_seqs=1)  # a branch at frame 6: only the lecturer's run has it
    lecturer.run(3)
    student = Lab(RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "05_prefix_caching.toml"), "fake"),
                  cache=cache)
    student.follow(lecturer.shared_run, lecturer.inputs, lecturer.cursor)
    assert student.shared_run is lecturer.shared_run and student.cursor == lecturer.cursor == 9
    assert student.frame == lecturer.frame and student.title == lecturer.title
    assert student.config_in_effect().max_num_seqs == 1
    lecturer.back()
    student.follow(lecturer.shared_run, lecturer.inputs, lecturer.cursor)
    assert student.cursor == 8 and student.last == 9  # what it has seen stays held


def test_a_poll_counts_each_students_last_answer_until_revealed_and_exports_as_csv():
    room = Registry().start()
    lecturer, students = Seat(), [Seat() for _ in range(3)]
    room.lecture("L", lecturer)
    for i, seat in enumerate(students):
        room.sit(f"s{i}", seat)
    assert lecturer.woken == 3  # a seat taken: the lecturer's banner counts it
    poll = room.poll("Preemption", 7, "Which request is preempted?", ("request 1", "request 2"), 1)
    assert room.poll("Preemption", 7, "(in another language)", ("1", "2"), 1) is poll  # one poll per question
    assert room.vote("s0", "Preemption", 7, 0) and room.vote("s1", "Preemption", 7, 1)
    assert room.vote("s0", "Preemption", 7, 1)  # changed their mind
    assert not room.vote("s2", "Preemption", 7, 5)  # no such choice
    assert not room.vote("s2", "Other", 7, 0)  # no such question
    assert poll.counts() == [0, 2] and len(poll.votes) == 2 and lecturer.woken == 6
    assert room.reveal("Preemption", 7) and not room.reveal("Preemption", 7)
    assert not room.vote("s2", "Preemption", 7, 0)  # too late
    rows = list(csv.DictReader(io.StringIO(room.tallies_csv())))
    assert [(r["choice"], r["count"], r["answered"], r["right"]) for r in rows] == [
        ("request 1", "0", "2", "0"), ("request 2", "2", "2", "1")]
    assert rows[0]["class"] == room.code and rows[0]["revealed"] == "1"


def test_play_and_pause_are_new_leads_and_a_follower_woken_late_starts_where_the_lecturer_is(monkeypatch):
    room = Registry().start()
    following = Seat()
    room.sit("a", following)
    clock = [100.0]
    monkeypatch.setattr("session.classroom.time.monotonic", lambda: clock[0])
    room.publish("run", "inputs", 3, "05_prefix_caching", False)
    assert room.publish("run", "inputs", 3, "05_prefix_caching", False, playing=2.0)  # Play from frame 3
    assert following.woken == 2 and room.lead.playing == 2.0
    clock[0] += 1.6  # the lecturer's player has shown 3 more frames meanwhile (it plays on by itself)
    assert room.lead.frame_now(last=100) == 6 and room.lead.frame_now(last=5) == 5  # no further than computed
    assert room.publish("run", "inputs", 3, "05_prefix_caching", False, playing=0.0)  # Pause where Play started
    assert following.woken == 3 and room.lead.frame_now(last=100) == 3  # standing still


def test_a_follower_playing_along_holds_the_frames_the_run_has_ahead():
    cache = RunCache(2**30)
    lecturer = Lab(RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "02_preemption.toml"), "fake"),
                   cache=cache)
    lecturer.run(20)
    lecturer.goto(4)
    student = Lab(RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / "05_prefix_caching.toml"), "fake"),
                  cache=cache)
    student.follow(lecturer.shared_run, lecturer.inputs, 4, ahead=10)
    assert student.cursor == 4 and student.last == 14
    student.follow(lecturer.shared_run, lecturer.inputs, 18, ahead=10)
    assert student.cursor == 18 and student.last == 20  # as far as the run is computed
