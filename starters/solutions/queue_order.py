"""A solution of starters/queue_order.py: shortest job first."""

from scheduler.article import Scheduler


class ShortestFirst(Scheduler):
    info = Scheduler.info.derive("shortest_first")
    names = {"en": "shortest job first", "zh": "最短作业优先"}

    def waiting_key(self, seq):
        """The shortest job first (its prompt plus max_tokens), then the earliest arrival. A long request still ends
        once the short ones are served, but under a steady stream of them it may wait long."""
        return (seq.num_prompt_tokens + seq.sampling_params.max_tokens, seq.arrival)
