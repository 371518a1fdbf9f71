"""Validated scheduler configuration: every field has a default, every bad value is refused with a fix.

`Config` holds the settings more than one scheduler reads, with one meaning for all of them: the KV pool
(`num_kvcache_blocks` of `kvcache_block_size` tokens), the batch limits (`max_num_seqs`, `max_num_batched_tokens`),
the model length, EOS, and the article's vocabulary that vLLM's engine arguments share (prefix caching, chunked
prefill, the queue policy, n-gram speculation); each scheduler declares which of them it reads
(`SchedulerInfo.honoured`: SGLang's reads the pool, max_num_seqs, the model length and EOS). A setting only one kind
has is that kind's own: declared in its `KindSettings` beside its scheduler (scheduler/settings.py), carried here as
one of the config's `sections` (`config.of(VllmSettings)`), so that one config moves a run between schedulers and a
trace, a link or a scenario file names every setting by its key, `Config(watermark=0.1)` as `Config(max_num_seqs=2)`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from scheduler.settings import ConfigError, KindSettings, S, check_types, declared, defaults, section_of, setting

QUEUE_POLICIES = ("fcfs", "priority")
MAX_SPECULATIVE_TOKENS = 8

__all__ = ["MAX_SPECULATIVE_TOKENS", "QUEUE_POLICIES", "Config", "ConfigError"]  # ConfigError: scheduler/settings.py


# The range of each numeric setting (`bounds`) is read by every path a setting enters by (the sidebar, the policy lab,
# a link, a scenario file, a trace): what one session may ask of a shared server. `Config` itself refuses only what
# can never work (a bench may build a larger pool); the run's own ranges are beside its recipe (engine/run/recipe.py).
@dataclass(frozen=True, init=False)
class Config:
    """A run's settings: the shared ones as fields, each kind's own in `sections` (see the module docstring)."""
    messages = "setting"  # the prefix of the shared settings' message ids (scheduler/settings.py)

    max_num_seqs: int = setting(4, bounds=(1, 256))
    num_kvcache_blocks: int = setting(64, bounds=(1, 4096))
    kvcache_block_size: int = setting(16, bounds=(1, 256))
    max_num_batched_tokens: int = setting(512, bounds=(1, 65536))
    max_model_len: int = setting(256, bounds=(2, 8192))
    eos: int = setting(-1, sidebar=False)  # the model's, never the learner's
    enable_prefix_caching: bool = setting(True)
    chunked_prefill: bool = setting(False)
    queue_policy: str = setting("fcfs", choices=QUEUE_POLICIES)
    num_speculative_tokens: int = setting(0, bounds=(0, MAX_SPECULATIVE_TOKENS))  # n-gram drafts per decode; 0: off
    prompt_lookup_min: int = setting(1, bounds=(1, 16))
    prompt_lookup_max: int = setting(3, bounds=(1, 16))
    # Each kind's own settings set away from their defaults, one section per kind, in a fixed order: a kind without
    # one reads its defaults (`of`), so two configs that mean the same run are equal.
    sections: tuple[KindSettings, ...] = ()

    def __init__(self, **values):
        """A shared setting by its name, a kind's own by its key (into its kind's section), the others at their
        defaults; `sections` as `dataclasses.replace` passes them on."""
        own = {f.name: f for f in fields(Config)}
        by_kind = {type(s): s for s in values.pop("sections", ())}
        for key, value in values.items():
            if key in own:
                continue
            declared_by = section_of(key)
            if declared_by is None:
                raise TypeError(f"Config has no setting {key!r}")
            kind, name = declared_by
            by_kind[kind] = replace(by_kind.get(kind) or kind(), **{name: value})
        for name, f in own.items():
            if name != "sections":
                object.__setattr__(self, name, values.get(name, f.default))
        object.__setattr__(self, "sections", tuple(sorted((s for s in by_kind.values() if s != defaults(type(s))),
                                                          key=lambda s: type(s).__qualname__)))
        self._check()

    def _check(self):
        check_types(self)
        for name in ("max_num_seqs", "max_num_batched_tokens", "max_model_len", "num_kvcache_blocks",
                     "kvcache_block_size", "prompt_lookup_min", "prompt_lookup_max"):
            if getattr(self, name) < 1:
                raise ConfigError(name, getattr(self, name), "config.at_least_1")
        if not 0 <= self.num_speculative_tokens <= MAX_SPECULATIVE_TOKENS:
            raise ConfigError("num_speculative_tokens", self.num_speculative_tokens, "config.speculative",
                              most=MAX_SPECULATIVE_TOKENS)
        if self.prompt_lookup_min > self.prompt_lookup_max:
            raise ConfigError("prompt_lookup_min", self.prompt_lookup_min, "config.lookup_min",
                              most=self.prompt_lookup_max)
        if self.max_num_batched_tokens < self.max_num_seqs:
            raise ConfigError("max_num_batched_tokens", self.max_num_batched_tokens, "config.budget_seqs",
                              max_num_seqs=self.max_num_seqs)
        if not self.chunked_prefill and self.max_num_batched_tokens < self.max_model_len:
            raise ConfigError("max_num_batched_tokens", self.max_num_batched_tokens, "config.budget_len",
                              max_model_len=self.max_model_len)
        for section in self.sections:
            section.check(self)

    def of(self, kind: type[S]) -> S:
        """The config's section of `kind` (a kind's `KindSettings` class): its own settings, at their defaults
        where the config sets none."""
        for section in self.sections:
            if type(section) is kind:
                return section
        return defaults(kind)

    def section(self, key: str) -> KindSettings:
        """The section of the kind that declares the setting `key` (for a rule its settings class states)."""
        declared_by = section_of(key)
        if declared_by is None:
            raise KeyError(f"no kind declares {key!r}")
        return self.of(declared_by[0])

    def value(self, key: str):
        """The setting `key`, shared or a kind's own (at its default where its section is not set)."""
        declared_by = section_of(key)
        return getattr(self, key) if declared_by is None else getattr(self.of(declared_by[0]), declared_by[1])

    def real_model_refusal(self) -> ConfigError | None:
        """Why the real model cannot run this config (a setting on that its declaration says it cannot run with,
        such as the notebook's bug), or None."""
        for section in self.sections:
            for spec in declared(type(section)):
                if spec.declared.real_model_fix and getattr(section, spec.name):
                    return ConfigError(spec.key, getattr(section, spec.name), spec.declared.real_model_fix)
        return None

    @property
    def kv_capacity_tokens(self) -> int:
        return self.num_kvcache_blocks * self.kvcache_block_size


SHARED_SETTINGS = declared(Config)
MODEL_SETTINGS = ("eos",)  # the model's, never the learner's: no control, link or sentence names it
CONFIG_FIELDS = tuple(spec.key for spec in SHARED_SETTINGS)  # the shared settings, which `honoured` names
