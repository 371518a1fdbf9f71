"""Coding assignments in a class, the server's side (session/coding.py, session/coding_grade.py), over both class
stores: the lecturer sets one (checked, bounded), a student hands in code under their name (size-capped, one
grading at a time), a graded hand-in is filed as their latest submission with a link only they and the lecturer
open, and each goal is judged on the sandbox's trace (the contract on why a run stopped short; a latency against a
built-in kind's run of the same workload). The sandbox itself runs the code in tests/test_coding_sandbox.py."""

import csv
import io
from dataclasses import replace
from types import SimpleNamespace

import pytest

from engine.inputs.goals import FAIL, PASS, Verdict
from engine.run.engine import Engine
from engine.traces.trace import trace_dict
from i18n import Message, in_lang
from sandbox import Outcome
from session import coding as module
from session.class_error import ClassError
from session.coding import CodingError, HandIn, checked
from session.coding_grade import BUSY, BUSY_WAITS_S, baseline, grade, judged, workload
from tests.helpers.class_stores import settle
from tests.helpers.coding import ASSIGNMENT, CONTRACT, E2E_VS, WAITS, WORKLOAD, Recorded


def outcome(spec=None, **why):
    """The sandbox's answer as data: the trace of a built-in run of `spec` (None: no trace), and why it stopped."""
    trace = None
    if spec is not None:
        engine = Engine(spec)
        engine.run()
        trace = trace_dict(engine)
    return Outcome(trace=trace, **why)


def class_with_students(new_registry):
    room = new_registry().start("lecturer")
    room.names.claim("browser-a", "Ada")
    room.names.claim("browser-b", "Bob")
    room.coding.set(ASSIGNMENT)
    return room


# -- the lecturer sets one ----------------------------------------------------------------------------------------


def test_an_assignment_is_checked_kept_and_bounded(new_registry, monkeypatch):
    with pytest.raises(CodingError) as refused:
        checked("  ", "victim", "MyVictim", [WORKLOAD], [CONTRACT])
    assert in_lang("zh", refused.value.message) == "请给作业起一个 1 到 60 个字符的名字。"
    with pytest.raises(CodingError) as refused:
        checked("Victim", "victim", "MyVictim", [], [CONTRACT])
    assert refused.value.message == "0 workloads: an assignment is graded on 1 to 4."
    made = checked(" Victim\tchoice ", "victim", "MyVictim", [WORKLOAD, WORKLOAD], [CONTRACT, E2E_VS])
    assert (made.name, made.workloads) == ("Victim choice", (WORKLOAD,))
    room = new_registry().start("lecturer")
    room.coding.set(made)
    room.coding.set(ASSIGNMENT)
    assert room.coding.all() == [ASSIGNMENT, made] and room.coding.get("Victim choice") == made  # read back whole
    monkeypatch.setattr(module, "MAX_ASSIGNMENTS", 2)
    room.coding.set(replace(made, goals=(CONTRACT,)))  # the same name: replaced, not one more
    with pytest.raises(CodingError) as refused:
        room.coding.set(replace(made, name="Third"))
    assert refused.value.message == "This class already has 2 coding assignments; remove one first."
    assert room.coding.remove("Victim") and [a.name for a in room.coding.all()] == ["Victim choice"]


def test_the_goals_say_what_they_ask_in_both_languages():
    assert [str(g.words) for g in ASSIGNMENT.goals] == [
        "Every invariant of the scheduler contract holds after every step, and the code runs to the end within its "
        "limits.",
        "mean end-to-end latency is below that of the article's scheduler on the same workload.",
        "longest queueing delay is at most 20 steps."]
    assert in_lang("zh", E2E_VS.words) == "「平均端到端延迟」低于文章的调度器在同一负载上的值。"


# -- a student hands in ---------------------------------------------------------------------------------------------


