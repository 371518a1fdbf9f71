"""A solution of starters/batch_size.py: back off after a preemption, grow again slowly."""

from scheduler.article import Scheduler


class BackOff(Scheduler):
    info = Scheduler.info.derive("back_off")
    names = {"en": "batch back-off", "zh": "批大小退避"}

    def __init__(self, config):
        super().__init__(config)
        self.limit = config.max_num_seqs
        self.preemptions_seen = 0

    def max_num_seqs_now(self):
        """Half the last limit after a step that preempted, one more after one that did not, within 1 and
        config.max_num_seqs (which a run may change)."""
        if self.num_preemptions > self.preemptions_seen:
            self.limit //= 2
        else:
            self.limit += 1
        self.preemptions_seen = self.num_preemptions
        self.limit = max(1, min(self.limit, self.config.max_num_seqs))
        return self.limit
