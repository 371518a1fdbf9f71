"""The reference check's SGLang adapter (tools/refcheck/adapter.py): the SGLang twin (scheduler/sglang/) against
SGLang 0.5.23's own Scheduler. workloads.py draws the workloads, the fake model and the step record, twin.py steps
the twin, oracle.py steps SGLang (the only module that imports it; stub_modules.py serves two packages SGLang
imports and never calls, constraints.txt keeps the CPU torch in its environment, which `make sglang-check`
builds)."""

from tools.refcheck.adapter import SystemAdapter
from tools.refcheck.sglang.twin import run_twin
from tools.refcheck.sglang.workloads import FIELDS, MODES, SGLANG_RELEASE, bench_workload, random_workload, smaller

ADAPTER = SystemAdapter("sglang", (SGLANG_RELEASE,), MODES, FIELDS, ("get_next_batch_to_run", "process_batch_result"),
                        "retracted", random_workload, smaller, run_twin, bench_workload,
                        "tools.refcheck.sglang.oracle:SglangOracle")
