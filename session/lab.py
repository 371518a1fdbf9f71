"""One learner's run, without Streamlit: the engine (or a loaded trace), the frame being looked at, and the
moves the page offers. Every refusal is a `LabError` with a sentence the page can show as it is.

Moving the cursor never re-runs anything that is recorded. Acting at an earlier frame (changing the config,
adding a request) branches: the engine is replayed to that frame and the new run continues from there.
"""

from __future__ import annotations

import importlib.util
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path

from engine.adaptive import AdaptiveBatch
from engine.engine import DEFAULT_MAX_STEPS, KEEP, CostModel, Engine, Options
from engine.frame import Frame
from engine.overlap import check_overlap
from engine.scenario import KeyFrame, Scenario
from engine.trace import load_trace
from engine.workload import Request, chat_prompts, poisson_arrivals, random_workload
from scheduler import Config, ConfigError
from viz.glossary import variant_label

RUNNER_ENV = "SCHEDLAB_RUNNER"  # "fake" or "model": the default model choice (tests set "fake")
CUSTOM = "custom"  # the scenario name of a custom setup
PROMPTS = {"random": "random tokens (1-10)", "chat": "built-in chat prompts"}
ARRIVALS = {"all": "all at step 0", "poisson": "Poisson, 0.5 per step"}
# The ranges the sidebar's number inputs and a link's values accept.
BOUNDS = {"max_num_seqs": (1, 256), "num_kvcache_blocks": (1, 4096), "kvcache_block_size": (1, 256),
          "max_num_batched_tokens": (1, 65536), "max_model_len": (2, 8192), "num_speculative_tokens": (0, 16),
          "prompt_lookup_min": (1, 16), "prompt_lookup_max": (1, 16), "requests": (1, 200), "max_tokens": (1, 2048),
          "seed": (0, 2**31 - 1), "temperature": (0.0, 2.0), "frame": (0, DEFAULT_MAX_STEPS),
          "adaptive_ms": (0.0, 10_000.0), "adaptive_seqs": (1, 256)}


class LabError(ValueError):
    """A move the lab refuses, with the reason in plain words."""


def real_model_installed() -> bool:
    if importlib.util.find_spec("torch") is None:
        return False
    from runner.default_model import find_default_gguf
    try:
        find_default_gguf()
    except FileNotFoundError:
        return False
    return True


def default_runner() -> str:
    """$SCHEDLAB_RUNNER when set, else the real model when it is installed, else the fake one."""
    chosen = os.environ.get(RUNNER_ENV)
    if chosen in ("fake", "model"):
        return chosen
    return "model" if real_model_installed() else "fake"


@dataclass(frozen=True)
class CustomSetup:
    """The sidebar's custom workload: `requests` requests with random-token or built-in chat prompts (`PROMPTS`),
    each writing up to `max_tokens`, arriving all at step 0 or as a seeded Poisson process (`ARRIVALS`)."""
    requests: int = 8
    prompts: str = "random"
    max_tokens: int = 16
    arrivals: str = "all"

    def workload(self, seed: int) -> tuple[Request, ...]:
        steps = [0] * self.requests if self.arrivals == "all" else poisson_arrivals(self.requests, 0.5, seed)
        if self.prompts == "random":
            return tuple(random_workload(self.requests, seed, steps, self.max_tokens))
        texts = [p["text"] for p in chat_prompts()]
        return tuple(Request(arrival=a, prompt=texts[i % len(texts)], max_tokens=self.max_tokens)
                     for i, a in enumerate(steps))

    def summary(self) -> str:
        return f"{self.requests} requests, {PROMPTS[self.prompts]}, {ARRIVALS[self.arrivals]}."


