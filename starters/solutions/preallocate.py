"""A solution of starters/preallocate.py: a block ahead while the pool is more than half free."""

from scheduler.article import Scheduler


class BlockAhead(Scheduler):
    info = Scheduler.info.derive("block_ahead")
    names = {"en": "a block ahead", "zh": "预留一块"}

    def extra_blocks(self, seq):
        """One extra block while more than half the pool is free, none when it is tight (a reserved block is one a
        waiting request cannot be admitted with)."""
        pool = self.block_manager
        return 1 if 2 * pool.num_free_blocks > pool.num_blocks else 0
