"""A class without Streamlit (session/classroom.py), in each store (session/class_store.py: memory and Redis):
codes, the lecturer's browser and secret, names bound to browsers, seats freed when tabs close, following the
lecturer's run, breaking away, the class's predictions (one vote per student, the follower's bound), the lecturer's
controls, and the limits on guessing (session/limits.py)."""

import csv
import io

import pytest

from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from session import limits
from session.class_store import MemoryStore
from session.classroom import CODE_ALPHABET, CODE_LENGTH, ClassError
from session.lab import Lab, RunInputs
from session.names import name_key
from session.run_cache import RunCache
from tests.helpers.class_hammer import PASSED
from tests.helpers.class_stores import settle


class Run:
    """A run as the class sees it: its address (the lead names the run by it)."""

    def __init__(self, address: str):
        self.address = address


RUN = Run("run")


class Seat:
    """A session's wake-up: counts the times it was woken; `gone` says its tab has closed."""

    def __init__(self):
        self.woken, self.gone = 0, False

    def __call__(self) -> bool:
        self.woken += 1
        return not self.gone


def test_a_class_has_a_short_code_a_lecturers_browser_and_a_secret_of_its_own(new_registry):
    registry = new_registry()
    room, other = registry.start("browser-L"), registry.start("browser-L")
    assert len(room.code) == CODE_LENGTH and set(room.code) <= set(CODE_ALPHABET) and room.code != other.code
    assert room.secret != other.secret and len(room.secret) >= 16
    assert room.is_lecturer("browser-L") and not room.is_lecturer("browser-S") and not room.is_lecturer(None)
    assert not room.lectern.take_lectern("browser-T", "guess") and not room.is_lecturer("browser-T")
    assert room.lectern.take_lectern("browser-T", room.secret) and room.is_lecturer("browser-T")  # another device
    assert registry.get(room.code.lower()) is room  # typed from a projector, in any case
    with pytest.raises(ClassError) as refused:
        registry.get("NOPE9")
    assert refused.value.message_id == "class.unknown"


def test_beyond_the_bound_the_oldest_class_without_its_lecturer_closes_and_a_full_server_refuses(new_registry):
    registry = new_registry(max_classes=2)
    first, second = registry.start(), registry.start()
    here, gone = Seat(), Seat()
    first.lectern.lecture("L1", here, lambda: True)
    second.lectern.lecture("L2", gone, lambda: False)  # its lecturer's tab has closed
    registry.start().lectern.lecture("L3", Seat(), lambda: True)
    assert registry.find(second.code) is None and second.ended and registry.get(first.code) is first
    with pytest.raises(ClassError) as refused:
        registry.start()  # both classes left have their lecturer here
    assert refused.value.message_id == "class.server_full"


def test_a_name_is_bound_to_one_browser_and_names_that_look_the_same_are_refused(new_registry):
    room = new_registry().start()
    assert room.names.claim("A", "  Alice   Smith ") == "Alice Smith"
    assert room.names.claim("A", "alice smith") == "Alice Smith"  # the same browser, the same name: no change
    for look_alike in ("alice smith", "Alice\u200bSmith", "ALICE-SMITH", "\u0410lice Smith", "Ａｌｉｃｅ Smith",
                       "A1ice Smith", "Alice\u00adSmith"):
        with pytest.raises(ClassError) as refused:
            room.names.claim("B", look_alike)
        assert refused.value.message_id == "class.name_taken" and refused.value.message.values["name"] == \
            "Alice Smith"
    with pytest.raises(ClassError) as refused:
        room.names.claim("A", "Bob")  # one name per browser
    assert refused.value.message_id == "class.named_already"
    with pytest.raises(ClassError):
        room.names.claim("B", "**  **")
    assert room.names.name_of("A") == "Alice Smith" and room.names.name_of("B") is None


