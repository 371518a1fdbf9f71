"""The reference check's loop: random workloads per mode, each run by the system's own scheduler (the oracle)
and by the twin, compared step record by step record; the first difference is shrunk and printed."""

from __future__ import annotations

import json
import random
import time

from tools.refcheck.adapter import Adapter, Oracle
from tools.refcheck.record import describe, first_difference
from tools.refcheck.shrink import shrink


def check_mode(adapter: Adapter, oracle: Oracle, mode: str, count: int, seed: int,
               identical_traces: list | None = None) -> bool:
    """`count` workloads of `mode`; prints "mode: N/N workloads identical (T s)", or the first difference with
    its workload shrunk. The identical workloads, with the oracle's records, go to `identical_traces`."""
    release = oracle.release
    rng = random.Random(f"{seed}:{mode}")
    start, identical = time.perf_counter(), 0
    for n in range(count):
        workload = adapter.random_workload(rng, mode)
        expected = oracle.run(workload)
        if first_difference(expected, adapter.run_twin(workload, release), adapter.fields) is None:
            identical += 1
            if identical_traces is not None:
                identical_traces.append({"workload": workload, "steps": expected})
            continue
        report_difference(adapter, oracle, mode, n, workload)
        print(f"{adapter.system} {release} {mode}: {identical}/{n + 1} workloads identical before the first "
              "difference")
        return False
    print(f"{adapter.system} {release} {mode}: {identical}/{count} workloads identical "
          f"({time.perf_counter() - start:.0f} s)")
    return True


def report_difference(adapter: Adapter, oracle: Oracle, mode: str, n: int, workload: dict) -> None:
    release, fields = oracle.release, adapter.fields

    def differs(w: dict) -> bool:
        return first_difference(oracle.run(w), adapter.run_twin(w, release), fields) is not None

    small = shrink(workload, adapter.smaller, differs)
    expected, actual = oracle.run(small), adapter.run_twin(small, release)
    step, field = first_difference(expected, actual, fields)
    print(f"{mode}: workload {n} differs at step {step + 1} ({field}); shrunk workload:\n{json.dumps(small)}")
    print(f"  {adapter.system} {release}: {describe(expected, step, fields)}")
    print(f"  twin: {describe(actual, step, fields)}")
