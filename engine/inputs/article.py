"""The article's three demos as the InfraTech notebook ran them: its prompts, its arrivals, its ending.

The article's figures come from the notebook `llm_infer/vllm_basic_scheduler.ipynb` (CalvinXKY/InfraTech).
It seeds numpy's global generator once (`np.random.seed(0)`) and never again, so a demo's prompts depend on
every draw of the cells run before it. In the notebook's order:

1. an example prompt;
2. its fake model tried on two sequences: two draws;
3. its scheduler test: two tokenized prompts of 7 and 8 tokens, one draw per step until each has 15 tokens;
4. a static figure: the engine of demo 1 built (8 prompts) and stepped once (3 requests: 3 draws);
5. the three animations, demos 1, 2 and 3: each engine draws its prompts, then its model draws one token per
   batched request for each of the 32 steps the animation runs (frames 1 and 2 are drawn before its 30
   saved frames; saving with the inline backend triggers no further step).

A prompt is a length in 1..10 and then that many ids in 1..999; a model token is drawn in -1..999, except
that a request of 15 tokens or more gets EOS (-1), which is appended: a request ends at 16 tokens.
Arrivals: 5 requests are queued at the start; the rest are added after the step whose animation frame index
exceeds 15. That index is 0 at frames 1, 2 and 3, so it first exceeds 15 at frame 19: the late requests are
in the waiting queue of the notebook's frame 19 and are prefilled at frame 20 (arrival 19 here).

The draws are replayed with numpy (seeded the same way, in the same order); the steps of each animation are
stepped by this project's scheduler under the notebook's rules (`notebook_block_bug`, 16-token ending),
which make the notebook's decisions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.run.recipe import Request
from i18n import MessageError
from scheduler import Config, SamplingParams, Scheduler, Sequence

NOTEBOOK_SEED = 0
EOS = -1
EOS_AT_LENGTH = 15  # the notebook's fake model writes EOS once a request has this many tokens
ENDS_AT_LENGTH = EOS_AT_LENGTH + 1  # ... and appends it
INITIAL_REQUESTS = 5
LATE_ARRIVAL = 19  # added after the notebook's frame 19, prefilled from frame 20
STEPS_PER_ANIMATION = 32
NOTEBOOK_MAX_TOKENS = 256
SCHEDULER_TEST_PROMPT_LENGTHS = (7, 8)  # the two tokenized prompts of its scheduler test


@dataclass(frozen=True)
class NotebookDemo:
    num_requests: int
    num_kvcache_blocks: int
    prefill_first: bool


DEMOS = {1: NotebookDemo(8, 100, True), 2: NotebookDemo(8, 3, True), 3: NotebookDemo(10, 100, False)}


def notebook_config(demo: NotebookDemo) -> Config:
    """The notebook's engine settings; `max_model_len` = 16 ends a request where its EOS rule does."""
    return Config(max_num_seqs=3, max_num_batched_tokens=64, max_model_len=ENDS_AT_LENGTH,
                  num_kvcache_blocks=demo.num_kvcache_blocks, kvcache_block_size=10, eos=EOS,
                  prefill_first=demo.prefill_first, enable_prefix_caching=False, notebook_block_bug=True)


class NotebookDraws:
    """numpy's legacy generator, seeded as the notebook seeds it, drawn from in the notebook's ways."""

    def __init__(self):
        self.rng = np.random.RandomState(NOTEBOOK_SEED)

    def prompt(self) -> list[int]:
        length = self.rng.randint(1, 11)
        return [int(self.rng.randint(1, 1000)) for _ in range(length)]

    def model_tokens(self, seqs) -> list[int]:
        return [EOS if len(seq) >= EOS_AT_LENGTH else self.token() for seq in seqs]

    def token(self) -> int:
        return int(self.rng.randint(-1, 1000))

    def run_demo(self, demo: NotebookDemo, steps: int) -> list[list[int]]:
        """Draw a demo's prompts, then the tokens of its first `steps` steps; returns the prompts."""
        prompts = [self.prompt() for _ in range(demo.num_requests)]
        scheduler = Scheduler(notebook_config(demo))
        params = SamplingParams(temperature=0.0, max_tokens=NOTEBOOK_MAX_TOKENS)
        seqs = [Sequence(p, params, seq_id=i) for i, p in enumerate(prompts)]
        for seq in seqs[:INITIAL_REQUESTS]:
            scheduler.add(seq)
        for step in range(1, steps + 1):
            if step == LATE_ARRIVAL + 1:
                for seq in seqs[INITIAL_REQUESTS:]:
                    scheduler.add(seq)
            if scheduler.is_finished():
                continue
            batch = scheduler.schedule()
            scheduler.postprocess(batch.seqs, self.model_tokens(batch.seqs))
        return prompts


def notebook_prompts(demo_number: int) -> list[list[int]]:
    """The prompts of the notebook's demo 1, 2 or 3, from its numpy draws replayed cell by cell."""
    if demo_number not in DEMOS:
        raise MessageError("scenario.demo", value=repr(demo_number), demos=", ".join(map(str, DEMOS)))
    draws = NotebookDraws()
    draws.prompt()  # the example prompt
    skipped = 2  # the fake model tried on two short sequences
    skipped += sum(EOS_AT_LENGTH - n for n in SCHEDULER_TEST_PROMPT_LENGTHS)  # the scheduler test: a token a step
    for _ in range(skipped):
        draws.token()
    draws.run_demo(DEMOS[1], steps=1)  # the static figure
    for number in sorted(DEMOS):
        prompts = draws.run_demo(DEMOS[number], STEPS_PER_ANIMATION)
        if number == demo_number:
            return prompts
    raise AssertionError("unreachable")


def notebook_requests(demo_number: int) -> list[Request]:
    """The requests of a notebook demo: its prompts, 5 at the start and the rest after frame 19."""
    return [Request(arrival=0 if i < INITIAL_REQUESTS else LATE_ARRIVAL, prompt_token_ids=tuple(p),
                    max_tokens=NOTEBOOK_MAX_TOKENS, ignore_eos=True)
            for i, p in enumerate(notebook_prompts(demo_number))]
