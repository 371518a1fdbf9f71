"""A classroom on one server: simulated students stepping, playing and branching at once.

Each student opens a run, clicks Step a few times (a pause between clicks), plays some steps at 5 steps/s,
goes back a few frames and changes max_num_seqs there (a branch), then steps on. A student is one session of
the session layer (a `Lab`) driven from its own thread in this process, through the same run cache and model
worker a `streamlit run app.py` process uses: the server's side of a step without Streamlit (the page's
script reruns and the browser's drawing are not in these figures; the frame shown is read). Per scenario:
p50/p95/max latency of a step (and, apart, of the branch), lost actions (an error, or a step that did
not move the cursor), the process's peak RSS (plus its model process's: their shared KV caches count twice),
and the model's forward passes with their sizes (sessions per pass). Baselines in the same run: one student
alone on the same model, and the fake-model class without the shared run cache (every student computing their
own run, as before it).

Bounded: at most 30 students, each with a fixed script of actions, every scenario stopped after its time
limit; nothing leaves this process. Run: python -m bench.bench_classroom [fake] [preset] [custom]
"""

import os
import random
import sys
import threading
import time
from dataclasses import dataclass, field

from bench.process_stats import family_peak_rss
from bench.stats import percentiles
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from engine.run.runner_factory import started_model_worker
from scheduler import Config
from session.lab import CustomSetup, Lab, LabError, RunInputs, real_model_installed
from session.run_cache import RunCache, shared_run_cache

CLICKS, PLAYED, BACK, AFTER_BRANCH = 4, 10, 3, 4  # each student's script
CLICK_PAUSE_S = (0.5, 1.5)  # a student reads the frame before the next click
PLAY_INTERVAL_S = 0.2  # "fast (5 steps/s)"
ARRIVAL_SPREAD_S = 3.0  # students open the link within this many seconds
TIME_LIMIT_S = 150


@dataclass
class Student:
    inputs: RunInputs
    change: int  # the max_num_seqs this student branches to
    rng: random.Random
    cache: RunCache | None = None  # None: the process's shared run cache
    latencies: list[float] = field(default_factory=list)  # of steps
    branch_latencies: list[float] = field(default_factory=list)
    lost: int = 0
    errors: list[str] = field(default_factory=list)

    def timed(self, action, latencies: list[float]) -> bool:
        start = time.perf_counter()
        try:
            action()
        except LabError as e:
            if "over" not in str(e):  # stepping past the end is refused by design, not lost
                self.lost += 1
                self.errors.append(str(e))
            return False
        except Exception as e:  # anything else is a lost action, counted and shown
            self.lost += 1
            self.errors.append(f"{type(e).__name__}: {e}")
            return False
        finally:
            latencies.append(time.perf_counter() - start)
        return True

    def step(self, lab: Lab, pause_s: float, deadline: float):
        if time.monotonic() > deadline or lab.is_over:
            return
        before = lab.cursor

        def step_and_read():
            lab.step()
            return lab.frame  # the frame the page then shows
        if self.timed(step_and_read, self.latencies) and lab.cursor != before + 1:
            self.lost += 1
        time.sleep(pause_s)

    def attend(self, deadline: float):
        time.sleep(self.rng.uniform(0, ARRIVAL_SPREAD_S))
        lab = Lab(self.inputs, cache=self.cache)
        for _ in range(CLICKS):
            self.step(lab, self.rng.uniform(*CLICK_PAUSE_S), deadline)
        for _ in range(PLAYED):
            self.step(lab, PLAY_INTERVAL_S, deadline)
        lab.goto(max(0, lab.cursor - BACK))
        self.timed(lambda: lab.set_config(max_num_seqs=self.change), self.branch_latencies)
        for _ in range(AFTER_BRANCH):
            self.step(lab, self.rng.uniform(*CLICK_PAUSE_S), deadline)