def test_a_hand_in_is_named_capped_and_one_at_a_time_per_student(new_registry, monkeypatch):
    room, grader = class_with_students(new_registry), Recorded()
    with pytest.raises(ClassError) as refused:
        room.hand_in_code("browser-x", "Victim", "code", grader=grader)  # no name in the class
    assert refused.value.message_id == "class.name_first"
    with pytest.raises(CodingError) as refused:
        room.hand_in_code("browser-a", "Victim", "x" * (module.MAX_SOURCE_BYTES + 1), grader=grader)
    assert refused.value.message == "Your code is 64 KB; a hand-in takes at most 64 KB."
    with pytest.raises(CodingError) as refused:
        room.hand_in_code("browser-a", "Another", "code", grader=grader)
    assert refused.value.message_id == "coding.no_assignment"
    first = room.hand_in_code("browser-a", "Victim", "first", grader=grader)
    with pytest.raises(CodingError) as refused:  # the first is still being graded
        room.hand_in_code("browser-a", "Victim", "second", grader=grader)
    assert in_lang("zh", refused.value.message) == "你上一次提交的代码还在评分：评完之后再提交。"
    with pytest.raises(CodingError) as refused:
        room.hand_in_code("browser-b", "Victim", "Bob's", "not a class", grader=grader)
    assert refused.value.message == "not a class is not the name of a class: name your scheduler's class."
    room.hand_in_code("browser-b", "Victim", "Bob's", "BobsVictim", grader=grader)  # another student meanwhile
    assert [(h.name, h.source, h.class_name) for h in grader.started] == [
        ("Ada", "first", "MyVictim"), ("Bob", "Bob's", "BobsVictim")]  # the starter's class, where none is named
    assert room.coding.grading("ada").id == first.id and room.coding.handed(first.id).source == "first"
    later = module.clock() + module.GRADING_STALE_S + 1  # the process grading it stopped: it counts no more
    monkeypatch.setattr(module, "clock", lambda: later)
    again = room.hand_in_code("browser-a", "Victim", "second", grader=grader)
    assert room.coding.handed(first.id) is None and room.coding.handed(again.id).source == "second"


def test_the_page_sends_code_never_a_verdict():
    """Handing in takes the code and the assignment's name: a verdict has no way in (it is the server's grade)."""
    import inspect

    from session.classroom import Classroom
    assert list(inspect.signature(Classroom.hand_in_code).parameters) == ["self", "token", "assignment", "source",
                                                                          "class_name", "grader"]


# -- the grade is filed, the link opens it for its author and the lecturer ------------------------------------------


def verdicts(state: str) -> tuple:
    return ((Message("coding.on_workload", workload=WORKLOAD, goal=CONTRACT.words),
             Verdict(state, Message("goal.contract_held", step=80))),)


def test_a_graded_hand_in_is_the_latest_submission_and_its_link_is_its_authors_and_the_lecturers(new_registry):
    room = class_with_students(new_registry)
    woken = []
    room.lectern.lecture("lecturer", lambda: woken.append(1) or True)
    first = room.hand_in_code("browser-a", "Victim", "first", grader=Recorded())
    filed = room.coding.file(first, verdicts(FAIL))
    assert room.coding.grading("ada") is None and not filed.passed
    second = room.hand_in_code("browser-a", "Victim", "second", grader=Recorded())
    room.coding.file(second, verdicts(PASS))
    (latest,) = room.submissions.of("Victim")
    assert (latest.name, latest.passed, latest.run) == ("Ada", True, f"class={room.code}&submission={second.id}")
    assert room.coding.handed(first.id) is None  # the code it replaced is dropped
    with pytest.raises(CodingError) as refused:
        room.opened("browser-a", first.id)
    assert refused.value.message_id == "coding.gone"
    assert room.opened("browser-a", second.id)[0].source == "second"  # its author
    assert room.opened("lecturer", second.id) == (room.coding.handed(second.id), ASSIGNMENT)  # the lecturer
    with pytest.raises(CodingError) as refused:
        room.opened("browser-b", second.id)  # another student, with the link in hand
    assert refused.value.message == "This hand-in is another student's: only its author and the lecturer can open it."
    assert in_lang("zh", refused.value.message) == "这是另一位学生的提交：只有它的作者和讲师可以打开。"
    rows = list(csv.DictReader(io.StringIO(room.gradebook_csv("https://lab.example/x").lstrip("\ufeff"))))
    assert [(r["name"], r["Victim_passed"], r["Victim_link"]) for r in rows] == [
        ("Ada", "1", f"https://lab.example/x/?class={room.code}&submission={second.id}"), ("Bob", "", "")]
    sheet = room.submissions.csv(room.code, "zh")
    assert f"在 {WORKLOAD} 上：每一步之后调度器契约的所有不变式都成立" in sheet
    assert room.coding.drop("Victim", "ada") and room.submissions.of("Victim") == []
    assert room.coding.handed(second.id) is None
    settle(room.store)


