"""The reference check's vLLM V0 adapter (tools/refcheck/adapter.py): the V0 twin (scheduler/vllm_v0/) against vLLM
0.10.2's own V0 Scheduler. workloads.py draws the workloads and writes the step record, twin.py steps the twin,
oracle.py steps V0 (the only module that imports it)."""

from tools.refcheck.vllm_v0.twin import run_twin
from tools.refcheck.vllm_v0.workloads import FIELDS, MODES, bench_workload, random_workload, smaller


class VllmV0Adapter:
    system = "vllm_v0"
    releases = ("0.10.2",)
    modes = MODES
    fields = FIELDS
    timed = ("schedule()", "process outputs")
    pressure_field = "preempted"
    random_workload = staticmethod(random_workload)
    smaller = staticmethod(smaller)
    run_twin = staticmethod(run_twin)
    bench_workload = staticmethod(bench_workload)

    def open_oracle(self):
        from tools.refcheck.vllm_v0.oracle import V0Oracle  # V0's source is in the oracle environment only
        return V0Oracle()


ADAPTER = VllmV0Adapter()
