"""An engine that checks the contract's invariants (engine/check/invariants.py) as it steps: the batch and the
pool once the scheduler has decided a step, before the model runs it; the queues, statuses and the pool again once
the step is recorded. A broken one raises `Broken` with the step it broke at, as does a hook's answer the scheduler
could not use (`BadDecision`)."""

from __future__ import annotations

from engine.check.invariants import Broken, check_batch, check_pool, check_requests
from engine.run.engine import Engine
from scheduler import SequenceStatus
from scheduler.interface import BadDecision


class CheckedEngine(Engine):
    def __init__(self, *args, **kwargs):
        self._statuses: dict[int, SequenceStatus] = {}  # each request's status when last checked
        super().__init__(*args, **kwargs)
        self._known(self.requests)

    def step(self):
        try:
            try:
                super().step()
            except BadDecision as e:  # a hook's answer the scheduler could not use: as the checker reports it
                raise Broken(e.message_id, **e.message.values) from e
            seqs = [record.seq for record in self.requests]
            check_requests(self.scheduler, seqs, self._statuses)
            check_pool(self.scheduler)
            self._known(self.requests)
        except Broken as e:
            e.step = self.step_count
            raise

    def _run(self, batch, landed_model_s):
        check_batch(batch, self.config)
        check_pool(self.scheduler)
        return super()._run(batch, landed_model_s)

    def _known(self, records):
        for record in records:
            self._statuses.setdefault(record.seq.seq_id, record.seq.status)
