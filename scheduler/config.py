"""Validated scheduler configuration: every field has a default, every bad value is refused with a fix."""

from dataclasses import dataclass, fields

from i18n import Message, MessageError
from scheduler.sglang.schedule_policy import SCHEDULE_POLICIES
from scheduler.sglang.scheduler import PRIORITY_SCHEDULE_POLICIES, RETRACTION_POLICIES, ServerArgs

PREEMPTION_POLICIES = ("tail", "smart", "priority")
QUEUE_POLICIES = ("fcfs", "priority")
VLLM_VERSIONS = ("0.32", "0.33")  # the vLLM releases whose decisions the vLLM twin (scheduler/vllm_v1/) makes
MAX_SPECULATIVE_TOKENS = 8
# The range of each numeric setting, read by every path a setting enters by (the sidebar, the policy lab, a link,
# a scenario file, a trace): what one session may ask of a shared server. `Config` itself refuses only what can
# never work (a bench may build a larger pool); the run's own ranges are beside its recipe (engine/run/recipe.py).
CONFIG_BOUNDS = {"max_num_seqs": (1, 256), "num_kvcache_blocks": (1, 4096), "kvcache_block_size": (1, 256),
                 "max_num_batched_tokens": (1, 65536), "max_model_len": (2, 8192),
                 "num_speculative_tokens": (0, MAX_SPECULATIVE_TOKENS), "prompt_lookup_min": (1, 16),
                 "prompt_lookup_max": (1, 16), "long_prefill_token_threshold": (0, 8192),
                 "max_num_scheduled_tokens": (0, 65536), "max_num_active_seqs": (0, 256), "watermark": (0.0, 0.99),
                 "chunked_prefill_size": (-1, 65536), "max_prefill_tokens": (1, 65536),
                 "schedule_conservativeness": (0.0, 4.0), "priority_scheduling_preemption_threshold": (0, 2_000_000)}
# The settings only vLLM has, each under vLLM's own name: the vLLM twin reads them, the article's scheduler does not.
VLLM_ONLY_FIELDS = ("long_prefill_token_threshold", "vllm_version", "scheduler_reserve_full_isl", "watermark",
                    "max_num_scheduled_tokens", "max_num_active_seqs", "long_prefill_token_threshold_adaptive")
