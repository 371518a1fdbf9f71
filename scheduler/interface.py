"""The data every scheduler shares with the engine (vLLM's `sched/interface.py` and `sched/output.py`): a step's
`Batch`, the refusal of a request that could never run, and how requests are queued again into a new pool. The
calls a scheduler offers and what it declares are the contract in scheduler/contract.py."""

from dataclasses import dataclass
from typing import NamedTuple

from i18n import Message, MessageError
from scheduler.config import Config
from scheduler.events import Aborted, Event
from scheduler.sequence import Sequence, SequenceStatus

POOL_SHAPE = ("num_kvcache_blocks", "kvcache_block_size")  # a different pool needs a new Scheduler


def check_pool_shape(old: Config, new: Config):
    """`reconfigure` keeps the pool: a config that changes its shape is refused (ValueError)."""
    changed = [f for f in POOL_SHAPE if getattr(new, f) != getattr(old, f)]
    if changed:
        raise ValueError(f"{changed} change the KV pool: build a new Scheduler and requeue() its requests")


class RequestRejected(MessageError):
    """A request that could never run under this configuration."""


class BadDecision(MessageError):
    """A decision a scheduler leaves to a method a scheduler of one's own overrides (a hook) came back unusable: the
    hook, what it returned and what it may return, in words. The checker reports it as the invariant it breaks
    (engine/check/invariants.py)."""


def refuse(seq: Sequence, reason: str, **values):
    """End `seq` ABORTED for `reason` (a message key) and raise the refusal."""
    rejected = RequestRejected("abort.refused", id=seq.seq_id, reason=Message(reason, **values))
    seq.status, seq.finish_reason = SequenceStatus.ABORTED, rejected.message
    raise rejected


def check_new(seq: Sequence, config: Config, held: bool):
    """What both schedulers refuse of a request being added, as vLLM's input checks do: one the scheduler already
    `held` (ValueError, nothing changed), an empty prompt or one of max_model_len tokens or more (refused)."""
    if held:
        raise ValueError(f"request {seq.seq_id} is already {seq.status.name.lower()} in this scheduler; "
                         "add a request once (a new Sequence to run the prompt again)")
    n = len(seq.token_ids)
    if n == 0:
        refuse(seq, "abort.empty_prompt")
    if n >= config.max_model_len:
        refuse(seq, "abort.no_room", n=n, max_model_len=config.max_model_len)


class BlockCopy(NamedTuple):
    """One KV block copied from a unit of a pool to a unit of a pool (`contract.GPU_POOL` or a declared
    `SidePool`'s name), by the runner before the step's model call: V0's blocks_to_swap_out are (gpu, b, cpu, c),
    its blocks_to_swap_in (cpu, c, gpu, b)."""
    src_pool: str
    src_block: int
    dst_pool: str
    dst_block: int


@dataclass(frozen=True, slots=True)
class Batch:
    """What runs this step, and the events of deciding it. Unpacks as `seqs, is_prefill` like nano-vllm's
    schedule() result. `block_copies`: KV blocks the runner copies between pools before it runs the batch (in
    order; a step may copy blocks and run nothing)."""
    seqs: list[Sequence]
    num_scheduled_tokens: tuple[int, ...]
    kind: str  # "prefill", "decode", "mixed" or "idle"
    events: tuple[Event, ...] = ()
    block_copies: tuple[BlockCopy, ...] = ()

    @property
    def is_prefill(self) -> bool:
        return self.kind in ("prefill", "mixed")

    @property
    def num_tokens(self) -> int:
        return sum(self.num_scheduled_tokens)

    def __iter__(self):
        return iter((self.seqs, self.is_prefill))

    def without(self, seq_ids: set[int]) -> "Batch":
        """This batch less the sequences in `seq_ids` (overlapped: those that finished late before it ran)."""
        kept = [(s, n) for s, n in zip(self.seqs, self.num_scheduled_tokens, strict=True) if s.seq_id not in seq_ids]
        return Batch([s for s, _ in kept], tuple(n for _, n in kept), self.kind if kept else "idle", self.events,
                     self.block_copies)


def requeue(scheduler, seqs: list[Sequence]) -> list[Aborted]:
    """Queue requests that lost their KV cache with another scheduler's pool (the engine rebuilt it under a new
    config) into `scheduler`, in the order given, each to be prefilled again from its first token. Returns the
    `aborted` events of those that no longer fit."""
    aborted = []
    for seq in seqs:
        seq.block_table, seq.block_hashes, seq.draft_token_ids = [], [], []
        seq.num_computed_tokens = seq.num_scheduled_tokens = 0
        try:
            scheduler.add(seq)
        except RequestRejected as rejected:
            aborted.append(Aborted(seq.seq_id, rejected.message))
    return aborted
