"""Exercise: max_num_seqs per step (the article's "adjust max_num_seqs to the observed latency"). A large batch
keeps the GPU busy but makes each step slower and fills the KV cache until requests are preempted; a small one wastes
the GPU. You decide, each step, how many requests the batch may hold.

    python -m engine run scenarios/07_smart_preemption.toml --scheduler starters/batch_size.py:MyBatchSize
    python -m engine check starters/batch_size.py:MyBatchSize
"""

from scheduler.article import Scheduler


class MyBatchSize(Scheduler):
    info = Scheduler.info.derive("my_batch_size")  # your kind's id, in traces and links
    names = {"en": "my batch size", "zh": "我的批大小"}

    def max_num_seqs_now(self):
        """How many requests this step's batch may hold, prefills and decodes alike: a whole number from 1 to
        `self.config.max_num_seqs`. You can read `self.waiting`, `self.running`, `self.block_manager.num_free_blocks`
        and `self.num_preemptions` (preemptions so far), and keep what you like of earlier steps on `self`.

        TODO: the default is always config.max_num_seqs. Try backing off: halve the limit after a step that
        preempted someone, and grow it by one after a step that did not."""
        return self.config.max_num_seqs