def test_a_failed_grading_is_told_and_frees_the_student(new_registry):
    room = class_with_students(new_registry)
    hand = room.hand_in_code("browser-a", "Victim", "code", grader=Recorded())
    room.coding.failed(hand, Message("coding.grading_failed"))
    assert room.coding.grading("ada").error.key == "coding.grading_failed"
    room.hand_in_code("browser-a", "Victim", "again", grader=Recorded())  # free to hand in again
    assert room.coding.handed(hand.id) is None


# -- each goal judged on the sandbox's trace ---------------------------------------------------------------------


def test_goals_are_judged_on_the_trace_and_against_the_built_in_kinds_run():
    spec = workload(WORKLOAD).spec
    smart = replace(spec, config=replace(spec.config, preemption_policy="smart"))
    said = [(str(words), v.state, str(v.reason)) for words, v in judged(ASSIGNMENT, WORKLOAD, outcome(smart))]
    theirs = baseline(WORKLOAD, "article")
    assert theirs.run.num_steps == 80 and said == [
        (f"On {WORKLOAD}: {CONTRACT.words}", PASS, "Every invariant held after each of the 80 steps."),
        (f"On {WORKLOAD}: {E2E_VS.words}", PASS,
         "mean end-to-end latency was 38.2 steps, below the article's scheduler's 38.6."),
        (f"On {WORKLOAD}: {WAITS.words}", PASS, "longest queueing delay was 0.0 steps, within 20.")]
    serial = replace(spec, config=replace(spec.config, max_num_seqs=1))  # one request at a time: slower
    said = {str(words): (v.state, str(v.reason)) for words, v in judged(ASSIGNMENT, WORKLOAD, outcome(serial))}
    assert said[f"On {WORKLOAD}: {E2E_VS.words}"][0] == FAIL
    assert said[f"On {WORKLOAD}: {E2E_VS.words}"][1].endswith("not below the article's scheduler's 38.6.")
    said = judged(ASSIGNMENT, WORKLOAD, outcome(spec))  # the article's own run: not below itself
    assert [v.state for _, v in said] == [PASS, FAIL, PASS]


def test_a_run_stopped_short_fails_the_contract_and_says_why():
    broken = SimpleNamespace(step=12, message=Message("check.freed_twice", unit="block", id=5, counted=-1))
    spec = workload(WORKLOAD).spec
    said = judged(ASSIGNMENT, WORKLOAD, outcome(replace(spec, max_steps=12), broken=broken))
    assert [v.state for _, v in said] == [FAIL, FAIL, FAIL]  # what its end decides is not met
    assert str(said[0][1].reason).startswith("Stopped at step 12: block ")
    assert str(said[2][1].reason) == ("The run stopped before its end. Not decided yet: the run has not "
                                      "finished (step 12). So far: longest queueing delay is 0.0 steps.")
    fault = SimpleNamespace(line=7, message=Message("coding.no_trace"), text="Traceback")
    said = judged(ASSIGNMENT, WORKLOAD, outcome(fault=fault))  # nothing ran: every goal fails, saying why
    assert {v.state for _, v in said} == {FAIL} and {str(v.reason) for _, v in said} == {"The code did not run."}


def test_a_busy_sandbox_is_asked_again_and_never_graded_as_a_failure():
    busy = outcome(stopped=SimpleNamespace(key=BUSY))  # the sandbox's words are its own
    answers, waits = [busy, busy, outcome(workload(WORKLOAD).spec)], []
    hand = HandIn("id", "Victim", "Ada", "ada", "code", "MyVictim", 0.0)
    said = grade(ASSIGNMENT, hand, run=lambda *job: answers.pop(0), sleep=waits.append)
    assert waits == [1, 2] and [v.state for _, v in said] == [PASS, FAIL, PASS]  # the article's run, graded
    with pytest.raises(CodingError) as refused:
        grade(ASSIGNMENT, hand, run=lambda *job: busy, sleep=waits.append)
    assert refused.value.message_id == "coding.busy" and waits[2:] == list(BUSY_WAITS_S)
