"""A coding assignment graded for real (issue 44 point 5), over both class stores: a lecturer sets the victim
exercise on the smart-preemption preset, three students hand in code — the reference solution's file (naming its
class), a block freed twice, a victim chosen worst-first (these two under the starter's class) — the server runs each
in the sandbox and grades it, and the gradebook says so per goal in both languages, its exports too."""

import csv
import io

from engine.inputs.goals import FAIL, PASS
from i18n import in_lang
from session.coding_grade import Grader
from tests.helpers.coding import ASSIGNMENT, DOUBLE_FREE, SOLUTION, SOLUTION_CLASS, SOLUTION_PATH, WORST_FIRST
from tests.helpers.sandboxed import NEEDS_JAIL, registry  # noqa: F401 (a fixture: the kinds registered are undone)

pytestmark = NEEDS_JAIL


class Waited(Grader):
    """The server's grader, its gradings kept to wait on."""

    def __init__(self):
        super().__init__()
        self.gradings = []

    def start(self, coding, hand, done=lambda: None):
        self.gradings.append(super().start(coding, hand, done))


def test_two_students_hand_in_one_passes_one_fails_and_the_gradebook_says_so(new_registry, registry):  # noqa: F811
    assert WORST_FIRST != SOLUTION  # Ada hands in the solution's file as it is, naming its class
    room = new_registry().start("lecturer")
    room.coding.set(ASSIGNMENT)
    grader = Waited()
    for browser, name, code, class_name in (("a", "Ada", SOLUTION_PATH.read_text(), SOLUTION_CLASS),
                                            ("b", "Bob", DOUBLE_FREE, None), ("c", "王小明", WORST_FIRST, None)):
        room.names.claim(browser, name)
        room.hand_in_code(browser, ASSIGNMENT.name, code, class_name, grader)
    for grading in grader.gradings:
        grading.result(timeout=300)
    by_name = {s.name: s for s in room.submissions.of(ASSIGNMENT.name)}
    assert {name: (s.passed, [v.state for _, v in s.goals]) for name, s in by_name.items()} == {
        "Ada": (True, [PASS, PASS, PASS]), "Bob": (False, [FAIL, FAIL, FAIL]), "王小明": (False, [PASS, FAIL, PASS])}
    contract = by_name["Bob"].goals[0][1].reason
    assert str(contract).startswith("Stopped at step 8: block ") and "was freed more times than it was taken" in \
        str(contract)
    assert in_lang("zh", contract).startswith("在第 8 步停止：")
    assert str(by_name["王小明"].goals[1][1].reason) == \
        "mean end-to-end latency was 38.6 steps, not below the article's scheduler's 38.6."
    rows = list(csv.DictReader(io.StringIO(room.gradebook_csv("https://lab.example").lstrip("\ufeff"))))
    assert [(r["name"], r["Victim_passed"], r["Victim_link"].split("&submission=")[0]) for r in rows] == [
        (name, passed, f"https://lab.example/?class={room.code}")
        for name, passed in (("Ada", "1"), ("Bob", "0"), ("王小明", "0"))]
    per_goal = list(csv.DictReader(io.StringIO(room.submissions.csv(room.code, "zh").lstrip("\ufeff"))))
    assert [(r["name"], r["result"]) for r in per_goal] == [
        ("Ada", "pass"), ("Ada", "pass"), ("Ada", "pass"), ("Bob", "fail"), ("Bob", "fail"), ("Bob", "fail"),
        ("王小明", "pass"), ("王小明", "fail"), ("王小明", "pass")]
    assert per_goal[4]["goal"] == "在 07_smart_preemption 上：「平均端到端延迟」低于文章的调度器在同一负载上的值。"
    assert room.coding.grading("ada") is None  # each student free to hand in again
