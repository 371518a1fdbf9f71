"""The reference check's vLLM V0 adapter (tools/refcheck/adapter.py): the V0 twin (scheduler/vllm_v0/) against vLLM
0.10.2's own V0 Scheduler. workloads.py draws the workloads and writes the step record, twin.py steps the twin,
oracle.py steps V0 (the only module that imports it)."""

from tools.refcheck.adapter import SystemAdapter
from tools.refcheck.vllm_v0.twin import run_twin
from tools.refcheck.vllm_v0.workloads import FIELDS, MODES, bench_workload, random_workload, smaller

ADAPTER = SystemAdapter("vllm_v0", ("0.10.2",), MODES, FIELDS, ("schedule()", "process outputs"), "preempted",
                        random_workload, smaller, run_twin, bench_workload, "tools.refcheck.vllm_v0.oracle:V0Oracle")
