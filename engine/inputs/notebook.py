"""The article's three demos as the InfraTech notebook ran them: its prompts, its arrivals, its ending.

The article's figures come from the notebook `llm_infer/vllm_basic_scheduler.ipynb` (CalvinXKY/InfraTech).
It seeds numpy's global generator once (`np.random.seed(0)`) and never again, so a demo's prompts depend on
every draw of the cells run before it. In the notebook's order:

1. an example prompt;
2. its fake model tried on two sequences: two draws;
3. its scheduler test: two tokenized prompts of 7 and 8 tokens, one draw per step until each has 15 tokens;
4. a static figure: the engine of demo 1 built (8 prompts) and stepped once (3 requests: 3 draws);
5. the three animations, demos 1, 2 and 3: each engine draws its prompts, then its model draws one token per
   batched request (none for an EOS) for each of the 32 steps its animation runs. Frame 1 is drawn by the
   visualizer's constructor; `to_jshtml()` saves the animation, whose `_init_draw` (no init_func: the first
   frame index again) draws frame 2 and whose 30 saved frames are frames 3 to 32. The figure the inline
   backend shows after the cell is printed while the canvas is saving, which keeps the animation from
   starting: no further step.

A prompt is a length in 1..10 and then that many ids in 1..999; a model token is drawn in -1..999, except
that a request of 15 tokens or more gets EOS (-1), which is appended: a request ends at 16 tokens.
Arrivals: 5 requests are queued at the start; the rest are queued at the end of the step whose animation
index exceeds 15. The index is 0 at frames 1, 2 and 3, so that is step 19: the notebook's frame 19 lists
them as waiting, and step 20 is the first that can schedule them. This engine queues a request at the start
of the step after its arrival, so arrival 19 makes the same decisions; `notebook_panels` maps a frame to
what the notebook draws, these late requests included.

The draws are replayed with numpy (seeded the same way, in the same order); the steps of each animation are
stepped by this project's scheduler under the notebook's rules (`notebook_block_bug`, 16-token ending),
which make the notebook's decisions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from engine.run.frame import Frame
from engine.run.recipe import Request
from i18n import MessageError
from scheduler import Config, SamplingParams, Sequence, make_scheduler
from scheduler.factory import OWN_WORKLOADS

NOTEBOOK = "notebook"  # this workload's name in a scenario file (`kind = "notebook"` under [[workload.generate]])
# The scheduler the notebook ran: the kind that declares this workload its own (SchedulerInfo.workload)
NOTEBOOK_KIND = next(kind for kind, workload in OWN_WORKLOADS.items() if workload == NOTEBOOK)

NOTEBOOK_SEED = 0
EOS = -1
EOS_AT_LENGTH = 15  # the notebook's fake model writes EOS once a request has this many tokens
ENDS_AT_LENGTH = EOS_AT_LENGTH + 1  # ... and appends it
INITIAL_REQUESTS = 5
LATE_ARRIVAL = 19  # queued at the end of the notebook's step 19, scheduled from step 20
STATIC_FIGURE_STEPS = 1  # its static figure: demo 1's engine stepped once
STEPS_PER_ANIMATION = 32  # frames 1 and 2, then its 30 saved frames
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
        scheduler = make_scheduler(NOTEBOOK_KIND, notebook_config(demo))
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
    draws.run_demo(DEMOS[1], STATIC_FIGURE_STEPS)  # the static figure
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


class NotebookPanels(NamedTuple):
    """The two panels the notebook draws for a frame, each a list of (request id, tokens), top to bottom."""
    executing: list[tuple[int, int]]
    waiting: list[tuple[int, int]]


def notebook_panels(frame: Frame | None) -> NotebookPanels:
    """What the notebook draws at the frame of the same number (None: a frame after this run ended, where the
    notebook draws empty panels). Its executing panel is the step's batch; its waiting panel lists the
    waiting queue (where requests arriving during the step already are, as in the notebook), then the running
    requests the step left out."""
    if frame is None:
        return NotebookPanels([], [])
    length = {r.id: r.num_tokens for r in frame.requests}
    left_out = [i for i in frame.running if i not in frame.batch.seq_ids]
    return NotebookPanels([(i, length[i]) for i in frame.batch.seq_ids],
                          [(i, length[i]) for i in (*frame.waiting, *left_out)])
