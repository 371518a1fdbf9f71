"""Exercise: a chunk size per request, under chunked prefill. A prompt longer than the step's token budget is
prefilled in chunks over several steps; the article's scheduler gives each prompt as many tokens as the budget has
left, so the first long prompt takes the whole step. You decide each request's chunk.

    python -m engine run scenarios/vllm_vs_article.toml --scheduler starters/chunk_size.py:MyChunkSize
    python -m engine check starters/chunk_size.py:MyChunkSize
"""

from scheduler.article import Scheduler


class MyChunkSize(Scheduler):
    info = Scheduler.info.derive("my_chunk_size")  # your kind's id, in traces and links
    names = {"en": "my chunk size", "zh": "我的分块大小"}

    def chunk_size(self, seq, to_compute, budget):
        """How many of the `to_compute` tokens `seq` still has to prefill it computes this step; `budget` is the
        step's token budget left. Return a whole number from 1; the scheduler clamps it to `to_compute` and
        `budget`. Called only under chunked_prefill.

        TODO: the default takes all it can. Try a cap, e.g. a quarter of `self.config.max_num_batched_tokens`, so
        that several prompts, and the decodes of mixed batches, share each step."""
        return min(to_compute, budget)
