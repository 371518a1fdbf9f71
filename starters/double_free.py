"""A broken scheduler, on purpose: it frees a finished request's blocks twice. `python -m engine check` finds the
smallest workload that shows it and names the invariant it breaks:

    python -m engine check starters/double_free.py:DoubleFree
"""

from scheduler.article import Scheduler


class DoubleFree(Scheduler):
    info = Scheduler.info.derive("double_free")

    def _end(self, seq, status, reason):
        table = list(seq.block_table)
        freed = super()._end(seq, status, reason)  # frees its blocks ...
        seq.block_table = table
        self.block_manager.deallocate(seq)  # ... and the bug: frees them again
        return freed
