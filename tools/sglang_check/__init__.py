"""The SGLang twin (scheduler/sglang/) against SGLang 0.5.23's own Scheduler: workloads.py draws the workloads,
the fake model and the step record, twin_run.py steps the twin, sglang_run.py steps SGLang (the only module that
imports it), __main__.py is `make sglang-check`.

`ADAPTER` has the shape of the reference-check harness's adapter (branch refcheck, tools/refcheck/adapter.py:
system, releases, modes, fields, random_workload, smaller, run_twin, open_oracle), so that this package can move
under tools/refcheck/sglang/ with one line in its SYSTEMS once that harness is in main."""

from tools.sglang_check.twin_run import run_twin
from tools.sglang_check.workloads import FIELDS, MODES, SGLANG_RELEASE, random_workload, smaller


class SglangAdapter:
    system = "sglang"
    releases = (SGLANG_RELEASE,)
    modes = MODES
    fields = FIELDS
    random_workload = staticmethod(random_workload)
    smaller = staticmethod(smaller)
    run_twin = staticmethod(run_twin)

    def open_oracle(self):
        from tools.sglang_check.sglang_run import SglangOracle  # SGLang is installed in the oracle environment only
        return SglangOracle()


ADAPTER = SglangAdapter()
