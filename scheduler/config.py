"""Validated scheduler configuration: every field has a default, every bad value is refused with a fix."""

from dataclasses import dataclass, fields

from i18n import Message, MessageError

PREEMPTION_POLICIES = ("tail", "smart", "priority")
QUEUE_POLICIES = ("fcfs", "priority")
MAX_SPECULATIVE_TOKENS = 8
# The range of each numeric setting, read by every path a setting enters by (the sidebar, the policy lab, a link,
# a scenario file, a trace): what one session may ask of a shared server. `Config` itself refuses only what can
# never work (a bench may build a larger pool); the run's own ranges are beside its recipe (engine/run/recipe.py).
CONFIG_BOUNDS = {"max_num_seqs": (1, 256), "num_kvcache_blocks": (1, 4096), "kvcache_block_size": (1, 256),
                 "max_num_batched_tokens": (1, 65536), "max_model_len": (2, 8192),
                 "num_speculative_tokens": (0, MAX_SPECULATIVE_TOKENS), "prompt_lookup_min": (1, 16),
                 "prompt_lookup_max": (1, 16)}


class ConfigError(MessageError):
    """A configuration that can never work. The message names the field, the value and what would work: the
    message `fix` (an id under "config.", filled from `values`)."""

    def __init__(self, field: str, value, fix: str, **values):
        self.field, self.value, self.fix = field, value, Message(fix, **values)
        super().__init__("error.config", field=field, value=repr(value), fix=self.fix)


@dataclass(frozen=True)
class Config:
    max_num_seqs: int = 4
    max_num_batched_tokens: int = 512
    max_model_len: int = 256
    num_kvcache_blocks: int = 64
    kvcache_block_size: int = 16
    eos: int = -1
    prefill_first: bool = True
    enable_prefix_caching: bool = True
    chunked_prefill: bool = False
    mixed_batches: bool = False
    preemption_policy: str = "tail"
    queue_policy: str = "fcfs"
    num_speculative_tokens: int = 0  # draft tokens per decode by n-gram prompt lookup; 0 turns speculation off
    prompt_lookup_min: int = 1
    prompt_lookup_max: int = 3
    # The InfraTech notebook's bug, as a lesson: its Sequence.block_size stays 256 while its pool uses
    # kvcache_block_size, so every prefill (recomputes included) gets exactly one block (block_manager.py).
    notebook_block_bug: bool = False
    # vLLM's rule: a block full of known (prompt) tokens enters the prefix cache when it is allocated, so a
    # request admitted later in the same step already shares it; off, a block enters once computed.
    cache_blocks_at_allocation: bool = False
    # vLLM's cap on one request's prefill chunk per step (0: none); the vLLM twin (scheduler/vllm_v1/) applies it.
    long_prefill_token_threshold: int = 0

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type in ("int", int) and (type(value) is not int):
                raise ConfigError(f.name, value, "config.integer")
            if f.type in ("bool", bool) and type(value) is not bool:
                raise ConfigError(f.name, value, "config.bool")
        for name in ("max_num_seqs", "max_num_batched_tokens", "max_model_len",
                     "num_kvcache_blocks", "kvcache_block_size", "prompt_lookup_min", "prompt_lookup_max"):
            if getattr(self, name) < 1:
                raise ConfigError(name, getattr(self, name), "config.at_least_1")
        if not 0 <= self.num_speculative_tokens <= MAX_SPECULATIVE_TOKENS:
            raise ConfigError("num_speculative_tokens", self.num_speculative_tokens, "config.speculative",
                              most=MAX_SPECULATIVE_TOKENS)
        if not 0 <= self.long_prefill_token_threshold <= self.max_model_len:
            raise ConfigError("long_prefill_token_threshold", self.long_prefill_token_threshold,
                              "config.long_prefill", max_model_len=self.max_model_len)
        if self.prompt_lookup_min > self.prompt_lookup_max:
            raise ConfigError("prompt_lookup_min", self.prompt_lookup_min, "config.lookup_min",
                              most=self.prompt_lookup_max)
        if self.preemption_policy not in PREEMPTION_POLICIES:
            raise ConfigError("preemption_policy", self.preemption_policy, "config.choice",
                              choices=", ".join(PREEMPTION_POLICIES))
        if self.queue_policy not in QUEUE_POLICIES:
            raise ConfigError("queue_policy", self.queue_policy, "config.choice", choices=", ".join(QUEUE_POLICIES))
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ConfigError("max_num_batched_tokens", self.max_num_batched_tokens, "config.budget_seqs",
                              max_num_seqs=self.max_num_seqs)
        if not self.chunked_prefill and self.max_num_batched_tokens < self.max_model_len:
            raise ConfigError("max_num_batched_tokens", self.max_num_batched_tokens, "config.budget_len",
                              max_model_len=self.max_model_len)
        self._check_notebook_block_bug()
        if self.cache_blocks_at_allocation and not self.enable_prefix_caching:
            raise ConfigError("cache_blocks_at_allocation", True, "config.cache_at_allocation")

    def _check_notebook_block_bug(self):
        """The notebook's one-block-per-prefill rule exists only in its basic scheduler."""
        if not self.notebook_block_bug:
            return
        for name in ("enable_prefix_caching", "chunked_prefill", "mixed_batches", "num_speculative_tokens"):
            if getattr(self, name):
                raise ConfigError("notebook_block_bug", True, "config.notebook_bug", name=name)

    @property
    def kv_capacity_tokens(self) -> int:
        return self.num_kvcache_blocks * self.kvcache_block_size


CONFIG_FIELDS = tuple(f.name for f in fields(Config))