def run_class(title: str, students: list[Student], targets: str = ""):
    worker = started_model_worker()
    passes_before = worker.forward_passes if worker else 0
    deadline = time.monotonic() + TIME_LIMIT_S
    threads = [threading.Thread(target=s.attend, args=(deadline,), daemon=True) for s in students]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(1.0, deadline - time.monotonic() + 30))
    wall = time.perf_counter() - start
    steps = [x for s in students for x in s.latencies]
    p50, p95, worst = (1e3 * x for x in percentiles(steps, 50, 95, 100))
    lost = sum(s.lost for s in students)
    print(f"{title:<64} {len(students):>3} {len(steps):>6} {p50:>7.0f} {p95:>7.0f} {worst:>7.0f} {lost:>5} "
          f"{sum(family_peak_rss(os.getpid())):>7.0f} {wall:>6.1f}  {targets}", flush=True)
    p50, p95, worst = (1e3 * x for x in percentiles([x for s in students for x in s.branch_latencies], 50, 95, 100))
    print(f"    branches (back {BACK} frames, change max_num_seqs): p50 {p50:.0f} ms, p95 {p95:.0f} ms, "
          f"max {worst:.0f} ms")
    for error in sorted({e for s in students for e in s.errors})[:3]:
        print(f"    lost: {error}")
    if worker is not None and worker.forward_passes > passes_before:
        passes = worker.forward_passes - passes_before
        stats = {k: v[-passes:] for k, v in worker.stats().items() if k.startswith("recent")}
        sizes, seconds = stats["recent_sessions"], stats["recent_seconds"]
        print(f"    model: {passes} forward passes for {len(steps)} steps; last {len(sizes)}: sessions per pass mean "
              f"{sum(sizes) / len(sizes):.1f}, max {max(sizes)}; {1e3 * sum(seconds) / len(seconds):.0f} ms per "
              f"pass; batch sizes: {' '.join(map(str, sizes))}")


def preset(name: str, runner: str) -> RunInputs:
    return RunInputs.from_scenario(load_scenario(SCENARIOS_DIR / f"{name}.toml"), runner)


def custom_setup(student: int, runner: str) -> RunInputs:
    """A different custom setup per student: 4-7 chat requests, Poisson arrivals, its own seed; default config."""
    setup = CustomSetup(requests=4 + student % 4, prompts="chat", max_tokens=24, arrivals="poisson")
    return RunInputs.from_custom(setup, Config(), runner, seed=student)


def students(inputs_of, count: int, private_caches: bool = False) -> list[Student]:
    return [Student(inputs_of(i), change=1 + i % 3, rng=random.Random(i),
                    cache=RunCache(2**30) if private_caches else None) for i in range(count)]


def warm_up(name: str, runner: str):
    """What a lecturer does before class: open the preset and run it to its end, filling the run cache."""
    start = time.perf_counter()
    lecturer = Lab(preset(name, runner))
    lecturer.run(10_000)
    print(f"    (the lecturer ran preset {name[:2]} to frame {lecturer.last} in {time.perf_counter() - start:.1f} s)")


def fake_model_class():
    run_class("1 student alone, preset 05, fake model (baseline)",
              students(lambda i: preset("05_prefix_caching", "fake"), 1))
    run_class("30 students, preset 05, fake model, no shared cache (baseline)",
              students(lambda i: preset("05_prefix_caching", "fake"), 30, private_caches=True))
    run_class("30 students, preset 05, fake model", students(lambda i: preset("05_prefix_caching", "fake"), 30),
              "p95 <= 1000 ms, 0 lost, RSS <= 3072 MB")


def real_model_same_preset():
    run_class("1 student alone, preset 05, real model (baseline)",
              students(lambda i: preset("05_prefix_caching", "model"), 1, private_caches=True))
    run_class("30 students, preset 05, real model", students(lambda i: preset("05_prefix_caching", "model"), 30),
              "p95 <= 1000 ms")
    warm_up("02_preemption", "model")
    run_class("30 students, preset 02, real model, run once by the lecturer first",
              students(lambda i: preset("02_preemption", "model"), 30), "p95 <= 1000 ms")


def real_model_custom_setups():
    run_class("1 student alone, a custom setup, real model (baseline)",
              students(lambda i: custom_setup(100, "model"), 1))
    run_class("16 students, 16 different custom setups, real model",
              students(lambda i: custom_setup(i, "model"), 16), "p95 <= 3000 ms")


CLASSES = {"fake": fake_model_class, "preset": real_model_same_preset, "custom": real_model_custom_setups}


def main():
    """Every class, or those named on the command line (fake, preset, custom)."""
    chosen = [name for name in sys.argv[1:] if name in CLASSES] or list(CLASSES)
    print(__doc__.split("\n\n")[1].replace("\n", " "), "\n")
    print(f"{'scenario':<64} {'n':>3} {'steps':>6} {'p50 ms':>7} {'p95 ms':>7} {'max ms':>7} {'lost':>5} "
          f"{'RSS MB':>7} {'wall s':>6}  target")
    for name in chosen:
        if name != "fake" and not real_model_installed():
            print(f"the real model is not installed: the {name} class is skipped")
            continue
        CLASSES[name]()
    print(f"\nrun cache after all: {shared_run_cache().stats()}")

if __name__ == "__main__":
    main()
