"""Exercise: the waiting queue's order. Which waiting request is considered next? The article's scheduler admits from
the head of the waiting queue, first come first served (preempted requests back at the head); one long prompt at the
head holds every short one behind it. You write the key the queue is sorted by.

    python -m engine run scenarios/01_prefill_first.toml --scheduler starters/queue_order.py:MyQueueOrder
    python -m engine check starters/queue_order.py:MyQueueOrder
"""

from scheduler.article import Scheduler


class MyQueueOrder(Scheduler):
    info = Scheduler.info.derive("my_queue_order")  # your kind's id, in traces and links
    names = {"en": "my queue order", "zh": "我的等待队列顺序"}

    def waiting_key(self, seq):
        """Before admitting, the scheduler sorts the waiting queue by this key, smallest first, and admits from its
        head while the token budget and the free blocks allow. Requests with equal keys keep their order. Return a
        number or a tuple of numbers.

        TODO: the default gives every request the same key, so the queue keeps its arrival order. Try shortest job
        first: `len(seq.token_ids)` (the prompt, and the tokens already written if it was preempted) plus
        `seq.sampling_params.max_tokens`, then `seq.arrival`. Who might wait for ever?"""
        return 0
