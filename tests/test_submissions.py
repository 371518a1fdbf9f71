"""A class's handed-in assignments (session/submissions.py, session/classroom.py): names cleaned and bounded, the
latest submission per name and assignment, the lecturer woken, and the CSV export (one row per goal and rule, in
the lecturer's language, no cell a spreadsheet would run)."""

import csv
import io
from dataclasses import replace

import pytest

from engine.inputs.goals import gather
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.engine import Engine
from engine.run.recipe import Change
from session import submissions as module
from session.classroom import Registry
from session.submissions import MAX_NAME, SubmissionError, Submissions, clean_name

VIP = load_scenario(SCENARIOS_DIR / "assignment_1_vip_deadline.toml")
NAME = "assignment_1_vip_deadline"


def judged(**settings):
    """Assignment 1's run to its end (with `settings` at frame 0), judged."""
    spec = replace(VIP.spec, changes=(Change.config(0, settings),)) if settings else VIP.spec
    engine = Engine(spec)
    engine.run()
    return VIP.assignment.judge(gather(engine.frames, ended=True), VIP.spec, spec)


FAILED, PASSED = judged(), judged(queue_policy="priority")


@pytest.mark.parametrize("raw, kept", [
    ("  Ada   Lovelace ", "Ada Lovelace"), ("李雷", "李雷"), ("O'Brien-Smith", "O'Brien-Smith"),
    ("**bold** [x](http://e)", "bold x http e"), ("=cmd|' /C calc'!A0", "cmd ' C calc' A0"),
    ("a\x00b\nc", "a b c"), ("", None), ("  \t ", None), (None, None), ("x" * 100, "x" * MAX_NAME),
])
def test_a_name_is_cleaned_where_it_enters(raw, kept):
    assert clean_name(raw) == kept


def test_the_latest_submission_per_name_counts():
    kept = Submissions()
    kept.submit("Ada", NAME, FAILED)
    kept.submit("Bob", NAME, FAILED)
    kept.submit(" ada ", NAME, PASSED)  # the same student, again: the latest counts
    latest = kept.of(NAME)
    assert [(s.name, s.passed) for s in latest] == [("ada", True), ("Bob", False)]
    assert kept.of("another") == []
    with pytest.raises(SubmissionError) as refused:
        kept.submit("***", NAME, PASSED)
    assert "Type your name" in str(refused.value)


def test_a_class_holds_a_bounded_number_of_names(monkeypatch):
    monkeypatch.setattr(module, "MAX_NAMES", 2)
    kept = Submissions()
    kept.submit("a", NAME, FAILED)
    kept.submit("b", NAME, FAILED)
    kept.submit("a", NAME, PASSED)  # a name already there may submit again
    kept.submit("c", "another", FAILED)  # per assignment
    with pytest.raises(SubmissionError):
        kept.submit("c", NAME, FAILED)
    assert len(kept.of(NAME)) == 2


def test_handing_in_wakes_the_lecturer_and_exports_every_goal():
    room = Registry().start()
    woken = []
    room.lecture("lecturer", lambda: woken.append(1) or True)
    room.hand_in("Ada", NAME, PASSED)
    room.hand_in("=Bob", NAME, FAILED)
    assert len(woken) == 2
    rows = list(csv.DictReader(io.StringIO(room.submissions.csv(room.code, "en"))))
    assert [(r["name"], r["passed"], r["result"]) for r in rows] == [
        ("Ada", "1", "pass"), ("Ada", "1", "pass"), ("Bob", "0", "fail"), ("Bob", "0", "pass")]
    assert rows[2]["goal"] == "Request 3 finishes by step 20." and rows[2]["class"] == room.code
    assert rows[2]["reason"] == "Request 3 finished at step 29, after step 20."
    zh = list(csv.DictReader(io.StringIO(room.submissions.csv(room.code, "zh"))))
    assert zh[2]["reason"] == "请求 3 在第 29 步完成，晚于第 20 步。"


def test_a_broken_rule_is_a_row_and_no_cell_starts_a_formula():
    kept = Submissions()
    spec = replace(VIP.spec, changes=(Change.config(0, {"num_kvcache_blocks": 6}),))
    engine = Engine(spec)
    engine.run()
    kept.submit("Eve", NAME, VIP.assignment.judge(gather(engine.frames, ended=True), VIP.spec, spec))
    rows = list(csv.reader(io.StringIO(kept.csv("=SUM(A1)", "en"))))
    assert rows[-1][5:] == ["rules", "fail", "num_kvcache_blocks was changed at frame 0, but the assignment locks it."]
    assert all(cell[:1] not in "=+-@" for row in rows[1:] for cell in row) and rows[1][0] == "'=SUM(A1)"
