"""A coding assignment for the tests (session/coding.py): the victim exercise on the smart-preemption preset, with
the contract, a mean end-to-end latency below the article's scheduler's and no wait past 20 steps; a grader that
grades nothing; and three students' code: the reference solution, a block freed twice, a victim chosen worst-first."""

from pathlib import Path

from engine.inputs.assignment import Goal
from session.coding import CodingAssignment
from starters import BY_ID

WORKLOAD = "07_smart_preemption"  # tail preemption evicts the short requests about to finish
CONTRACT = Goal("contract", ())
E2E_VS = Goal("latency_vs", (("metric", "e2e"), ("stat", "mean"), ("baseline", "article")))
WAITS = Goal("latency", (("metric", "queueing"), ("stat", "max"), ("at_most", 20.0)))
ASSIGNMENT = CodingAssignment("Victim", "victim", "MyVictim", (WORKLOAD,), (CONTRACT, E2E_VS, WAITS))


class Recorded:
    """A grader that grades nothing: what was handed to it (a hand-in stays 'being graded')."""

    def __init__(self):
        self.started = []

    def start(self, coding, hand, done=lambda: None):
        self.started.append(hand)


SOLUTION_PATH, SOLUTION_CLASS = BY_ID["victim"].solution


def as_starter(path: Path, class_name: str) -> str:
    """A file's scheduler under the starter's class name (the one the assignment runs)."""
    return path.read_text().replace(f"class {class_name}(", f"class {ASSIGNMENT.class_name}(")


SOLUTION = as_starter(SOLUTION_PATH, SOLUTION_CLASS)
DOUBLE_FREE = as_starter(BY_ID["double_free"].path, BY_ID["double_free"].class_name)
WORST_FIRST = SOLUTION.replace("return min(self.running, key=lost_if_preempted", "return max(self.running, "
                                                                                  "key=lost_if_preempted")
