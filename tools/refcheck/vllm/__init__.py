"""The reference check's vLLM adapter (tools/refcheck/adapter.py): the vLLM twin (scheduler/vllm_v1/) against
vLLM's own V1 Scheduler, per release. workloads.py draws the workloads and writes the step record, twin.py steps
the twin, oracle.py steps vLLM (the only module that imports it)."""

from scheduler.vllm_v1.settings import VLLM_VERSIONS
from tools.refcheck.vllm.twin import run_twin
from tools.refcheck.vllm.workloads import FIELDS, MODES, bench_workload, random_workload, smaller


class VllmAdapter:
    system = "vllm"
    releases = VLLM_VERSIONS
    modes = MODES
    fields = FIELDS
    timed = ("schedule()", "update_from_output()")
    pressure_field = "preempted"
    random_workload = staticmethod(random_workload)
    smaller = staticmethod(smaller)
    run_twin = staticmethod(run_twin)
    bench_workload = staticmethod(bench_workload)

    def open_oracle(self):
        from tools.refcheck.vllm.oracle import VllmOracle  # vLLM is installed in the oracle environment only
        return VllmOracle()


ADAPTER = VllmAdapter()