def test_a_roster_gives_each_name_a_personal_code_and_no_other_name_joins(new_registry):
    room = new_registry().start()
    codes = room.names.set_roster(["王小明", "Ada", "ada", ""])  # "ada" reads as "Ada": one name
    assert sorted(codes) == ["Ada", "王小明"] and all(len(code) == 8 for code in codes.values())
    assert room.names.set_roster(["Ada"]) == codes  # given again: the same codes
    assert room.names.claim_code("A", codes["王小明"].lower()) == "王小明" and room.names.name_of("A") == "王小明"
    with pytest.raises(ClassError):
        room.names.claim_code("B", codes["王小明"])  # the first browser to open it keeps it
    assert room.names.claim_code("B", "NOTACODE") is None
    with pytest.raises(ClassError) as refused:
        room.names.claim("B", "Eve")
    assert refused.value.message_id == "class.roster_only"


def test_a_name_taken_before_the_roster_goes_to_its_personal_link_and_the_squatter_is_told(new_registry):
    room = new_registry().start()
    assert room.names.claim("squatter", "bob jones") == "bob jones"
    room.lectern.publish(RUN, "inputs", 2, "02_preemption", predicting=True)
    room.polls.ask("T", 3, "?", ("x", "y"), 0)
    room.seats.sit("s", "squatter", Seat())
    assert room.vote("s", "T", 3, 1)
    room.hand_in("squatter", "vip", PASSED)
    codes = room.names.set_roster(["Bob Jones", "Ann Lee", "BOB JONES"])
    assert sorted(codes) == ["Ann Lee", "Bob Jones"]  # the roster's spelling; no look-alike twice
    assert room.names.name_of("squatter") == "Bob Jones"  # until the personal link is opened
    assert room.names.claim_code("bob", codes["Bob Jones"]) == "Bob Jones"  # the personal link wins
    assert room.names.name_of("bob") == "Bob Jones" and room.names.name_of("squatter") is None
    lost = room.names.dropped("squatter")
    assert lost.key == "class.lost_to_roster" and lost.values["name"] == "Bob Jones"
    assert room.polls.at("T", 3).votes == {} and room.submissions.of() == []  # the squatter's, not Bob's
    with pytest.raises(ClassError) as refused:
        room.names.claim_code("squatter", codes["Bob Jones"])  # opened by its student: kept
    assert refused.value.message_id == "class.name_taken"
    assert room.names.claim_code("squatter", codes["Ann Lee"]) == "Ann Lee"  # a leaked link: the lecturer frees it
    assert room.names.dropped("squatter") is None


def test_the_lecturer_frees_or_removes_any_name_and_its_browser_is_told(new_registry):
    room = new_registry().start()
    room.names.claim("A", "Ada")
    room.names.claim("E", "Eve")
    room.hand_in("E", "vip", PASSED)
    assert room.names.release("ada") is None  # no roster: the name leaves, whoever types it next takes it
    assert room.names.name_of("A") is None and room.names.dropped("A").key == "class.name_released"
    assert room.names.claim("B", "Ada") == "Ada"
    assert room.names.remove("eve") and not room.names.remove("eve")
    assert room.names.dropped("E").key == "class.name_removed" and room.submissions.of() == []
    roster = new_registry().start()
    codes = roster.names.set_roster(["Ada", "Bob"])
    roster.names.claim_code("mallory", codes["Ada"])  # Ada's link, opened by the wrong browser
    new_code = roster.names.release("ada")
    assert new_code not in (None, codes["Ada"]) and roster.names.roster_codes()["Ada"] == new_code
    assert roster.names.claim_code("ada", codes["Ada"]) is None  # the old link opens nothing
    assert roster.names.claim_code("ada", new_code) == "Ada" and roster.names.name_of("mallory") is None
    assert roster.names.remove("bob") and "Bob" not in roster.names.roster_codes()
    assert roster.names.claim_code("x", codes["Bob"]) is None and sorted(roster.names.all().values()) == ["Ada"]


