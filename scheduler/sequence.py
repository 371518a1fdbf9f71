"""A request as the scheduler sees it: its tokens, how many have KV in the cache, and its block table."""

from dataclasses import dataclass
from enum import Enum, auto
from itertools import count

from i18n import MessageError
from scheduler.speculative import NgramIndex

# Overlapped scheduling: a token still being computed. No runner writes it and no config uses it as EOS.
PLACEHOLDER = -(2**31)


class SequenceStatus(Enum):
    WAITING = auto()
    RUNNING = auto()
    FINISHED = auto()
    ABORTED = auto()


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 1.0
    max_tokens: int = 64
    ignore_eos: bool = False
    seed: int | None = None
    # vLLM's SamplingParams: tokens that end the request as EOS does (the vLLM twin reads them), and the outputs
    # before which the sampler never picks a stop token (EOS or one of these).
    stop_token_ids: tuple[int, ...] = ()
    min_tokens: int = 0

    def __post_init__(self):
        if type(self.stop_token_ids) is not tuple or not all(type(t) is int for t in self.stop_token_ids):
            raise MessageError("workload.stop_token_ids", value=repr(self.stop_token_ids))
        if type(self.min_tokens) is not int or not 0 <= self.min_tokens <= self.max_tokens:
            raise MessageError("workload.min_tokens", value=repr(self.min_tokens), most=self.max_tokens)
        if self.temperature < 0:
            raise MessageError("workload.temperature", value=repr(self.temperature))

    def banned_tokens(self, num_outputs: int, eos: int) -> tuple[int, ...]:
        """The tokens a sampler must not pick as output number `num_outputs` + 1: below min_tokens, the stop tokens
        (EOS unless ignore_eos, and stop_token_ids), as vLLM's min-tokens logits processor masks them."""
        if num_outputs >= self.min_tokens:
            return ()
        return (*self.stop_token_ids, *(() if self.ignore_eos else (eos,)))
        if type(self.max_tokens) is not int or self.max_tokens < 1:
            raise MessageError("workload.max_tokens", value=repr(self.max_tokens))


class Sequence:
    """One request. `num_computed_tokens` counts tokens whose K/V is already in the cache (prefix hits
    included); `num_scheduled_tokens` is how many more tokens the current step computes. Only the Scheduler
    changes a sequence once it is added."""

    __slots__ = ("seq_id", "status", "token_ids", "num_prompt_tokens", "sampling_params", "priority", "arrival",
                 "block_table", "num_computed_tokens", "num_scheduled_tokens", "draft_token_ids",
                 "num_cached_tokens", "num_preemptions", "finish_reason", "block_hashes", "ngram_index")
    _ids = count()

    def __init__(self, token_ids: list[int], sampling_params: SamplingParams | None = None,
                 priority: int = 0, arrival: int = 0, seq_id: int | None = None):
        self.seq_id = next(Sequence._ids) if seq_id is None else seq_id
        self.status = SequenceStatus.WAITING
        self.token_ids = list(token_ids)
        self.num_prompt_tokens = len(self.token_ids)
        self.sampling_params = sampling_params or SamplingParams()
        self.priority = priority  # lower value runs first, as in vLLM's priority scheduling
        self.arrival = arrival
        self.block_table: list[int] = []
        self.num_computed_tokens = 0
        self.num_scheduled_tokens = 0
        self.draft_token_ids: list[int] = []  # speculative tokens computed this step after the last real one
        self.num_cached_tokens = 0  # prefix-cache hit tokens at the latest admission
        self.num_preemptions = 0
        self.finish_reason: str | None = None
        self.block_hashes: list[int] = []  # chained hashes of its full blocks, for the prefix cache (computed once)
        self.ngram_index: NgramIndex | None = None  # the n-gram index for speculative drafts, made at the first draft

    def __len__(self) -> int:
        return len(self.token_ids)

    def __repr__(self) -> str:
        return f"Sequence(id={self.seq_id}, len={len(self)}, {self.status.name})"

    @property
    def num_completion_tokens(self) -> int:
        return len(self.token_ids) - self.num_prompt_tokens

    @property
    def completion_token_ids(self) -> list[int]:
        return self.token_ids[self.num_prompt_tokens:]

    @property
    def is_prefilling(self) -> bool:
        """True while some token other than the newest sampled one still lacks K/V (prompt or recompute)."""
        return len(self) - self.num_computed_tokens > 1 or self.num_completion_tokens == 0

    @property
    def is_done(self) -> bool:
        return self.status in (SequenceStatus.FINISHED, SequenceStatus.ABORTED)

    def block_tokens(self, i: int, block_size: int) -> list[int]:
        return self.token_ids[i * block_size:(i + 1) * block_size]
