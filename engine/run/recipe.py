"""A run's recipe: what it is built from (`RunSpec`) and the changes made to it mid-run (`Change`), each stamped
with the frame it was made at. A run is a pure function of its recipe, so the recipe is all a replay, a
branch, a link or the run cache's address needs: `Engine(spec)` builds the run and makes each change when it
reaches the change's frame; the run to frame k is `Engine(spec.until(k))` stepped to k.

A change of config fields or engine options is checked here, in one place (`checked_change`), before
anything changes: the fields a run can change (`SWAPPABLE_FIELDS` take effect at the next step, `POOL_FIELDS`
rebuild the KV pool), the resulting `Config`, the adaptive controller's bounds and overlap's exclusion of
speculative decoding.

Everything here is frozen and hashable, and `to_dict` / `from_dict` give plain JSON data.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, NamedTuple

from engine.run.adaptive import AdaptiveBatch
from engine.run.overlap import check_overlap
from i18n import MessageError
from scheduler import Config, SamplingParams
from scheduler.factory import DEFAULT_KIND, SETTINGS, scheduler_info

POOL_FIELDS = ("num_kvcache_blocks", "kvcache_block_size", "max_model_len", "eos")
# Every setting a learner may change mid-run (each kind's own included), but the pool's: they rebuild it.
SWAPPABLE_FIELDS = tuple(key for key, spec in SETTINGS.items() if spec.declared.sidebar and key not in POOL_FIELDS)
OPTION_NAMES = ("cost", "overlap", "adaptive")  # the engine options a change may switch besides config fields
DEFAULT_MAX_STEPS = 100_000
# The range of each number a run is made of, beside the config's (scheduler/config.py): a workload's requests
# (a scenario file's, a custom setup's), their tokens, arrivals and sampling, the steps a run may take, its seed,
# cost model and adaptive controller; a frame a link opens at; the runs one comparison (the policy lab's, a tour's
# stop: one per scheduler kind) steps side by side.
RUN_BOUNDS = {"workload_requests": (1, 2000), "requests": (1, 200), "max_tokens": (1, 2048), "arrival": (0, 100_000),
              "max_steps": (1, 100_000), "frame": (0, DEFAULT_MAX_STEPS), "token_id": (0, 2**31 - 1),
              "prompt_tokens": (1, 8192), "priority": (-1_000_000, 1_000_000), "temperature": (0.0, 2.0),
              "min_tokens": (0, 2048), "stop_token_ids": (0, 16),
              "seed": (0, 2**31 - 1), "cost_s": (0.0, 3600.0), "adaptive_s": (0.0, 10.0), "rate": (0.0, 1000.0),
              "scale": (0.0, 1000.0), "variants": (2, 6)}


class ChangeError(MessageError):
    """A change naming settings a run cannot change."""


@dataclass(frozen=True)
class CostModel:
    """Simulated durations of a step: the model takes `step_s` plus `token_s` per batched token (an idle step
    step_s), the scheduler `schedule_s` to decide the batch and `postprocess_s` to take its tokens in; handing
    a batch to the model's worker thread (overlapped scheduling) costs `handoff_s`."""
    step_s: float = 0.010
    token_s: float = 0.0002
    schedule_s: float = 0.0015
    postprocess_s: float = 0.0005
    handoff_s: float = 0.0005

    def model_time(self, num_tokens: int) -> float:
        return self.step_s + self.token_s * num_tokens

    def step_time(self, num_tokens: int, overlapped: bool = False) -> float:
        """A step's duration: schedule + model + postprocess, or overlapped (in the steady state)
        max(schedule + postprocess, model) + handoff."""
        cpu, model = self.schedule_s + self.postprocess_s, self.model_time(num_tokens)
        return max(cpu, model) + self.handoff_s if overlapped else cpu + model


class Options(NamedTuple):
    """The engine options beside the config: overlapped scheduling and the adaptive controller (None: off)."""
    overlap: bool = False
    adaptive: AdaptiveBatch | None = None


@dataclass(frozen=True)
class Request:
    """One request of a workload: a text `prompt` (tokenized by the runner, as a chat turn when `chat`) or
    `prompt_token_ids`, exactly one of them."""
    arrival: int = 0
    prompt: str | None = None
    prompt_token_ids: tuple[int, ...] | None = None
    max_tokens: int = 16
    ignore_eos: bool = False
    priority: int = 0
    temperature: float = 0.0
    chat: bool = True
    stop_token_ids: tuple[int, ...] = ()  # vLLM's SamplingParams: tokens that stop it as EOS does
    min_tokens: int = 0  # vLLM's SamplingParams: outputs before which no stop token is sampled

    def __post_init__(self):
        if (self.prompt is None) == (self.prompt_token_ids is None):
            raise MessageError("workload.prompt_xor")
        if isinstance(self.stop_token_ids, list):
            object.__setattr__(self, "stop_token_ids", tuple(self.stop_token_ids))
        if self.prompt_token_ids is not None:
            object.__setattr__(self, "prompt_token_ids", tuple(self.prompt_token_ids))
        if type(self.arrival) is not int or self.arrival < 0:
            raise MessageError("workload.arrival", value=repr(self.arrival))
        if type(self.max_tokens) is not int or self.max_tokens < 1:
            raise MessageError("workload.max_tokens", value=repr(self.max_tokens))
        if self.temperature < 0:
            raise MessageError("workload.temperature", value=repr(self.temperature))
        self.sampling_params()  # refuses bad stop_token_ids or min_tokens

    def sampling_params(self) -> SamplingParams:
        return SamplingParams(temperature=self.temperature, max_tokens=self.max_tokens, ignore_eos=self.ignore_eos,
                              stop_token_ids=self.stop_token_ids, min_tokens=self.min_tokens)