def test_a_name_taken_before_the_roster_and_freed_after_it_gets_a_personal_code(new_registry):
    """In a roster class nobody can type a name: a name taken before the roster, freed, could be nobody's again."""
    room = new_registry().start()
    room.names.claim("A", "Alice Smith")
    room.names.set_roster(["Bob Jones"])
    code = room.names.release(name_key("Alice Smith"))
    assert code is not None and room.names.roster_codes()["Alice Smith"] == code
    assert room.names.name_of("A") is None and room.names.claim_code("A", code) == "Alice Smith"


def test_closed_tabs_leave_their_seats_at_the_next_count_and_the_roster_lists_each_student_once(new_registry):
    room = new_registry().start()
    room.names.claim("A", "Ada")
    tabs = {session: [True] for session in ("a1", "a2", "x")}
    room.seats.sit("a1", "A", Seat(), lambda: tabs["a1"][0], frame=3)
    room.seats.sit("a2", "A", Seat(), lambda: tabs["a2"][0], frame=5)  # Ada's second tab
    room.seats.sit("x", "X", Seat(), lambda: tabs["x"][0])  # a tab with no name yet
    room.seats.set_following("a2", False)
    assert room.seats.counts() == (3, 2)
    rows = room.roster()
    assert [(r.name, r.tabs, r.following, r.frame) for r in rows] == [("Ada", 2, 1, 5), (None, 1, 1, 0)]
    tabs["a2"][0] = tabs["x"][0] = False  # closed
    assert room.seats.counts() == (1, 1)
    assert [(r.name, r.tabs) for r in room.roster()] == [("Ada", 1)]


def test_followers_are_woken_by_a_new_lead_and_not_by_the_same_one_nor_when_broken_away(new_registry):
    room = new_registry().start()
    following, away, gone = Seat(), Seat(), Seat()
    room.seats.sit("a", "A", following), room.seats.sit("b", "B", away), room.seats.sit("c", "C", gone)
    room.seats.set_following("b", False)
    gone.gone = True
    assert room.lectern.publish(RUN, "inputs", 3, "05_prefix_caching", False)
    settle(room.store)
    assert (following.woken, away.woken, gone.woken) == (1, 0, 1)
    assert room.seats.counts() == (2, 1)  # the closed tab left its seat
    assert not room.lectern.publish(RUN, "inputs", 3, "05_prefix_caching", False)  # nothing new: nobody woken
    assert room.lectern.publish(RUN, "inputs", 4, "05_prefix_caching", False)
    settle(room.store)
    assert following.woken == 2 and room.lead.version == 2 and room.lead.frame == 4
    room.seats.set_following("b", True)
    room.lectern.publish(RUN, "inputs", 5, "05_prefix_caching", False)
    settle(room.store)
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


