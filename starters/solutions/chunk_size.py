"""A solution of starters/chunk_size.py: no chunk larger than a quarter of the step's budget."""

from scheduler.article import Scheduler


class QuarterChunks(Scheduler):
    info = Scheduler.info.derive("quarter_chunks")
    names = {"en": "quarter-budget chunks", "zh": "四分之一预算分块"}

    def chunk_size(self, seq, to_compute, budget):
        """At most a quarter of max_num_batched_tokens (at least one token), so that several prompts share a step."""
        return min(to_compute, budget, max(1, self.config.max_num_batched_tokens // 4))