# The settings only SGLang has, under `python -m sglang.launch_server`'s names: the SGLang twin reads them.
SGLANG_ONLY_FIELDS = ("chunked_prefill_size", "max_prefill_tokens", "schedule_policy", "schedule_conservativeness",
                      "enable_priority_scheduling", "schedule_low_priority_values_first",
                      "priority_scheduling_preemption_threshold", "disable_priority_preemption", "retraction_policy")


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
    # The vLLM release the vLLM twin mirrors (VLLM_VERSIONS); the article's scheduler ignores it.
    vllm_version: str = VLLM_VERSIONS[0]
    # vLLM's SchedulerConfig knobs, under its names and at its defaults (vLLM's None is 0 here). On, a waiting
    # request is admitted only if its whole sequence fits in the free blocks; off, once its first chunk does.
    scheduler_reserve_full_isl: bool = True
    # The fraction of the pool's blocks (vLLM counts its null block) a waiting request must leave free to be
    # admitted while another request runs; 0 keeps none.
    watermark: float = 0.0
    # The tokens one step may schedule (0: max_num_batched_tokens), and the requests admitted into RUNNING (0:
    # max_num_seqs).
    max_num_scheduled_tokens: int = 0
    max_num_active_seqs: int = 0
    # Raise long_prefill_token_threshold to a fair share of the budget: max_num_batched_tokens / requests queued.
    long_prefill_token_threshold_adaptive: bool = False
    # SGLang's ServerArgs, at the defaults the twin's ServerArgs declares (SGLang 0.5.23's; chunked prefill off, where
    # SGLang sizes its chunk from the GPU's memory): the tokens of one prefill chunk (-1 or 0: no chunking), the input
    # tokens of one prefill batch, the waiting queue's order (SCHEDULE_POLICIES; fcfs by default), and the scale of
    # the reserve kept for the running requests' future tokens (new_token_ratio starts at 0.7 x it).
    chunked_prefill_size: int = ServerArgs.chunked_prefill_size
    max_prefill_tokens: int = ServerArgs.max_prefill_tokens
    schedule_policy: str = ServerArgs.schedule_policy
    schedule_conservativeness: float = ServerArgs.schedule_conservativeness
    # SGLang's priority scheduling (fcfs and lof only): a request's `priority` orders the waiting queue, higher values
    # first unless schedule_low_priority_values_first; a request the full batch cannot take preempts running ones
    # whose priority is lower by more than the threshold (unless disable_priority_preemption); retraction_policy
    # "priority" retracts the least important first ("length": the fewest output tokens first).
    enable_priority_scheduling: bool = ServerArgs.enable_priority_scheduling
    schedule_low_priority_values_first: bool = ServerArgs.schedule_low_priority_values_first
    priority_scheduling_preemption_threshold: int = ServerArgs.priority_scheduling_preemption_threshold
    disable_priority_preemption: bool = ServerArgs.disable_priority_preemption
    retraction_policy: str = ServerArgs.retraction_policy

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type in ("float", float):
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ConfigError(f.name, value, "config.number")
                object.__setattr__(self, f.name, float(value))  # 0 and 0.0 are one setting
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
        self._check_vllm_knobs()
        self._check_sglang_knobs()
        if self.prompt_lookup_min > self.prompt_lookup_max:
            raise ConfigError("prompt_lookup_min", self.prompt_lookup_min, "config.lookup_min",
                              most=self.prompt_lookup_max)
        if self.preemption_policy not in PREEMPTION_POLICIES:
            raise ConfigError("preemption_policy", self.preemption_policy, "config.choice",
                              choices=", ".join(PREEMPTION_POLICIES))
        if self.queue_policy not in QUEUE_POLICIES:
            raise ConfigError("queue_policy", self.queue_policy, "config.choice", choices=", ".join(QUEUE_POLICIES))
        if self.vllm_version not in VLLM_VERSIONS:
            raise ConfigError("vllm_version", self.vllm_version, "config.choice", choices=", ".join(VLLM_VERSIONS))
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ConfigError("max_num_batched_tokens", self.max_num_batched_tokens, "config.budget_seqs",
                              max_num_seqs=self.max_num_seqs)
        if not self.chunked_prefill and self.max_num_batched_tokens < self.max_model_len:
            raise ConfigError("max_num_batched_tokens", self.max_num_batched_tokens, "config.budget_len",
                              max_model_len=self.max_model_len)
        self._check_notebook_block_bug()
        if self.cache_blocks_at_allocation and not self.enable_prefix_caching:
            raise ConfigError("cache_blocks_at_allocation", True, "config.cache_at_allocation")

    def _check_vllm_knobs(self):
        """vLLM's own ranges for its SchedulerConfig knobs (watermark in [0, 1), the others 0 or within a limit)."""
        if not 0.0 <= self.watermark < 1.0:
            raise ConfigError("watermark", self.watermark, "config.watermark")
        if not 0 <= self.max_num_scheduled_tokens <= self.max_num_batched_tokens:
            raise ConfigError("max_num_scheduled_tokens", self.max_num_scheduled_tokens, "config.scheduled_tokens",
                              max_num_batched_tokens=self.max_num_batched_tokens)
        if not 0 <= self.max_num_active_seqs <= self.max_num_seqs:
            raise ConfigError("max_num_active_seqs", self.max_num_active_seqs, "config.active_seqs",
                              max_num_seqs=self.max_num_seqs)

    def _check_sglang_knobs(self):
        """SGLang's own ranges: chunked_prefill_size -1 or 0 (off) or at least a page (SGLang cuts a chunk to whole
        pages, and a chunk of none never prefills: the prompt would wait for good), max_prefill_tokens at least 1, a
        known schedule_policy, a conservativeness that is not negative, priority scheduling under fcfs or lof only,
        a threshold not negative here, a known retraction_policy, "priority" only under priority scheduling."""
        if self.chunked_prefill_size < -1 or 0 < self.chunked_prefill_size < self.kvcache_block_size:
            raise ConfigError("chunked_prefill_size", self.chunked_prefill_size, "config.chunked_prefill_size",
                              page=self.kvcache_block_size)
        if self.max_prefill_tokens < 1:
            raise ConfigError("max_prefill_tokens", self.max_prefill_tokens, "config.at_least_1")
        if self.schedule_policy not in SCHEDULE_POLICIES:
            raise ConfigError("schedule_policy", self.schedule_policy, "config.choice",
                              choices=", ".join(SCHEDULE_POLICIES))
        if self.schedule_conservativeness < 0:
            raise ConfigError("schedule_conservativeness", self.schedule_conservativeness, "config.not_negative")
        if self.enable_priority_scheduling and self.schedule_policy not in PRIORITY_SCHEDULE_POLICIES:
            raise ConfigError("enable_priority_scheduling", True, "config.priority_scheduling_policy",
                              policy=self.schedule_policy, choices=", ".join(PRIORITY_SCHEDULE_POLICIES))
        if self.priority_scheduling_preemption_threshold < 0:
            raise ConfigError("priority_scheduling_preemption_threshold", self.priority_scheduling_preemption_threshold,
                              "config.not_negative")
        if self.retraction_policy not in RETRACTION_POLICIES:
            raise ConfigError("retraction_policy", self.retraction_policy, "config.choice",
                              choices=", ".join(RETRACTION_POLICIES))
        if self.retraction_policy == "priority" and not self.enable_priority_scheduling:
            raise ConfigError("retraction_policy", self.retraction_policy, "config.retraction_priority")

    def _check_notebook_block_bug(self):
        """The notebook's one-block-per-prefill rule exists only in its basic scheduler."""
        if not self.notebook_block_bug:
            return
        for name in ("enable_prefix_caching", "chunked_prefill", "mixed_batches", "num_speculative_tokens"):
            if getattr(self, name):
                raise ConfigError("notebook_block_bug", True, "config.notebook_bug", name=name)

    def vllm_since(self, release: str) -> bool:
        """Whether the twin mirrors vLLM `release` or a later one: for a rule vLLM changed in `release`."""
        return VLLM_VERSIONS.index(self.vllm_version) >= VLLM_VERSIONS.index(release)

    @property
    def watermark_blocks(self) -> int:
        """The blocks vLLM keeps free when it admits a waiting request: `watermark` of its pool, the null block
        counted (vLLM's int(watermark * num_blocks))."""
        return int(self.watermark * (self.num_kvcache_blocks + 1))

    @property
    def kv_capacity_tokens(self) -> int:
        return self.num_kvcache_blocks * self.kvcache_block_size


CONFIG_FIELDS = tuple(f.name for f in fields(Config))
