"""Overlapped scheduling for the article's scheduler (vLLM's async scheduling, `sched/async_scheduler.py`): a
step goes to the model and is postprocessed ahead, a placeholder for each token it will write (`launch`); its
real tokens land after the next step was scheduled (`land`), so a request that wrote EOS finishes one step late.

A mixin of scheduler.article.scheduler.Scheduler, which provides `postprocess`, its queues, `config` and `_end` (a
request leaves, its blocks freed). The vLLM twin lands its steps its own way (scheduler/vllm_v1/scheduler.py)."""

from collections import deque
from typing import TYPE_CHECKING

from scheduler.config import Config
from scheduler.events import Event
from scheduler.sequence import Sequence, SequenceStatus


class LandsLate:
    """`launch` and `land` for a scheduler whose tokens may land a step after they were postprocessed."""
    # What the scheduler provides
    config: Config
    running: deque[Sequence]
    waiting: deque[Sequence]

    if TYPE_CHECKING:
        def postprocess(self, seqs: list[Sequence], token_ids: list) -> list[Event]: ...

        def _end(self, seq: Sequence, status: SequenceStatus, reason: str) -> tuple[int, ...]: ...

    def launch(self, seqs: list[Sequence], outputs: list) -> list[Event]:
        """The batch went to the model: postprocess it ahead, `outputs` holding PLACEHOLDER
        for each token it will write (None for a prefill chunk), replaced when it lands (`land`)."""
        return self.postprocess(seqs, outputs)

    def land(self, landed: list[tuple[Sequence, int, int]]) -> tuple[list[tuple[Sequence, tuple[int, ...]]],
                                                                   list[Sequence]]:
        """The step in flight returned: put each (sequence, index, token) in place of its
        placeholder. A request whose token is EOS finishes now (`_land_eos`). Returns those, each with the
        blocks freed for it, and those already ended by a length limit at that token (EOS is now the reason)."""
        for seq, index, token in landed:
            seq.token_ids[index] = token
        late, eos_at_limit = [], []
        for seq, index, token in landed:
            if token == self.config.eos and not seq.sampling_params.ignore_eos:
                freed = self._land_eos(seq, index)
                eos_at_limit.append(seq) if freed is None else late.append((seq, freed))
        return late, eos_at_limit

    def _land_eos(self, seq: Sequence, index: int) -> tuple[int, ...] | None:
        """The token at `index`, known only after the next step was scheduled, is EOS. A request still going
        finishes now, one step late: the tokens after the EOS are dropped, it leaves its queue and its blocks
        are freed (returned, last first). One already ended by the same token (a length limit) only takes
        "eos" as its reason (returns None)."""
        if seq.is_done:
            seq.finish_reason = "eos"
            return None
        del seq.token_ids[index + 1:]
        (self.running if seq.status is SequenceStatus.RUNNING else self.waiting).remove(seq)
        seq.num_scheduled_tokens = 0
        return self._end(seq, SequenceStatus.FINISHED, "eos")