@dataclass(frozen=True)
class Change:
    """A change made between steps, after frame `step`: config fields and engine options (`cost`, `overlap`,
    `adaptive`; as sorted (name, value) pairs) or a request added by hand (arriving at `step`)."""
    step: int
    kind: str  # "config" or "request"
    payload: Any  # tuple[tuple[str, value], ...] or Request

    @classmethod
    def config(cls, step: int, settings: dict) -> Change:
        return cls(step, "config", tuple(sorted(settings.items(), key=lambda item: item[0])))

    @classmethod
    def request(cls, step: int, request: Request) -> Change:
        return cls(step, "request", replace(request, arrival=step))

    @property
    def settings(self) -> dict:
        """A config change's fields, then its options in OPTION_NAMES order."""
        pairs = dict(self.payload)
        return {k: v for k, v in pairs.items() if k not in OPTION_NAMES} | {k: pairs[k] for k in OPTION_NAMES
                                                                             if k in pairs}

    def to_dict(self) -> dict:
        if self.kind == "request":
            return {"step": self.step, "request": _plain(self.payload)}
        return {"step": self.step, "settings": {k: _plain(v) for k, v in self.payload}}

    @classmethod
    def from_dict(cls, data: dict) -> Change:
        if "request" in data:
            return cls.request(data["step"], _request(data["request"]))
        return cls.config(data["step"], {k: _option(k, v) for k, v in data["settings"].items()})


def checked_change(config: Config, options: Options, settings: dict) -> tuple[Config, Options]:
    """The config and options after `settings` (config fields and options; None for `cost` or `overlap`
    keeps it, for `adaptive` turns the controller off), or ChangeError / ConfigError, changing nothing.
    A controller switched on brings `max_num_seqs` within its bounds first."""
    unknown = set(settings) - set(SWAPPABLE_FIELDS) - set(POOL_FIELDS) - set(OPTION_NAMES)
    if unknown:
        raise ChangeError("change.unknown_settings", names=", ".join(sorted(unknown)))
    new = replace(config, **{k: v for k, v in settings.items() if k not in OPTION_NAMES})
    controller = settings.get("adaptive", options.adaptive)
    if controller is not None:
        new = replace(new, max_num_seqs=controller.clamp(new.max_num_seqs))
    overlap = options.overlap if settings.get("overlap") is None else settings["overlap"]
    check_overlap(new, overlap)
    return new, Options(overlap, controller)


@dataclass(frozen=True)
class RunSpec:
    """Everything a run is built from, and the changes made to it so far (in the order made, by frame)."""
    config: Config
    workload: tuple[Request, ...] = ()
    runner: str = "fake"
    seed: int = 0
    cost: CostModel = CostModel()
    adaptive: AdaptiveBatch | None = None
    overlap: bool = False
    scheduler: str = DEFAULT_KIND
    max_steps: int = DEFAULT_MAX_STEPS
    changes: tuple[Change, ...] = field(default=())

    def __post_init__(self):
        object.__setattr__(self, "workload", tuple(self.workload))
        scheduler_info(self.scheduler)  # a kind the factory has, or ValueError naming them

    def until(self, step: int) -> RunSpec:
        """The recipe of this run's frames 0..step: the changes made before frame `step`."""
        return replace(self, changes=tuple(c for c in self.changes if c.step < step))

    def with_change(self, change: Change) -> RunSpec:
        """The branch that makes `change` at its frame: the changes made up to that frame, then it."""
        return replace(self, changes=(*(c for c in self.changes if c.step <= change.step), change))

    def options_at(self, step: int) -> Options:
        """The options the step after frame `step` runs under: the initial ones, with the changes made up to then."""
        options = Options(self.overlap, self.adaptive)
        for change in self.changes:
            if change.step <= step and change.kind == "config":
                options = options._replace(**{k: v for k, v in change.payload if k in Options._fields
                                              and (v is not None or k == "adaptive")})
        return options

    @property
    def address(self) -> str:
        """The content address of the run (the run cache files runs by it)."""
        return hashlib.sha256(repr(self).encode()).hexdigest()

    def to_dict(self) -> dict:
        plain = {f.name: _plain(getattr(self, f.name)) for f in fields(self) if f.name not in ("workload", "changes")}
        return {**plain,
                "workload": [_plain(r) for r in self.workload], "changes": [c.to_dict() for c in self.changes]}

    @classmethod
    def from_dict(cls, data: dict) -> RunSpec:
        return cls(Config(**data["config"]), tuple(_request(r) for r in data["workload"]), data["runner"],
                   data["seed"], CostModel(**data["cost"]), _option("adaptive", data["adaptive"]), data["overlap"],
                   data["scheduler"], data["max_steps"], tuple(Change.from_dict(c) for c in data["changes"]))


def _plain(value):
    return asdict(value) if hasattr(value, "__dataclass_fields__") else value


def _request(data: dict) -> Request:
    tokens = data.get("prompt_token_ids")
    return Request(**{**data, "prompt_token_ids": None if tokens is None else tuple(tokens)})


def _option(name: str, value):
    """An option or config value read back from JSON data."""
    if name == "cost" and value is not None:
        return CostModel(**value)
    if name == "adaptive" and value is not None:
        return AdaptiveBatch(**value)
    return value
