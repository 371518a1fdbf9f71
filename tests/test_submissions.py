"""A class's handed-in assignments (session/submissions.py, session/classroom.py): handed in under the browser's
name, the latest per name and assignment, deleted by the lecturer, the lecturer woken, and the CSV exports (one row
per goal and rule in the lecturer's language; the gradebook, one row per student), each with a byte-order mark
and no cell a spreadsheet would run."""

import csv
import io
from dataclasses import replace

import pytest

from engine.inputs.goals import gather
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from engine.run.recipe import Change
from session import submissions as module
from session.classroom import ClassError, Registry
from session.names import name_key
from session.submissions import BOM, SubmissionError, Submissions
from tests.helpers.class_stores import settle

VIP = load_scenario(SCENARIOS_DIR / "assignment_1_vip_deadline.toml")
NAME = "assignment_1_vip_deadline"


def judged(**settings):
    """Assignment 1's run to its end (with `settings` at frame 0), judged."""
    spec = replace(VIP.spec, changes=(Change.config(0, settings),)) if settings else VIP.spec
    engine = Engine(spec)
    engine.run()
    return VIP.assignment.judge(gather(engine.frames, ended=True), VIP.spec, spec)


FAILED, PASSED = judged(), judged(queue_policy="priority")


def submit(kept: Submissions, name: str, assignment: str, judgement, link: str = ""):
    return kept.submit(name, name_key(name), assignment, judgement, link)


def test_the_latest_submission_per_name_counts_and_the_lecturer_may_delete_one():
    kept = Registry().start().submissions
    submit(kept, "Ada", NAME, FAILED)
    submit(kept, "Bob", NAME, FAILED)
    submit(kept, "ADA", NAME, PASSED)  # the same student (one key), again: the latest counts
    latest = kept.of(NAME)
    assert [(s.name, s.passed) for s in latest] == [("ADA", True), ("Bob", False)]
    assert kept.of("another") == []
    assert kept.delete(NAME, "bob") and not kept.delete(NAME, "bob")
    assert [s.name for s in kept.of(NAME)] == ["ADA"]


def test_a_class_holds_a_bounded_number_of_names(monkeypatch):
    monkeypatch.setattr(module, "MAX_NAMES", 2)
    kept = Registry().start().submissions
    submit(kept, "a", NAME, FAILED)
    submit(kept, "b", NAME, FAILED)
    submit(kept, "a", NAME, PASSED)  # a name already there may submit again
    submit(kept, "c", "another", FAILED)  # per assignment
    with pytest.raises(SubmissionError):
        submit(kept, "c", NAME, FAILED)
    assert len(kept.of(NAME)) == 2


def test_handing_in_is_by_the_browsers_name_wakes_the_lecturer_and_exports_every_goal(new_registry):
    room = new_registry().start()
    woken = []
    room.lectern.lecture("lecturer", lambda: woken.append(1) or True)
    with pytest.raises(ClassError) as refused:
        room.hand_in("browser-a", NAME, PASSED)  # no name in the class yet
    assert refused.value.message_id == "class.name_first"
    room.names.claim("browser-a", "Ada")
    room.names.claim("browser-b", "=Bob")
    settle(room.store)  # the claims' wake-ups heard before counting the hand-ins'
    woken.clear()
    room.hand_in("browser-a", NAME, PASSED, {"scenario": NAME, "frame": "40"})
    room.hand_in("browser-b", NAME, FAILED)
    settle(room.store)
    assert len(woken) == 2
    text = room.submissions.csv(room.code, "en")
    assert text.startswith(BOM)  # Excel reads the names as UTF-8
    rows = list(csv.DictReader(io.StringIO(text.removeprefix(BOM))))
    assert [(r["name"], r["passed"], r["result"]) for r in rows] == [
        ("Ada", "1", "pass"), ("Ada", "1", "pass"), ("Bob", "0", "fail"), ("Bob", "0", "pass")]
    assert rows[2]["goal"] == "Request 3 finishes by step 20." and rows[2]["class"] == room.code
    assert rows[2]["reason"] == "Request 3 finished at step 29, after step 20."
    zh = list(csv.DictReader(io.StringIO(room.submissions.csv(room.code, "zh"))))
    assert zh[2]["reason"] == "请求 3 在第 29 步完成，晚于第 20 步。"


def test_a_broken_rule_is_a_row_and_no_cell_starts_a_formula():
    kept = Registry().start().submissions
    spec = replace(VIP.spec, changes=(Change.config(0, {"num_kvcache_blocks": 6}),))
    engine = Engine(spec)
    engine.run()
    submit(kept, "Eve", NAME, VIP.assignment.judge(gather(engine.frames, ended=True), VIP.spec, spec))
    rows = list(csv.reader(io.StringIO(kept.csv("=SUM(A1)", "en").removeprefix(BOM))))
    assert rows[-1][5:] == ["rules", "fail", "num_kvcache_blocks was changed at frame 0, but the assignment locks it."]
    assert all(cell[:1] not in "=+-@" for row in rows[1:] for cell in row) and rows[1][0] == "'=SUM(A1)"


def test_the_gradebook_has_a_row_per_student_with_each_assignments_verdict_time_and_link(new_registry):
    room = new_registry().start()
    for browser, name in (("a", "王小明"), ("b", "-Ada"), ("c", "Cy")):
        room.names.claim(browser, name)
    room.hand_in("a", NAME, PASSED, {"scenario": NAME, "frame": "40"})  # the run the server judged
    room.hand_in("b", NAME, FAILED, {"scenario": NAME, "frame": "7"})
    room.hand_in("b", "another", PASSED)
    text = room.gradebook_csv("https://class.example/p1/")  # the class's address, as the lecturer's desk has it
    assert text.startswith(BOM)
    rows = list(csv.DictReader(io.StringIO(text.removeprefix(BOM))))
    assert [r["name"] for r in rows] == ["'-Ada", "Cy", "王小明"]  # one row each, Cy with nothing handed in
    by = {r["name"]: r for r in rows}
    assert by["王小明"][f"{NAME}_passed"] == "1"
    assert by["王小明"][f"{NAME}_link"] == f"https://class.example/p1/?scenario={NAME}&frame=40"
    assert by["'-Ada"][f"{NAME}_passed"] == "0" and by["'-Ada"]["another_passed"] == "1"
    assert by["'-Ada"]["another_link"] == ""  # no run to reopen
    assert by["Cy"][f"{NAME}_passed"] == "" and by["Cy"][f"{NAME}_submitted_utc"] == ""
    assert by["王小明"]["another_passed"] == "" and len(by["王小明"][f"{NAME}_submitted_utc"]) == 19