def test_a_poll_counts_one_vote_per_student_their_last_until_revealed_and_exports_as_csv(new_registry):
    room = new_registry().start()
    lecturer = Seat()
    room.lectern.lecture("L", lecturer)
    for i in range(3):
        room.names.claim(f"browser{i}", f"student {i}")
        room.seats.sit(f"s{i}", f"browser{i}", Seat())
    room.seats.sit("s0-again", "browser0", Seat())  # student 0's second tab
    room.seats.sit("anonymous", "browser9", Seat())  # a tab with no name
    settle(room.store)
    assert lecturer.woken == 8  # three names given, five seats taken: the banner counts them
    room.lectern.publish(RUN, "inputs", 6, "02_preemption", predicting=True)
    poll = room.polls.ask("Preemption", 7, "Which request is preempted?", ("request 1", "request 2"), 1)
    assert room.polls.ask("Preemption", 7, "(in another language)", ("1", "2"), 1) == poll  # one poll per question
    assert room.vote("s0", "Preemption", 7, 0) and room.vote("s1", "Preemption", 7, 1)
    assert room.vote("s0-again", "Preemption", 7, 1)  # the same student from another tab: changed their mind
    assert not room.vote("anonymous", "Preemption", 7, 0)  # no name, no vote
    assert not room.vote("s2", "Preemption", 7, 5)  # no such choice
    assert not room.vote("s2", "Other", 7, 0)  # no such question
    room.seats.set_following("s2", False)
    assert not room.vote("s2", "Preemption", 7, 0)  # broken away: their vote is closed
    poll = room.polls.at("Preemption", 7)
    assert poll.counts() == [0, 2] and len(poll.votes) == 2 and room.vote_of("browser0", poll) == 1
    assert room.polls.reveal("Preemption", 7) and not room.polls.reveal("Preemption", 7)
    assert not room.vote("s1", "Preemption", 7, 0)  # too late
    assert room.polls.at("Preemption", 7).counts() == [0, 2]  # the counts stay after the reveal
    text = room.polls.tallies_csv()
    assert text.startswith("\ufeff")
    rows = list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))
    assert [(r["choice"], r["count"], r["answered"], r["right"]) for r in rows] == [
        ("request 1", "0", "2", "0"), ("request 2", "2", "2", "1")]
    assert rows[0]["class"] == room.code and rows[0]["revealed"] == "1"


def test_while_a_question_ahead_is_open_a_follower_goes_no_further_than_the_lecturer(new_registry):
    room = new_registry().start()
    room.names.claim("A", "Ada")
    room.seats.sit("a", "A", Seat())
    room.lectern.publish(RUN, "inputs", 2, "05_prefix_caching", predicting=False)
    poll = room.polls.ask("T", 3, "?", ("x", "y"), 0)
    assert room.bound("T") is None  # predictions are off
    room.lectern.publish(RUN, "inputs", 2, "05_prefix_caching", predicting=True)
    assert room.bound("T") == 2 and room.bound("another run") is None
    room.close_poll("T", 3)
    assert room.bound("T") is None and not room.vote("a", "T", 3, 0)  # closed: no more answers
    room.ask_again("T", 3)
    assert room.bound("T") == 2 and room.vote("a", "T", 3, 1)
    room.ask_again("T", 3)
    poll = room.polls.at("T", 3)
    assert poll.votes == {} and poll.open
    room.polls.reveal("T", 3)
    assert room.bound("T") is None


def test_only_the_lecturer_asks_and_a_vote_counts_only_while_the_lecturers_predictions_are_on(new_registry):
    room = new_registry().start("L")
    room.names.claim("S", "Sam")
    room.seats.sit("s", "S", follower := Seat())
    asked = ("T", 3, "Which request is preempted?", ("x", "y"), 0)
    room.lectern.publish(RUN, "inputs", 2, "02_preemption", predicting=False)
    assert room.question("S", *asked) is None and not room.vote("s", "T", 3, 0)  # a student switched them on
    room.lectern.publish(RUN, "inputs", 2, "02_preemption", predicting=True)
    assert room.question("S", *asked) is None and not room.vote("s", "T", 3, 0)  # not asked by the lecturer yet
    assert room.polls.all() == [] and room.polls.tallies_csv().count("\n") == 1  # the header alone
    settle(room.store)
    woken = follower.woken
    poll = room.question("L", *asked)
    settle(room.store)
    assert follower.woken == woken + 1  # asked: the follower's page shows it
    assert room.question("S", "T", 3, "(in the student's language)", ("1", "2"), 0) == poll
    assert room.vote("s", "T", 3, 1)
    room.lectern.publish(RUN, "inputs", 2, "02_preemption", predicting=False)  # the lecturer switched them off
    assert room.question("S", *asked) is None and not room.vote("s", "T", 3, 0)
    room.lectern.publish(RUN, "inputs", 3, "02_preemption", predicting=True)  # on, at the step asked about
    assert not room.vote("s", "T", 3, 0) and room.polls.at("T", 3).votes == {name_key("Sam"): 1}


