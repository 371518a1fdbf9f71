"""Exercise: choose the preemption victim (the article's optimisation "choose the victim by progress, waiting time
and priority"). The article's scheduler (scheduler/article/scheduler.py) does everything else; you write one method.
Try it on scenarios/smart_victim_long_prompt.toml: as it is, it recomputes 149 tokens; a good victim, about half.

    python -m engine run scenarios/smart_victim_long_prompt.toml --scheduler starters/victim.py:MyVictim
    python -m engine check starters/victim.py:MyVictim
"""

from scheduler.article import Scheduler


class MyVictim(Scheduler):
    info = Scheduler.info.derive("my_victim")  # your kind's id, in traces and links
    names = {"en": "my victim choice", "zh": "我的抢占对象选择"}

    def choose_victim(self, requester):
        """A request needs a KV block for its next token and none is free: which running request gives up its
        blocks (it goes back to the waiting queue and recomputes its tokens later)? Return one of `self.running`
        (the running requests not batched yet this step; `requester` is not among them), or None: `requester`
        itself leaves. Called again while blocks are still short.

        TODO: the default below takes the tail of the running queue, the request admitted last, however close it
        is to finishing. Choose the one whose loss costs least: e.g. the least progress toward its max_tokens
        (`seq.num_completion_tokens`, `seq.sampling_params.max_tokens`), then the latest `seq.arrival`."""
        return self.running[-1] if self.running else None