@dataclass(frozen=True)
class RunInputs:
    """What a fresh run is built from; `reset` rebuilds exactly this."""
    title: str
    narrative: str
    config: Config
    workload: tuple[Request, ...]
    runner: str = "fake"
    seed: int = 0
    temperature: float = 0.0
    key_frames: tuple[KeyFrame, ...] = ()
    scenario_name: str = CUSTOM
    variant: bool = False  # the scenario's comparison run (its `variant` config changes) rather than the base run
    cost: CostModel = CostModel()  # the simulated clock's cost model
    adaptive: AdaptiveBatch | None = None  # the adaptive batch size controller, when the scenario has one
    overlap: bool = False  # overlapped scheduling (engine/overlap.py)
    custom: CustomSetup | None = None  # what a custom setup's workload was drawn from (with `seed`)

    @classmethod
    def from_scenario(cls, scenario: Scenario, runner: str, temperature: float | None = None,
                      seed: int | None = None, variant: bool = False) -> RunInputs:
        """The scenario's base run, or with `variant` its comparison run and the key frames observed in it."""
        if variant and not scenario.variant:
            raise LabError(f"The scenario {scenario.title!r} has no variant to compare with.")
        config = replace(scenario.config, **scenario.variant) if variant else scenario.config
        title = f"{scenario.title} · variant: {variant_summary(scenario)}" if variant else scenario.title
        inputs = cls(title, scenario.narrative, config, tuple(scenario.workload), runner,
                     scenario.seed if seed is None else seed, 0.0,
                     tuple(k for k in scenario.key_frames if k.variant == variant), scenario.name, variant,
                     scenario.cost, scenario.adaptive, scenario.overlap)
        return inputs if temperature is None else inputs.with_temperature(temperature)

    @classmethod
    def from_custom(cls, setup: CustomSetup, config: Config, runner: str, seed: int = 0, temperature: float = 0.0,
                    options: Options | None = None) -> RunInputs:
        options = options or Options()
        return cls("Custom setup", setup.summary(), config, setup.workload(seed), runner, seed,
                   adaptive=options.adaptive, overlap=options.overlap, custom=setup).with_temperature(temperature)

    def with_seed(self, seed: int) -> RunInputs:
        """The same run from another seed; a custom setup's workload is drawn again."""
        if self.custom is None:
            return replace(self, seed=seed)
        return replace(self, seed=seed, workload=self.custom.workload(seed)).with_temperature(self.temperature)

    def with_temperature(self, temperature: float) -> RunInputs:
        """Every request of the workload sampled at `temperature` (0 is greedy)."""
        return replace(self, temperature=temperature,
                       workload=tuple(replace(r, temperature=temperature) for r in self.workload))


def variant_summary(scenario: Scenario) -> str:
    """The variant's config changes in words, e.g. "chunked prefill on, token budget per step ... 64"."""
    return variant_label(scenario.variant)


