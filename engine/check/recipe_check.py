"""The referee's hold of a trace to the recipe the server sent (engine/run/recipe.py RunSpec): the run's seed and
runner, every request of its workload and those added by hand (a request dropped from the trace, a shorter prompt or
a smaller max_tokens is caught), each frame's config as the recipe's changes and the adaptive controller make it,
and on the fake model the simulated clock, stepped as the engine steps it (engine/run/engine.py `_advance_clocks`,
`_adapt`), so that neither a larger pool nor a faster clock can be claimed."""

from __future__ import annotations

import math
from dataclasses import replace

from engine.check.invariants import holds
from engine.run.frame import Frame, RequestView
from engine.run.overlap import StepClock
from engine.run.recipe import Options, RunSpec, checked_change
from engine.run.runner_factory import FakeTokenizer
from engine.traces.trace import config_changes
from scheduler import Config, SamplingParams


class RecipeCheck:
    """Frames checked in order against `spec`; `replays`: the run was on the fake model (its clock simulated)."""

    def __init__(self, spec: RunSpec, replays: bool):
        self.spec, self.replays = spec, replays
        self.config, self.options, self.cost = spec.config, Options(spec.overlap, spec.adaptive), spec.cost
        self.clock, self.sim_time_s, self.latency = StepClock(), 0.0, 0.0

    def check_run(self, trace: dict, sampling: list[SamplingParams], last: Frame):
        """The trace's seed, runner and config changes, and its requests (each summary with its `sampling` and its
        view in the `last` frame) those the recipe asked for that arrived by then (one of the workload's by its
        arrival's frame, one added by hand by the frame after it was added)."""
        spec = self.spec
        for field, claimed, actual in (("seed", trace["seed"], spec.seed), ("runner", trace["runner"], spec.runner),
                                       ("config_changes", trace.get("config_changes"), config_changes(spec))):
            holds(claimed == actual, "recipe", field=field, claimed=shown(claimed), actual=shown(actual))
        arrived = [*(r for r in spec.workload if r.arrival <= last.step),
                   *(c.payload for c in spec.changes if c.kind == "request" and c.step < last.step)]
        asked = sorted(map(self.asked, arrived))
        made = sorted(self.recorded(summary, params, view) for summary, params, view  # a summary beyond the
                      in zip(trace["requests"], sampling, last.requests, strict=False))  # frames: the referee's
        holds(len(made) == len(asked), "recipe", field="requests", claimed=len(made), actual=len(asked))
        for got, wanted in zip(made, asked, strict=True):
            holds(got == wanted, "recipe", field="request", claimed=shown(got), actual=shown(wanted))

    def asked(self, request) -> tuple:
        """A request as a trace records it: arrival, prompt (its token ids on the fake model, whose tokenizer the
        server has), max_tokens, what decides its end (ignore_eos, stop_token_ids, min_tokens) and priority."""
        prompt = request.prompt_token_ids
        if prompt is None:
            prompt = tuple(FakeTokenizer().encode(request.prompt)) if self.replays else request.prompt
        params = request.sampling_params()
        return (request.arrival, prompt, request.max_tokens, params.ignore_eos, params.stop_token_ids,
                params.min_tokens, request.priority)

    def recorded(self, summary: dict, params: SamplingParams, view: RequestView) -> tuple:
        """A request as the trace records it (its summary, its sampling and its last view), in `asked`'s shape."""
        prompt = tuple(summary["prompt_token_ids"]) if self.replays or summary.get("prompt") is None \
            else summary["prompt"]
        return (summary.get("arrival"), prompt, view.max_tokens, params.ignore_eos, params.stop_token_ids,
                params.min_tokens, view.priority)

    def check_frame(self, frame: Frame):
        """Frame k's config is the recipe's after the changes made up to frame k - 1 (and the adaptive controller's
        choice after step k - 1); on the fake model its clock is the cost model's over its batch. Then the step's
        own choice and the changes made at frame k, for the frames after it (engine/run/engine.py `step`)."""
        if frame.step:
            self._check_clock(frame)
        claimed, config = frame.config, self.config
        if not self.replays:  # the model's own end-of-sequence token; the controller read wall times
            config = replace(config, eos=claimed.eos, **({"max_num_seqs": claimed.max_num_seqs}
                                                         if self.options.adaptive is not None else {}))
        holds(claimed == config, "recipe", field="config", claimed=shown(_differing(claimed, config)),
              actual=shown(_differing(config, claimed)))
        if frame.step and self.replays and self.options.adaptive is not None and frame.batch.seq_ids:
            size = self.options.adaptive.next_max_num_seqs(config.max_num_seqs, self.latency, len(frame.batch.seq_ids))
            self.config = replace(config, max_num_seqs=min(size, config.max_num_batched_tokens))
        for change in self.spec.changes:
            if change.step == frame.step and change.kind == "config":
                self.config, self.options = checked_change(self.config, self.options, change.settings)
                self.cost = change.settings.get("cost") or self.cost

    def _check_clock(self, frame: Frame):
        """The simulated clock at the end of the step: its batch under the cost model, overlapped only where the
        recipe overlaps (engine/run/overlap.py StepClock)."""
        if not self.replays:
            return
        overlapped = frame.timing is not None and frame.timing.overlapped
        holds(not overlapped or self.options.overlap, "recipe", field="overlap", claimed=True, actual=False)
        cost = self.cost
        timing = self.clock.step(frame.step, cost.schedule_s, cost.model_time(sum(frame.batch.num_tokens)),
                                 cost.postprocess_s, cost.handoff_s, self.options.overlap, overlapped)
        holds(frame.timing == timing and math.isclose(frame.sim_time_s, timing.end), "clock",
              claimed=frame.sim_time_s, actual=timing.end)
        self.latency, self.sim_time_s = timing.end - self.sim_time_s, timing.end


def _differing(config: Config, other: Config) -> dict:
    """The settings of `config` that differ from `other`'s."""
    return {key: value for key, value in vars(config).items() if getattr(other, key) != value}


def shown(value) -> str:
    """A value as a message says it, cut short."""
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