def test_the_lecturer_brings_everyone_back_and_ends_the_class(new_registry):
    registry = new_registry()
    room = registry.start()
    seats = [Seat(), Seat()]
    room.seats.sit("a", "A", seats[0]), room.seats.sit("b", "B", seats[1])
    room.seats.set_following("a", False), room.seats.set_following("b", False)
    room.bring_back()
    settle(room.store)
    assert room.seats.counts() == (2, 2) and [s.woken for s in seats] == [1, 1]  # woken to the lecturer's place
    registry.close(room.code)
    settle(room.store)
    assert room.ended and registry.find(room.code) is None and [s.woken for s in seats] == [2, 2]


def test_wrong_guesses_are_limited_per_session_and_per_identity_and_a_right_one_is_never_counted(monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr("session.limits.clock", lambda: clock[0])
    guesses = limits.Guesses("codes", MemoryStore(), per_session=3, per_identity=5, window_s=60)
    one, other = limits.Guesser("s1", "10.0.0.1"), limits.Guesser("s2", "10.0.0.1")
    for _ in range(3):
        guesses.check(one)
        guesses.take(one)
    with pytest.raises(limits.TooManyGuesses) as refused:
        guesses.check(one)
    assert refused.value.message_id == "limit.codes" and refused.value.message.values["seconds"] == 60
    guesses.check(other)  # another session at that address may still guess
    guesses.take(other), guesses.take(other)
    with pytest.raises(limits.TooManyGuesses):
        guesses.check(limits.Guesser("s3", "10.0.0.1"))  # a script opening a new session per guess
    guesses.check(limits.Guesser("s4", "10.0.0.2"))
    clock[0] += 61
    guesses.check(one)  # the window has passed
def test_play_and_pause_are_new_leads_and_a_follower_woken_late_starts_where_the_lecturer_is(new_registry,
                                                                                            monkeypatch):
    room = new_registry().start()
    following = Seat()
    room.seats.sit("a", "A", following)
    clock = [100.0]
    monkeypatch.setattr("session.class_lead.clock", lambda: clock[0])
    room.lectern.publish(RUN, "inputs", 3, "05_prefix_caching", False)
    assert room.lectern.publish(RUN, "inputs", 3, "05_prefix_caching", False, playing=2.0)  # Play from frame 3
    settle(room.store)
    assert following.woken == 2 and room.lead.playing == 2.0
    clock[0] += 1.6  # the lecturer's player has shown 3 more frames meanwhile (it plays on by itself)
    assert room.lead.frame_now(last=100) == 6 and room.lead.frame_now(last=5) == 5  # no further than computed
    assert room.lectern.publish(RUN, "inputs", 3, "05_prefix_caching", False, playing=0.0)  # Pause where Play started
    settle(room.store)
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


def test_nothing_is_filed_under_a_class_once_it_has_ended(new_registry):
    """Ending a class deletes its keys; a tab's page run, a name or a hand-in coming after files none again."""
    registry = new_registry()
    room = registry.start("browser-L")
    room.seats.sit("a", "A", Seat())
    registry.close(room.code)
    room.seats.sit("b", "B", Seat())  # a page run already under way when the class ended
    with pytest.raises(ClassError) as refused:
        room.names.claim("B", "Bea")
    assert refused.value.message_id == "class.unknown"
    assert not room.lectern.publish(RUN, "inputs", 1, "05_prefix_caching", False)
    assert room.store.hgetall(room.keys.processes) == {} and room.store.hgetall(room.keys.seats(room.store.process)) \
        == {} and room.store.hgetall(room.keys.names) == {} and room.store.get(room.keys.lead) is None


def test_a_tab_that_ran_ahead_on_its_own_before_the_question_closes_its_browsers_vote(new_registry):
    """Issue 47's peek edge: a tab broke away before the question was asked, ran on, and followed again before its
    page ran once more: it is not away when the question is asked, yet it showed the answer's frames."""
    room = new_registry().start()
    room.names.claim("B", "Bo"), room.names.claim("C", "Cy")
    for session, token in (("b1", "B"), ("b2", "B"), ("c1", "C")):
        room.seats.sit(session, token, Seat())
    room.set_following("b2", "B", False)  # no question open: nothing to close
    room.saw_alone("B", "T", 30)  # its page ran to frame 30 on its own
    room.saw_alone("B", "T", 12)  # an earlier page run's word, late: the furthest is kept
    room.saw_alone("B", "Other run", 90)
    room.set_following("b2", "B", True)
    room.lectern.publish(RUN, "inputs", 2, "05_prefix_caching", predicting=True)
    room.polls.ask("T", 3, "?", ("x", "y"), 0)
    with pytest.raises(ClassError) as refused:
        room.vote("b1", "T", 3, 0)
    assert refused.value.message_id == "class.vote_closed"
    assert room.vote("c1", "T", 3, 1) and room.polls.at("T", 3).votes == {"cy": 1}  # another's untouched
    room.polls.reveal("T", 3)
    room.lectern.publish(RUN, "inputs", 30, "05_prefix_caching", predicting=True)  # the lecturer is there now
    room.polls.ask("T", 31, "?", ("x", "y"), 0)
    assert room.vote("b1", "T", 31, 0)  # frames up to the lecturer's are no peeking


def test_breaking_away_from_any_tab_closes_the_browsers_vote_for_good(new_registry):
    room = new_registry().start()
    room.names.claim("B", "Bo"), room.names.claim("C", "Cy")
    for session, token in (("b1", "B"), ("b2", "B"), ("c1", "C"), ("c2", "C")):
        room.seats.sit(session, token, Seat())
    room.lectern.publish(RUN, "inputs", 2, "05_prefix_caching", predicting=True)
    room.polls.ask("T", 3, "?", ("x", "y"), 0)
    assert room.vote("b1", "T", 3, 0)  # sent before any tab broke away: it stays
    room.set_following("b2", "B", False)  # another tab of Bo's browser breaks away: it may run on to step 3
    with pytest.raises(ClassError) as refused:
        room.vote("b1", "T", 3, 1)
    assert refused.value.message_id == "class.vote_closed"
    room.set_following("b2", "B", True)  # following again does not unsee what it showed
    with pytest.raises(ClassError):
        room.vote("b1", "T", 3, 1)
    assert room.vote("c1", "T", 3, 1) and room.polls.at("T", 3).votes == {"bo": 0, "cy": 1}  # another's untouched
    room.polls.reveal("T", 3)
    room.set_following("c2", "C", False)  # no question open: nothing to close
    room.polls.ask("T", 4, "?", ("x", "y"), 0)
    with pytest.raises(ClassError):  # a tab of Cy's browser is away while it is asked
        room.vote("c1", "T", 4, 0)
    room.set_following("c2", "C", True)  # back before that tab showed anything since: it saw what anyone could
    assert room.vote("c1", "T", 4, 0)
    room.set_following("c2", "C", False)  # away while it is open: closed for good
    room.set_following("c2", "C", True)
    with pytest.raises(ClassError):
        room.vote("c1", "T", 4, 1)


def test_the_roster_lists_names_by_their_key_a_look_alike_beside_its_likeness(new_registry):
    """A Cyrillic А sorts with the Latin A it looks like (in order of the names as written it came after every Latin
    name)."""
    room = new_registry().start()
    for token, name in (("1", "Bob"), ("2", "\u0410nna Lee"), ("3", "Zoe")):
        room.names.claim(token, name)
    assert [row.name for row in room.roster()] == ["\u0410nna Lee", "Bob", "Zoe"]
