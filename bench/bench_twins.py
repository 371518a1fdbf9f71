"""Each twin's scheduling time per step against its system's own scheduler, on the same trace, in one process,
through the reference-check adapters (tools/refcheck/adapter.py).

    python -m bench.bench_twins [SYSTEM] [--requests 300] [--repeats 3]

A system is measured where its oracle environment is this one (`make vllm-check` and `make sglang-check` end with
it: `.vllm-venv/bin/python -m bench.bench_twins vllm`); elsewhere it is skipped, saying so (with no SYSTEM: every
system in tools/refcheck/adapter.py's SYSTEMS). The trace is the adapter's `bench_workload` (tools/refcheck/
bench_trace.py's requests: arrivals over 40 steps, prompts of 32..512 tokens sharing stems, outputs up to 256, a
pool that preempts or retracts). Both sides are driven by the adapter with the same fake model and must make the
same decisions at every step (checked). Timed per step: the two scheduler calls the adapter's `timed` names (the
fake model and the records are outside the clock); best of `--repeats` runs. Target: the twin at most 0.5x.
"""

from __future__ import annotations

import argparse

from tools.refcheck.adapter import SYSTEMS, Adapter, load
from tools.refcheck.record import first_difference

MAX_STEPS = 100_000


def best(run, repeats: int) -> tuple[list, list]:
    """The records and the per-step (decide, outputs) seconds of the fastest of `repeats` runs."""
    results = []
    for _ in range(repeats):
        timings = []
        records = run(timings)
        results.append((sum(a + b for a, b in timings), records, timings))
    _, records, timings = min(results, key=lambda r: r[0])
    return records, timings


def bench(adapter: Adapter, num_requests: int, repeats: int) -> None:
    try:
        oracle = adapter.open_oracle()
    except ImportError as e:  # `make bench` runs in the app's environment, which holds no system
        print(f"{adapter.system}: skipped, its oracle cannot be imported here ({e})")
        return
    name, release = adapter.system, oracle.release
    workload = adapter.bench_workload(num_requests)
    system_records, system_t = best(lambda t: oracle.run(workload, MAX_STEPS, t), repeats)
    twin_records, twin_t = best(lambda t: adapter.run_twin(workload, release, MAX_STEPS, t), repeats)
    difference = first_difference(system_records, twin_records, adapter.fields)
    if difference:
        raise SystemExit(f"the twin and {name} {release} part at step {difference[0] + 1} ({difference[1]}): "
                         "no comparison")
    steps = len(system_records)
    pressure = adapter.fields.index(adapter.pressure_field)
    sent_back = sum(len(r[pressure]) for r in system_records)
    print(f"{name} {release}, trace: {num_requests} requests, {steps} steps, {sent_back} {adapter.pressure_field}, "
          "identical decisions")
    for label, part in ((adapter.timed[0], 0), (adapter.timed[1], 1), ("both", None)):
        s = sum(t[part] if part is not None else sum(t) for t in system_t) / steps * 1e6
        w = sum(t[part] if part is not None else sum(t) for t in twin_t) / steps * 1e6
        print(f"{label:22s} {name} {s:8.1f} us/step   twin {w:8.1f} us/step   twin/{name} {w / s:.2f}x")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("system", nargs="?", choices=tuple(SYSTEMS), help="default: every system")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for system in [args.system] if args.system else SYSTEMS:
        bench(load(system), args.requests, args.repeats)


if __name__ == "__main__":
    main()