class Lab:
    def __init__(self, inputs: RunInputs | None = None, trace_frames=None, trace_title: str = ""):
        self.inputs = inputs
        self.engine: Engine | None = None
        self._trace_frames = trace_frames
        self._trace_title = trace_title
        self.cursor = 0
        self._built: list[Frame] = []  # frames 0..n already rebuilt, for the charts over time
        if inputs is not None:
            self.reset()

    # -- what is shown ---------------------------------------------------------------------------------

    @property
    def frames(self):
        return self.engine.frames if self.engine is not None else self._trace_frames

    @property
    def is_trace(self) -> bool:
        return self.engine is None

    @property
    def title(self) -> str:
        return self._trace_title if self.is_trace else self.inputs.title

    @property
    def last(self) -> int:
        return len(self.frames) - 1

    @property
    def frame(self) -> Frame:
        return self.frames[self.cursor]

    @property
    def key_frames(self) -> tuple[KeyFrame, ...]:
        return () if self.inputs is None else self.inputs.key_frames

    @property
    def key_steps(self) -> list[int]:
        return sorted({k.step for k in self.key_frames})

    def key_frames_at(self, step: int) -> list[KeyFrame]:
        return [k for k in self.key_frames if k.step == step]

    def history(self) -> list[Frame]:
        """Frames 0..cursor, rebuilt once each and kept until the run branches."""
        while len(self._built) <= self.cursor:
            self._built.append(self.frames[len(self._built)])
        return self._built[:self.cursor + 1]

    def config_in_effect(self, frame: int | None = None) -> Config:
        """The config the step after `frame` (by default the cursor) runs under."""
        frame = self.cursor if frame is None else frame
        if frame < self.last:
            return self.frames[frame + 1].config
        return self.engine.config if self.engine is not None else self.frames[self.last].config

    def options_in_effect(self, frame: int | None = None) -> Options:
        """Overlapped scheduling and the adaptive controller the step after `frame` (by default the cursor) runs
        under; a trace's are the defaults (it cannot be changed)."""
        return Options() if self.engine is None else self.engine.options_at(self.cursor if frame is None else frame)

    @property
    def is_over(self) -> bool:
        """At the last frame and nothing more can happen: everything is done, stalled, or it is a trace."""
        if self.cursor < self.last:
            return False
        if self.engine is None or self.engine.is_finished:
            return True
        return self.frame.batch.kind == "idle" and self.frame.step > 0 and self._nothing_pending()

    def _nothing_pending(self) -> bool:
        return all(r.arrival < self.engine.step_count for r in (*self.engine.workload, *self.engine.manual))

    # -- moving ----------------------------------------------------------------------------------------

    def step(self):
        if self.cursor < self.last:
            self.cursor += 1
            return
        if self.is_trace:
            raise LabError("This is a recorded trace: it ends here and cannot run further.")
        if self.is_over:
            raise LabError("The run is over: every request is done or can never run. Add a request or reset.")
        self.engine.step()
        self.cursor = self.last

    def back(self):
        if self.cursor == 0:
            raise LabError("Already at frame 0, the empty start.")
        self.cursor -= 1

    def run(self, steps: int, on_step: Callable[[int], None] = lambda done: None) -> int:
        """Up to `steps` steps; stops early when the run is over. Returns how many were taken."""
        done = 0
        while done < steps and not self.is_over:
            self.step()
            done += 1
            on_step(done)
        return done

    def goto(self, k: int):
        if not 0 <= k <= self.last:
            raise LabError(f"Frame {k} is not recorded yet: this run has frames 0 to {self.last}.")
        self.cursor = k

    def reset(self, inputs: RunInputs | None = None):
        """A fresh run from `inputs` (by default the current ones), at frame 0."""
        if inputs is None and self.inputs is None:
            raise LabError("A trace cannot be reset; pick a scenario to start a run.")
        self.inputs = inputs or self.inputs
        i = self.inputs
        self.engine = Engine(i.config, i.workload, i.runner, i.seed, i.cost, adaptive=i.adaptive, overlap=i.overlap)
        self.cursor = 0
        self._built = []

    # -- acting (branches when the cursor is not at the end) -------------------------------------------

    def _engine_at_cursor(self, changes: dict | None = None) -> Engine:
        if self.is_trace:
            raise LabError("This is a recorded trace: pick a scenario to change a run.")
        if self.cursor == self.engine.step_count:
            if changes:
                self.engine.set_config(**changes)
            return self.engine
        branched = self.engine.branch(self.cursor, **(changes or {}))
        self.engine, self._built = branched, self._built[:self.cursor + 1]
        return branched

    def set_config(self, **changes):
        """Raises ConfigError (field, value, fix) for a config that can never work; the run is then unchanged."""
        unknown = set(changes) - {f.name for f in fields(Config)}
        if unknown:
            raise LabError(f"Unknown setting(s): {', '.join(sorted(unknown))}.")
        replace(self.config_in_effect(), **changes)  # validates before anything is replayed
        self._engine_at_cursor(changes)

    def set_options(self, overlap: bool | None = None, adaptive=KEEP):
        """Switch overlapped scheduling, or the adaptive controller (None: off), from the cursor on; raises
        ConfigError when overlap meets speculative decoding, the run then unchanged."""
        if self.is_trace:
            raise LabError("This is a recorded trace: pick a scenario to change a run.")
        check_overlap(self.config_in_effect(), self.options_in_effect().overlap if overlap is None else overlap)
        self._engine_at_cursor({"overlap": overlap} if overlap is not None else {"adaptive": adaptive})

    def add_request(self, prompt: str, max_tokens: int, priority: int = 0):
        prompt = prompt.strip()
        if not prompt:
            raise LabError("Type a prompt first: the request needs at least one token.")
        try:
            request = Request(prompt=prompt, max_tokens=int(max_tokens), priority=int(priority),
                              temperature=self.inputs.temperature if self.inputs else 0.0)
        except ValueError as e:
            raise LabError(str(e)) from None
        self._engine_at_cursor().add_request(request)


def open_trace(data: bytes, name: str = "trace") -> Lab:
    """A read-only lab over a JSON trace written by `python -m engine run ... --json`."""
    try:
        title = json.loads(data).get("title") or name
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "trace.json"
            path.write_bytes(data)
            store, _requests = load_trace(path)
    except (ValueError, KeyError, TypeError, AttributeError, ConfigError) as e:
        raise LabError(f"{name} is not a trace written by `python -m engine run ... --json` ({e}).") from None
    if len(store) == 0:
        raise LabError(f"{name} holds no frames.")
    return Lab(trace_frames=store, trace_title=f"Trace: {title}")
