"""Exercise: pre-allocate blocks (the article's optimisation). The article's scheduler gives a request a new KV block
only when its last one is full; each time none is free, somebody is preempted. You decide how many blocks beyond
what it needs now a request is given when it is admitted or grows.

    python -m engine run scenarios/02_preemption.toml --scheduler starters/preallocate.py:MyPreallocation
    python -m engine check starters/preallocate.py:MyPreallocation
"""

from scheduler.article import Scheduler


class MyPreallocation(Scheduler):
    info = Scheduler.info.derive("my_preallocation")  # your kind's id, in traces and links
    names = {"en": "my block pre-allocation", "zh": "我的块预分配"}

    def extra_blocks(self, seq):
        """How many blocks beyond those its tokens need now `seq` is given, when it is admitted or grows: a whole
        number, 0 or more. The scheduler gives them only while free blocks are left (it never preempts anyone for
        them) and never more than `seq` can ever fill (its prompt plus max_tokens).

        TODO: the default is 0, a block at a time. Try one or two extra blocks while the pool is more than half
        free (`self.block_manager.num_free_blocks`, `self.block_manager.num_blocks`), none when it is tight. What
        does a reserved block cost the requests still waiting?"""
        return 0
