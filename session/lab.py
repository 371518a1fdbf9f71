"""One learner's run, without Streamlit: the engine (or a loaded trace), the frame being looked at, and the
moves the page offers. Every refusal is a `LabError` with a sentence the page can show as it is.

Moving the cursor never re-runs anything that is recorded. Acting at an earlier frame (changing the config,
adding a request) branches: the engine is replayed to that frame and the new run continues from there.
Runs live in the process's run cache (session/run_cache.py), shared by every session on the same inputs; a
lab keeps its own cursor and how far it has stepped, so what it shows is what it would show alone.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass, replace

from engine.analysis.timeline import Segment
from engine.inputs.key_frames import KeyFrame
from engine.inputs.scenario import Scenario
from engine.inputs.workload import chat_prompts, poisson_arrivals, random_workload
from engine.run.engine import KEEP, Engine
from engine.run.frame import Frame
from engine.run.limits import BOUNDS, MAX_APP_STEPS
from engine.run.metrics import (
    RequestMetrics,
    RunMetrics,
    SpeculationMetrics,
    run_metrics,
    speculation_metrics,
)
from engine.run.recipe import DEFAULT_MAX_STEPS, Change, Options, Request, RunSpec, checked_change
from engine.traces.trace import UnknownScheduler, read_trace
from i18n import DEFAULT, Message, MessageError, message_of
from scheduler import Config
from scheduler.factory import DEFAULT_KIND
from session.history import FrameSummary, RunHistory
from session.run_cache import RunCache, SharedRun, shared_run_cache
from viz.glossary import variant_label

RUNNER_ENV = "SCHEDLAB_RUNNER"  # "fake" or "model": the default model choice (tests set "fake")
CUSTOM = "custom"  # the scenario name of a custom setup
PROMPTS = {"random": "random tokens (1-10)", "chat": "built-in chat prompts"}
ARRIVALS = {"all": "all at step 0", "poisson": "Poisson, 0.5 per step"}

class LabError(MessageError):
    """A move the lab refuses, with the reason in plain words: `LabError(message id, **values)`."""


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
    """What a fresh run is built from, its recipe (`spec`, no changes made yet), and the words shown about it;
    `reset` rebuilds exactly this."""
    title: str
    narrative: str
    spec: RunSpec
    temperature: float = 0.0  # every request's sampling temperature (the workload's own)
    key_frames: tuple[KeyFrame, ...] = ()
    scenario_name: str = CUSTOM
    variant: bool = False  # the scenario's comparison run (its `variant` config changes) rather than the base run
    custom: CustomSetup | None = None  # what a custom setup's workload was drawn from (with the spec's seed)

    @classmethod
    def from_scenario(cls, scenario: Scenario, runner: str, temperature: float | None = None,
                      seed: int | None = None, variant: bool = False) -> RunInputs:
        """The scenario's base run, or with `variant` its comparison run and the key frames observed in it."""
        if variant and not scenario.variant:
            raise LabError("lab.no_variant", title=repr(scenario.title))
        spec = scenario.spec_for(variant=variant)
        if (assignment := scenario.assignment) is not None:  # judged on its own model, seed and temperature
            runner = spec.runner if assignment.locks("runner") else runner
            seed = None if assignment.locks("seed") else seed
            temperature = None if assignment.locks("temperature") else temperature
        spec = replace(spec, runner=runner_for(spec.config, runner), seed=spec.seed if seed is None else seed,
                       max_steps=DEFAULT_MAX_STEPS)
        title = f"{scenario.title} · variant: {variant_summary(scenario)}" if variant else scenario.title
        key_frames = tuple(k for k in scenario.key_frames if k.variant == variant)
        inputs = cls(title, scenario.narrative, spec, 0.0, key_frames, scenario.name, variant)
        return inputs if temperature is None else inputs.with_temperature(temperature)

    @classmethod
    def from_custom(cls, setup: CustomSetup, config: Config, runner: str, seed: int = 0, temperature: float = 0.0,
                    options: Options | None = None, scheduler: str = DEFAULT_KIND) -> RunInputs:
        options = options or Options()
        spec = RunSpec(config, setup.workload(seed), runner_for(config, runner), seed, adaptive=options.adaptive,
                       overlap=options.overlap, scheduler=scheduler)
        return cls("Custom setup", setup.summary(), spec, custom=setup).with_temperature(temperature)

    @property
    def config(self) -> Config:
        return self.spec.config

    @property
    def runner(self) -> str:
        return self.spec.runner

    def with_runner(self, runner: str) -> RunInputs:
        return replace(self, spec=replace(self.spec, runner=runner))

    def with_scheduler(self, scheduler: str) -> RunInputs:
        """The same run decided by another scheduler (scheduler.factory.SCHEDULER_KINDS), from frame 0."""
        return replace(self, spec=replace(self.spec, scheduler=scheduler))

    def with_seed(self, seed: int) -> RunInputs:
        """The same run from another seed; a custom setup's workload is drawn again."""
        if self.custom is None:
            return replace(self, spec=replace(self.spec, seed=seed))
        spec = replace(self.spec, seed=seed, workload=self.custom.workload(seed))
        return replace(self, spec=spec).with_temperature(self.temperature)

    def with_temperature(self, temperature: float) -> RunInputs:
        """Every request of the workload sampled at `temperature` (0 is greedy)."""
        workload = tuple(replace(r, temperature=temperature) for r in self.spec.workload)
        return replace(self, temperature=temperature, spec=replace(self.spec, workload=workload))


