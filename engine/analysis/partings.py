"""Where the decisions of runs on one workload part: the steps at which two to six configs, stepped side by side
(the policy lab's lockstep stages), decided differently, and what each of them did there.

A step's decisions are read from its frame's events and batch: which requests it preempted or retracted (SGLang's
word: sent back when the decode runs out of room), admitted (or resumed
after a preemption, with how many tokens it prefilled) and which prefill chunks it scheduled for requests already
running, a prompt's last chunk included (an admission's first chunk is told by the admission, its token count being
the chunk's). Decodes are left out: they
follow from who is running, so they differ after a parting without being decisions of their own. A step parts
the runs when their decisions there are not all the same; each run is then told by the decisions that not every
run made (what they share is said by neither), and by why it did so, as it said it: its events that sent a
request back or held one back (`WHY`, the numbers the scheduler used).

    for parting in partings([tail.frames, smart.frames]):
        parting.step, parting.own  # 7, ((Decision("preempt", 4, 0),), (Decision("preempt", 2, 0),))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.run.frame import BatchView, Frame
from scheduler.events import Event

KINDS = ("preempt", "retract", "resume", "admit", "chunk")  # the order a run's decisions are told in
SENT_BACK = ("preempt", "retract")  # decisions that compute no tokens (num_tokens 0)
WHY = ("preempted", "retracted", "pass_ended", "blocked")  # a step's events that say why requests left or waited


@dataclass(frozen=True)
class Decision:
    kind: str  # one of KINDS
    seq_id: int
    num_tokens: int  # prefilled this step (0 for a preemption)

    def sort_key(self) -> tuple[int, int, int]:
        return KINDS.index(self.kind), self.seq_id, self.num_tokens


@dataclass(frozen=True)
class Parting:
    """A step whose decisions differ between the runs: each run's decisions that not every run made (empty when
    it made none of its own), each run's batch, which tells what a run without decisions of its own did, and each
    run's events of the step that say why (`WHY`, in the order the scheduler recorded them)."""
    step: int
    own: tuple[tuple[Decision, ...], ...]
    batches: tuple[BatchView, ...]
    why: tuple[tuple[Event, ...], ...] = ()


def prefill_chunks(frame: Frame) -> dict[int, int]:
    """Request id -> tokens of each prefill chunk in `frame`'s batch: one of more than one token besides its drafts,
    or one still inside its prompt (a last chunk of one token). Empty for a trace written before the batch kept
    where each chunk starts."""
    batch = frame.batch
    if len(batch.num_computed) != len(batch.seq_ids):
        return {}
    drafts = batch.num_drafts or (0,) * len(batch.seq_ids)
    return {rid: n for rid, n, computed, d in zip(batch.seq_ids, batch.num_tokens, batch.num_computed, drafts,
                                                   strict=True)
            if n - d > 1 or computed < frame.requests[rid].num_prompt_tokens}


def decisions(frame: Frame) -> frozenset[Decision]:
    """The scheduling decisions of the step that led to `frame`, from its events and its batch."""
    found = set()
    admitted = {event.seq_id for event in frame.events if event.kind == "admitted"}
    chunks = {event.seq_id: event.num_tokens for event in frame.events if event.kind == "chunk"}
    for event in frame.events:
        if event.kind == "preempted":
            found.add(Decision("preempt", event.seq_id, 0))
        elif event.kind == "retracted":
            found.add(Decision("retract", event.seq_id, 0))
        elif event.kind == "admitted":
            found.add(Decision("resume" if event.recompute else "admit", event.seq_id, event.num_tokens))
    for rid, n in (chunks | prefill_chunks(frame)).items():
        if rid not in admitted:
            found.add(Decision("chunk", rid, n))
    return frozenset(found)


def partings(runs: Sequence[Sequence[Frame]]) -> list[Parting]:
    """Every step, up to the shortest run's last, at which the runs' decisions differ. A run that is over makes
    no decisions: steps past the shortest run's end part nothing."""
    found = []
    for step in range(1, min(len(frames) for frames in runs)):
        made = [decisions(frames[step]) for frames in runs]
        if len(set(made)) == 1:
            continue
        shared = frozenset.intersection(*made)
        found.append(Parting(step, tuple(tuple(sorted(m - shared, key=Decision.sort_key)) for m in made),
                             tuple(frames[step].batch for frames in runs),
                             tuple(tuple(e for e in frames[step].events if e.kind in WHY) for frames in runs)))
    return found
