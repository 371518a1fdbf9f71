"""The reference check's vLLM adapter (tools/refcheck/adapter.py): the vLLM twin (scheduler/vllm_v1/) against
vLLM's own V1 Scheduler, per release. workloads.py draws the workloads and writes the step record, twin.py steps
the twin, oracle.py steps vLLM (the only module that imports it)."""

from scheduler.vllm_v1.settings import VLLM_VERSIONS
from tools.refcheck.adapter import SystemAdapter
from tools.refcheck.vllm.twin import run_twin
from tools.refcheck.vllm.workloads import FIELDS, MODES, bench_workload, random_workload, smaller

ADAPTER = SystemAdapter("vllm", VLLM_VERSIONS, MODES, FIELDS, ("schedule()", "update_from_output()"), "preempted",
                        random_workload, smaller, run_twin, bench_workload, "tools.refcheck.vllm.oracle:VllmOracle")