def runner_for(config: Config, runner: str) -> str:
    """The runner a run opens on: one the real model cannot run (the notebook's block-size bug: the real one needs a
    KV slot for every token) only on the fake model; asking for the real model later is refused with that reason."""
    return "fake" if config.real_model_refusal() is not None else runner


def variant_summary(scenario: Scenario) -> str:
    """The variant's config changes in words, e.g. "chunked prefill on, token budget per step ... 64"."""
    return variant_label(scenario.variant, DEFAULT)  # the run's own title is English, as a Message is


class Lab:
    def __init__(self, inputs: RunInputs | None = None, trace_frames=None, trace_title: str = "",
                 cache: RunCache | None = None, trace_scheduler: str = DEFAULT_KIND):
        self.inputs = inputs
        self.cache = cache or shared_run_cache()
        self._run: SharedRun | None = None
        self._last = 0  # the last frame this lab has stepped to (the shared run may be further on)
        self._trace_frames = trace_frames
        self._trace_title = trace_title
        self._trace_scheduler = trace_scheduler
        self.cursor = 0
        self._history = RunHistory()  # summaries of frames 0..n taken in so far, for the charts over time
        self._metrics = None  # ((history, cursor, last), metrics) of the last `metrics()`
        self._shown: tuple | None = None  # (frames, cursor, frame) of the last `frame`
        if inputs is not None:
            self.reset()

    # -- what is shown ---------------------------------------------------------------------------------

    @property
    def engine(self) -> Engine | None:
        return self._run.engine if self._run is not None else None

    @property
    def frames(self):
        return self.engine.frames if self.engine is not None else self._trace_frames

    @property
    def is_trace(self) -> bool:
        return self.engine is None

    @property
    def scheduler(self) -> str:
        """Which scheduler decided this run (scheduler.SCHEDULER_KINDS): its recipe's, or the trace's."""
        return self._trace_scheduler if self.is_trace else self.inputs.spec.scheduler

    @property
    def title(self) -> str:
        return self._trace_title if self.is_trace else self.inputs.title

    @property
    def last(self) -> int:
        return self._last if self._run is not None else len(self.frames) - 1

    @property
    def nbytes(self) -> int:
        """An estimate of what the run holds (session/run_cache.py)."""
        return self._run.nbytes if self._run is not None else 0

    @property
    def kept_out(self) -> bool:
        """The run is larger than one run's share of the run cache: computed for this session alone, not kept."""
        return self._run is not None and self._run.kept_out

    @property
    def frame(self) -> Frame:
        """The frame at the cursor, rebuilt once per position (a recorded frame never changes; a branch or a reset
        brings new frames)."""
        frames = self.frames
        if self._shown is None or self._shown[0] is not frames or self._shown[1] != self.cursor:
            self._shown = (frames, self.cursor, frames[self.cursor])
        return self._shown[2]

    @property
    def key_frames(self) -> tuple[KeyFrame, ...]:
        return () if self.inputs is None else self.inputs.key_frames

    @property
    def key_steps(self) -> list[int]:
        return sorted({k.step for k in self.key_frames})

    def key_frames_at(self, step: int) -> list[KeyFrame]:
        return [k for k in self.key_frames if k.step == step]

    def history(self) -> list[FrameSummary]:
        """Summaries of frames 0..cursor (what the charts over time read), each built once and kept until the run
        branches; the frames themselves are not kept."""
        self._history.extend(self.frames, self.cursor)
        return self._history.summaries[:self.cursor + 1]

    def timeline(self) -> list[Segment]:
        """The request timeline up to the cursor: each request's runs of equal phases."""
        self._history.extend(self.frames, self.cursor)
        return self._history.segments(self.cursor)

    def metrics(self) -> tuple[RunMetrics, list[RequestMetrics], SpeculationMetrics]:
        """The run's and each request's metrics up to the cursor, and speculation's: one pass over frames
        0..cursor rebuilt one at a time (none kept), remembered until the cursor moves or the run branches."""
        key = (self._history, self.cursor, self.last)
        if self._metrics is None or self._metrics[0] != key:
            run, requests = run_metrics(self.frames[k] for k in range(self.cursor + 1))
            speculation = speculation_metrics(self.frames[k] for k in range(self.cursor + 1))
            self._metrics = (key, (run, requests, speculation))
        return self._metrics[1]

    def config_in_effect(self, frame: int | None = None) -> Config:
        """The config the step after `frame` (by default the cursor) runs under."""
        frame = self.cursor if frame is None else frame
        if frame < len(self.frames) - 1:
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
        return self.engine is None or self._run_ends_at(self.cursor)

    def _run_ends_at(self, frame: int) -> bool:
        """Whether nothing can follow `frame` of the shared run: it is the run's last and everything is done or
        stalled."""
        if frame < len(self.frames) - 1:  # another session stepped the shared run on (frames only grow)
            return False
        with self._run.lock:  # another session may be stepping it now: read it between steps
            if frame < len(self.frames) - 1 or self._run.broken:  # a failed step is computed again
                return False
            return self.engine.is_finished or self.engine.stalled

    # -- moving ----------------------------------------------------------------------------------------

    def step(self):
        if self.cursor < self.last:
            self.cursor += 1
            return
        if self.is_trace:
            raise LabError("lab.trace_ends")
        if self.is_over:
            raise LabError("lab.run_over")
        if self.last >= MAX_APP_STEPS:
            raise LabError("lab.max_steps", steps=f"{MAX_APP_STEPS:,}")
        self._advance(self.cursor + 1)
        self.cursor = self._last = self.cursor + 1

    def _advance(self, frame: int):
        """The shared run computed on to `frame` (unless another session did), through the run cache."""
        try:
            self.cache.advance(self._run, frame)
        except Exception as e:  # logged by the run cache; the run stays at the last good frame, able to go on
            raise LabError("lab.step_failed", step=frame, frame=frame - 1, error=message_of(e)) from e

    def compute_to_end(self, bound: int, on_step: Callable[[int], None] = lambda frame: None) -> int:
        """The last frame of the whole run, at most `bound`: the shared run computed on to its end where no session
        has yet, one frame per turn of the run's lock (another session's step goes between two), this session's
        cursor and stepped frames unchanged (a handout of the whole run, the student still at frame 0)."""
        if self.is_trace:
            return min(self.last, bound)
        frame = min(len(self.frames) - 1, bound)
        while frame < bound and not self._run_ends_at(frame):
            self._advance(frame + 1)
            frame = min(len(self.frames) - 1, bound)
            on_step(frame)
        return frame

    def back(self):
        if self.cursor == 0:
            raise LabError("lab.at_start")
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
            raise LabError("lab.not_recorded", k=k, last=self.last)
        self.cursor = k

    def reset(self, inputs: RunInputs | None = None):
        """A fresh run from `inputs` (by default the current ones), at frame 0."""
        if inputs is None and self.inputs is None:
            raise LabError("lab.trace_no_reset")
        self.inputs = inputs or self.inputs
        self._hold(self.cache.open(self.inputs, self))
        self.cursor = self._last = 0
        self._history = RunHistory()

    @property
    def shared_run(self) -> SharedRun | None:
        """The run this lab shows (shared with every session on the same inputs); None for a trace."""
        return self._run

    def follow(self, run: SharedRun, inputs: RunInputs, frame: int, ahead: int = 0):
        """Show `frame` of another session's run (a student following the lecturer): the run itself, shared, with
        the other session's `inputs` (its title and key frames); the `ahead` frames after it that the run holds
        already are this session's too (a follower playing along gets them without asking)."""
        if run is not self._run:
            self.inputs = inputs
            self._hold(self.cache.hold(run, self))
            self._last, self._history = 0, RunHistory()
        self._last = max(self._last, min(frame + ahead, len(run.engine.frames) - 1))
        self.goto(frame)

    def pin(self) -> str:
        """Keep this run in the run cache whatever students open (presets computed at start, a lecturer's pick);
        returns its address."""
        self.cache.pin(self._run)
        return self._run.address

    def _hold(self, run: SharedRun):
        if self._run is not None and self._run is not run:
            self.cache.release(self._run, self)
        self._run = run

    # -- acting (branches when the cursor is not at the end) -------------------------------------------

    def act(self, change: Change):
        """The run with `change` made at the cursor: frames after the cursor are dropped from this lab. A config
        change is checked before anything is replayed (ChangeError, ConfigError), the run then unchanged."""
        if self.is_trace:
            raise LabError("lab.trace_no_change")
        if change.kind == "config":
            checked_change(self.config_in_effect(), self.options_in_effect(), change.settings)
        self._hold(self.cache.act(self._run, change, self))
        self._last, self._history = self.cursor, RunHistory()

    def set_config(self, **changes):
        """Raises ConfigError (field, value, fix) for a config that can never work; the run is then unchanged."""
        self.act(Change.config(self.cursor, changes))

    def set_options(self, overlap: bool | None = None, adaptive=KEEP):
        """Switch overlapped scheduling, or the adaptive controller (None: off), from the cursor on; raises
        ConfigError when overlap meets speculative decoding, the run then unchanged."""
        self.act(Change.config(self.cursor, {"overlap": overlap} if overlap is not None else {"adaptive": adaptive}))

    def add_request(self, prompt: str, max_tokens: int, priority: int = 0, stop_token_ids: str = "",
                    min_tokens: int = 0):
        """A request typed in by hand, arriving at the frame shown; `stop_token_ids` as typed ("12, 7")."""
        prompt = prompt.strip()
        if not prompt:
            raise LabError("lab.empty_prompt")
        try:
            request = Request(prompt=prompt, max_tokens=int(max_tokens), priority=int(priority),
                              temperature=self.inputs.temperature if self.inputs else 0.0,
                              stop_token_ids=token_ids_typed(stop_token_ids), min_tokens=int(min_tokens))
        except ValueError as e:
            raise LabError("lab.request_refused", reason=message_of(e)) from None
        self.act(Change.request(self.cursor, request))


def token_ids_typed(typed: str) -> tuple[int, ...]:
    """Token ids typed as "12, 7" (commas or spaces); LabError naming what would work."""
    words = typed.replace(",", " ").split()
    low, high = BOUNDS["token_id"]
    if len(words) > BOUNDS["stop_token_ids"][1] or not all(w.isdigit() and low <= int(w) <= high for w in words):
        raise LabError("lab.token_ids", typed=typed, most=BOUNDS["stop_token_ids"][1])
    return tuple(int(w) for w in words)


def open_trace(data: bytes, name: str = "trace") -> Lab:
    """A read-only lab over a JSON trace written by `python -m engine run ... --json` (or the policy lab)."""
    try:
        store, trace = read_trace(data)
    except UnknownScheduler as e:  # written by a process that had it: what the file needs, not what is wrong in it
        raise LabError("lab.trace_scheduler_missing", name=name, error=message_of(e)) from None
    except ValueError as e:  # TraceError: the schema's sentence, naming where the file does not fit
        raise LabError("lab.not_a_trace", name=name, error=message_of(e)) from None
    return Lab(trace_frames=store, trace_title=Message("lab.trace_title", title=trace.get("title") or name),
               trace_scheduler=trace["scheduler"])  # the schema's: an older trace's is the default
