"""The article's scheduler with a victim of your own choosing: the exercise of the article's section on
optimisations ("choose the preemption victim by progress, waiting time and priority"), solved (starters/victim.py is
the exercise). The article's scheduler (scheduler/article/, nano-vllm's algorithm) does everything else; this class
changes one decision. On scenarios/smart_victim_long_prompt.toml it recomputes 76 tokens where the tail recomputes 149.

    python -m engine check starters/smart_victim.py:SmartVictim
    python -m engine run scenarios/smart_victim_long_prompt.toml --scheduler starters/smart_victim.py:SmartVictim
"""

from scheduler.article import Scheduler


class SmartVictim(Scheduler):
    # Your kind: its id (in traces and links) and, optionally, its name in each language
    info = Scheduler.info.derive("smart_victim")
    names = {"en": "smart victim", "zh": "聪明的牺牲者"}

    def choose_victim(self, requester):
        """Which running request gives up its blocks so that `requester` can grow (None: `requester` itself
        leaves). The article's default is the tail of the running queue; here, the one that has made the least
        progress toward its max_tokens (least work lost when it is recomputed), then the least urgent (largest
        priority value), then the latest to arrive."""
        def lost_if_preempted(seq):
            return (seq.num_completion_tokens / seq.sampling_params.max_tokens, -seq.priority, -seq.arrival)
        return min(self.running, key=lost_if_preempted, default=None)
