"""Policy comparison: one workload run under two to six configs (RUN_BOUNDS["variants"]), each in its own engine,
measured alike.

    runs = compare(variants_for("prefill-first vs decode-first", base, "en"), workload)
    values = metric_values(runs[0])  # every compared number of a run, by name
    summary_of(runs), verdicts_of(runs)  # what the summary and the verdict say, as numbers

viz/compare_words.py says them in words (the metric table, the summary, the verdict).

Every run is independent and deterministic (same runner kind, seed and cost model), so the differences come
from the configs alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from functools import partial
from itertools import combinations
from statistics import fmean

from engine.inputs.scenario import Scenario
from engine.inputs.workload import lengths, poisson_arrivals, random_workload
from engine.run.adaptive import AdaptiveBatch, step_latencies
from engine.run.engine import Engine
from engine.run.frame import Frame
from engine.run.metrics import (
    RequestMetrics,
    RunMetrics,
    Span,
    internal_fragmentation,
    percentile,
    recomputed_tokens,
    run_metrics,
)
from engine.run.recipe import RUN_BOUNDS, CostModel, Request, RunSpec
from engine.traces.schema import ENDINGS
from engine.traces.trace import trace_dict
from i18n import Message, MessageError, text
from scheduler import Config
from scheduler.factory import DEFAULT_KIND, SCHEDULER_KINDS, scheduler_info
from scheduler.settings import Sweep

MIN_VARIANTS, MAX_VARIANTS = map(int, RUN_BOUNDS["variants"])  # the runs one comparison holds (a tour's: one per kind)
ADAPTIVE = AdaptiveBatch()  # the controller of the "adaptive batch size off vs on" comparison
DEFAULT_COST = CostModel()
MAX_STEPS = 10_000  # the most steps a run of a comparison takes
BLOCK_SIZES = (4, 16, 64)

# A workload generated on the spot: 200 requests of 8-96 prompt tokens and 4-64 output tokens arriving about
# one every two steps, on a pool that is too small for all of them at once (so policies matter).
GENERATED_CONFIG = Config(max_num_seqs=16, max_num_batched_tokens=512, max_model_len=256, num_kvcache_blocks=64,
                          kvcache_block_size=16, enable_prefix_caching=False)


def generated_workload(n: int = 200, rate: float = 0.5, seed: int = 0, shared_fraction: float = 0.5) -> list[Request]:
    """`n` random-token requests with Poisson arrivals (`rate` per step); `shared_fraction` of them start with
    the same 32-token prefix, so prefix caching has something to find."""
    return random_workload(n, seed, arrivals=poisson_arrivals(n, rate, seed),
                           prompt_lengths=lengths(n, "uniform", seed, 8, 96),
                           max_tokens=lengths(n, "uniform", seed + 1, 4, 64), shared_prefix_len=32,
                           shared_fraction=shared_fraction, ignore_eos=True)


@dataclass(frozen=True)
class Variant:
    label: str
    config: Config
    overlap: bool = False  # overlapped scheduling (engine/run/overlap.py)
    adaptive: AdaptiveBatch | None = None  # the adaptive batch size controller (engine/run/adaptive.py)
    scheduler: str = DEFAULT_KIND  # one of scheduler.factory.SCHEDULER_KINDS


def same_capacity(base: Config, block_size: int) -> Config:
    """`base` with another block size and as many blocks as keep the pool's token capacity (at least one)."""
    return replace(base, kvcache_block_size=block_size,
                   num_kvcache_blocks=max(1, base.kv_capacity_tokens // block_size))


def _sweep(sweep: Sweep) -> Callable[..., list[Variant]]:
    return lambda c, say: [Variant(say(label.key, **label.values), replace(c, **{sweep.key: value}))
                           for label, value in sweep.values]


# The comparisons of a kind's own settings, as it declares them (`KindSettings.sweeps`)
KIND_SWEEPS = tuple(sweep for kind in SCHEDULER_KINDS if (own := scheduler_info(kind).settings) for sweep in own.sweeps)
# Named comparisons: each turns a base config into its variants, labelled in a language (`compare.variant.*`): the
# kinds' sweeps, then those of the shared settings.
COMPARISONS: dict[str, Callable[..., list[Variant]]] = {
    **{sweep.name: _sweep(sweep) for sweep in KIND_SWEEPS},
    "whole vs chunked prefill": lambda c, say: [
        Variant(say("compare.variant.whole"), replace(c, chunked_prefill=False)),
        Variant(say("compare.variant.chunked"), replace(c, chunked_prefill=True))],
    "block size 4 vs 16 vs 64": lambda c, say: [Variant(say("compare.variant.block_size", size=size),
                                                        same_capacity(c, size)) for size in BLOCK_SIZES],
    "fcfs vs priority": lambda c, say: [
        Variant(say("compare.variant.fcfs"), replace(c, queue_policy="fcfs")),
        Variant(say("compare.variant.priority"), replace(c, queue_policy="priority"))],
    "prefix caching on vs off": lambda c, say: [
        Variant(say("compare.variant.prefix_on"), replace(c, enable_prefix_caching=True)),
        Variant(say("compare.variant.prefix_off"), replace(c, enable_prefix_caching=False))],
    "speculation off vs on": lambda c, say: [
        Variant(say("compare.variant.no_speculation"), replace(c, num_speculative_tokens=0)),
        Variant(say("compare.variant.speculation"), replace(c, num_speculative_tokens=4))],
    "overlap off vs on": lambda c, say: [
        Variant(say("compare.variant.synchronous"), replace(c, num_speculative_tokens=0)),
        Variant(say("compare.variant.overlapped"), replace(c, num_speculative_tokens=0), overlap=True)],
    "adaptive batch size off vs on": lambda c, say: [
        Variant(say("compare.variant.fixed", max_num_seqs=c.max_num_seqs), c),
        Variant(say("compare.variant.adaptive", low=f"{ADAPTIVE.low_s * 1000:.0f}",
                    high=f"{ADAPTIVE.high_s * 1000:.0f}"), c, adaptive=ADAPTIVE)],
}


def _under_schedulers(kinds: tuple[str, ...]) -> Callable[..., list[Variant]]:
    return lambda c, say: [Variant(say(scheduler_info(kind).run_name), c, scheduler=kind) for kind in kinds]


# The comparisons whose variants name their own scheduler, one per pair of the factory's schedulers and one of them
# all ("article vs vllm", ..., "article vs vllm vs sglang"); every other is run by the scheduler chosen for it.
OWN_SCHEDULERS = tuple(" vs ".join(kinds) for n in range(MIN_VARIANTS, min(len(SCHEDULER_KINDS), MAX_VARIANTS) + 1)
                       for kinds in combinations(SCHEDULER_KINDS, n))
COMPARISONS.update({name: _under_schedulers(tuple(name.split(" vs "))) for name in OWN_SCHEDULERS})


def title_id(comparison: str) -> str:
    """The message id of a named comparison's title (but one of OWN_SCHEDULERS, named by its schedulers): a kind's
    sweep's is its declared title, under the kind's prefix; a shared one's is `compare.name.<name>`."""
    return next((sweep.title for sweep in KIND_SWEEPS if sweep.name == comparison), f"compare.name.{comparison}")


def variants_for(comparison: str, base: Config, lang: str, scheduler: str = DEFAULT_KIND) -> list[Variant]:
    """The variants of a named comparison (see COMPARISONS), labelled in `lang`, each decided by `scheduler`
    (unless the comparison is one of OWN_SCHEDULERS); raises ConfigError if one is impossible."""
    variants = COMPARISONS[comparison](base, partial(text, lang))
    return variants if comparison in OWN_SCHEDULERS else [replace(v, scheduler=scheduler) for v in variants]


def preset_variants(scenario: Scenario, labels: Sequence[str]) -> list[Variant]:
    """A preset's run and its variant's (the variant's config, decided by the variant's scheduler where it names
    one) as the two variants of a comparison, labelled `labels`."""
    specs = (scenario.spec_for(), scenario.spec_for(variant=True))
    return [Variant(label, spec.config, spec.overlap, spec.adaptive, spec.scheduler)
            for label, spec in zip(labels, specs, strict=True)]


def alike_under(kind: str, variants: Sequence[Variant]) -> bool:
    """Whether the variants differ only in settings the scheduler of `kind` does not read (under the vLLM twin:
    prefill-first vs decode-first, tail vs smart preemption; under the article's, vLLM's own knobs), so that under
    it they are one run, repeated."""
    info = scheduler_info(kind)
    return len({(info.as_read(v.config), v.overlap, v.adaptive, v.scheduler) for v in variants}) == 1


@dataclass(frozen=True)
class ConfigRun:
    """One config's run of the workload, with everything the comparison shows: run here by its own engine, or made
    elsewhere and handed in as a trace (`recorded_run`), shown and measured alike."""
    label: str
    config: Config  # the config it started with (an adaptive controller changes max_num_seqs as it goes)
    stop_reason: str  # Engine.run's, or a recorded run's (`recorded_run`)
    scheduler: str  # the kind that decided it (scheduler.factory)
    overlap: bool
    adaptive: AdaptiveBatch | None
    frames: list[Frame]
    run: RunMetrics
    requests: list[RequestMetrics]
    recomputed_tokens: int
    fragmentation: list[float]  # internal fragmentation after each step 1..n
    elapsed_s: float  # real time this run took, recording and measuring included
    engine: Engine | None = None  # the run's engine; None for a recorded run (`trace` holds it)
    trace: dict | None = None  # a recorded run's trace, as checked (engine/traces/schema.py)
    ended: Message | None = None  # why a recorded run ended before its requests did (a broken invariant), or None

    @property
    def mean_fragmentation(self) -> float:
        return fmean(self.fragmentation) if self.fragmentation else 0.0

    def trace_dict(self, title: str | None = None) -> dict:
        """The run as a trace (engine/traces/trace.py) titled `title`: its engine's, or the one it was read from."""
        if self.trace is not None:
            return {**self.trace, "title": title}
        assert self.engine is not None  # a run has one or the other
        return trace_dict(self.engine, title, self.frames)


def _measured(label: str, config: Config, frames: list[Frame], started: float, **made) -> ConfigRun:
    """A run's frames measured as a comparison shows them; `made`: the ConfigRun's fields of how it was made."""
    run, requests = run_metrics(frames)
    return ConfigRun(label, config, frames=frames, run=run, requests=requests,
                     recomputed_tokens=recomputed_tokens(frames),
                     fragmentation=[internal_fragmentation(f) for f in frames[1:]],
                     elapsed_s=time.perf_counter() - started, **made)


def variant_spec(variant: Variant, workload: Sequence[Request], runner: str = "fake", seed: int = 0,
                 cost: CostModel = DEFAULT_COST, max_steps: int = MAX_STEPS) -> RunSpec:
    """The recipe of a variant's run of the workload (a stage made elsewhere is made from the very same)."""
    return RunSpec(variant.config, tuple(workload), runner, seed, cost, variant.adaptive, variant.overlap,
                   variant.scheduler, max_steps=max_steps)


def run_variant(variant: Variant, workload: Sequence[Request], runner: str = "fake", seed: int = 0,
                cost: CostModel = DEFAULT_COST, max_steps: int = MAX_STEPS) -> ConfigRun:
    start = time.perf_counter()
    engine = Engine(variant_spec(variant, workload, runner, seed, cost, max_steps))
    reason = engine.run()
    return _measured(variant.label, variant.config, list(engine.frames), start, stop_reason=reason,
                     scheduler=variant.scheduler, overlap=engine.overlap, adaptive=variant.adaptive, engine=engine)


def recorded_run(label: str, trace: dict, frames: Sequence[Frame], ended: Message | None = None) -> ConfigRun:
    """A stage of the comparison whose frames were made elsewhere (a learner's scheduler, run in the sandbox on the
    comparison's workload): `trace` as checked, `frames` read from it (engine/traces/trace.py trace_store). Its
    stop reason: "stopped" where `ended` says why it stopped early, else the trace's own (Engine.run's)."""
    start, frames = time.perf_counter(), list(frames)
    reason = "stopped" if ended is not None else trace.get("ended", ENDINGS[0])  # a trace written before: finished
    return _measured(label, frames[0].config, frames, start, stop_reason=reason, scheduler=trace["scheduler"],
                     overlap=trace.get("overlap", False), adaptive=None, trace=trace, ended=ended)


def mean_step_ms(run: ConfigRun, wall: bool = False) -> float:
    """Mean simulated (or measured) time per step, in ms."""
    latencies = step_latencies(run.frames, wall)
    return fmean(latencies) * 1000 if latencies else 0.0


def batch_limits(run: ConfigRun) -> list[int]:
    """max_num_seqs each step 1..n ran under."""
    return [f.config.max_num_seqs for f in run.frames[1:]]


def compare(variants: Sequence[Variant], workload: Sequence[Request], runner: str = "fake", seed: int = 0,
            cost: CostModel = DEFAULT_COST, max_steps: int = MAX_STEPS,
            on_progress: Callable[[int, str], None] | None = None) -> list[ConfigRun]:
    """Run the workload under each variant; `on_progress(i, label)` is called before run i starts."""
    if not MIN_VARIANTS <= len(variants) <= MAX_VARIANTS:
        raise MessageError("compare.count", least=MIN_VARIANTS, most=MAX_VARIANTS, n=len(variants))
    labels = [v.label for v in variants]
    if len(set(labels)) != len(labels):
        raise MessageError("compare.names", labels=", ".join(labels))
    runs = []
    for i, variant in enumerate(variants):
        if on_progress:
            on_progress(i, variant.label)
        runs.append(run_variant(variant, workload, runner, seed, cost, max_steps))
    return runs


# -- the numbers side by side ---------------------------------------------------------------------------

def span_stats(spans: Sequence[Span | None]) -> dict[str, float | None]:
    """Mean, p50 and p99 of the known spans, in steps and in simulated milliseconds."""
    known = [s for s in spans if s is not None]
    steps, ms = [s.steps for s in known], [s.s * 1000 for s in known]
    return {"mean steps": fmean(steps) if known else None, "p50 steps": percentile(steps, 50),
            "p99 steps": percentile(steps, 99), "mean ms": fmean(ms) if known else None,
            "p50 ms": percentile(ms, 50), "p99 ms": percentile(ms, 99)}


LATENCIES = {"TTFT": "ttft", "TPOT": "tpot", "end-to-end latency": "e2e", "queueing delay": "queueing"}


def metric_values(run: ConfigRun) -> dict[str, float | int | str | None]:
    """Every compared number of one run, by display name (units in the name; a count pair or range as text)."""
    r, limits = run.run, batch_limits(run)
    values: dict[str, float | int | str | None] = {"steps to finish": r.num_steps, "simulated time (s)": r.sim_time_s,
              "finished / aborted": f"{r.num_finished} / {r.num_aborted}",
              "throughput (tokens/step)": r.throughput_tokens_per_step,
              "throughput (tokens/s)": r.throughput_tokens_per_s, "mean step time (ms)": mean_step_ms(run),
              "mean wall step time (ms)": mean_step_ms(run, wall=True),
              "max_num_seqs (mean)": fmean(limits) if limits else None,
              "max_num_seqs (range)": "{} - {}".format(*_span_of(limits))}
    for name, attr in LATENCIES.items():
        for stat, value in span_stats([getattr(q, attr) for q in run.requests]).items():
            values[f"{name} {stat}"] = value
    values |= {"preemptions": r.num_preemptions, "recomputed tokens": run.recomputed_tokens,
               "prefix-cache hit rate (%)": r.prefix_hit_rate * 100, "mean KV usage (%)": r.mean_kv_usage * 100,
               "mean internal fragmentation (%)": run.mean_fragmentation * 100}
    return values


def _span_of(values: list[int]) -> tuple:
    return (min(values), max(values)) if values else ("-", "-")


# -- what the summary says: how each run differed from the first ----------------------------------------------

MOVED_WITHIN = 0.05  # a measure that moved less than this share is not said to have moved


@dataclass(frozen=True)
class Moved:
    """A measure of a run (`new`) against the first run's (`old`)."""
    new: float
    old: float

    @property
    def up(self) -> bool:
        return self.new > self.old

    @property
    def ratio(self) -> float | None:
        """The larger over the smaller; None unless both are positive."""
        return max(self.new, self.old) / min(self.new, self.old) if self.new > 0 and self.old > 0 else None


def _moved(new: float, old: float) -> Moved | None:
    """`new` against `old` when they differ by 5% or more."""
    if old == new or (old and abs(new - old) / abs(old) < MOVED_WITHIN):
        return None
    return Moved(new, old)


def _mean_steps(run: ConfigRun, attr: str) -> float | None:
    spans = [getattr(q, attr) for q in run.requests if getattr(q, attr) is not None]
    return fmean(s.steps for s in spans) if spans else None


@dataclass(frozen=True)
class Limits:
    """The batch limits (max_num_seqs) a run's steps ran under against the first run's, when they differ."""
    low: int
    high: int
    mean: float
    base_low: int | str  # "-": the first run ran no step
    base_high: int | str


@dataclass(frozen=True)
class Against:
    """How a run differed from the first: each field None where it did not (by 5%, for the measures that move)."""
    label: str
    base: str
    finished: Moved | None  # simulated time to finish every request
    step_ms: Moved | None  # mean simulated step time
    limits: Limits | None
    ttft: Moved | None  # mean steps to the first token
    tpot: Moved | None  # mean steps per later token
    preemptions: Moved | None  # any difference
    recomputed: Moved | None  # any difference
    prefix_hit: Moved | None  # the prefix-cache hit rate, 5 points apart or more
    fragmentation: Moved | None  # mean internal fragmentation, 2 points apart or more

    @property
    def alike(self) -> bool:
        return not any(getattr(self, f.name) for f in fields(self) if f.name not in ("label", "base"))


@dataclass(frozen=True)
class Overlapped:
    """What overlapped scheduling did in a run: how many of its steps were scheduled ahead, how many requests
    finished one step late."""
    overlapped: int
    steps: int
    late: int


@dataclass(frozen=True)
class Summary:
    """Everything the summary says: each run after the first against it, what overlap did, the runs cut short."""
    against: list[Against]
    overlapped: list[Overlapped]
    unfinished: list[str]


def _against(run: ConfigRun, base: ConfigRun) -> Against:
    limits = batch_limits(run)
    differ = bool(limits) and set(limits) != set(batch_limits(base))
    (low, high), (base_low, base_high) = _span_of(limits), _span_of(batch_limits(base))
    ttft, base_ttft = _mean_steps(run, "ttft"), _mean_steps(base, "ttft")
    tpot, base_tpot = _mean_steps(run, "tpot"), _mean_steps(base, "tpot")
    preemptions, recomputed = [Moved(new, old) if new != old else None for new, old in (
        (run.run.num_preemptions, base.run.num_preemptions), (run.recomputed_tokens, base.recomputed_tokens))]
    hit, base_hit = run.run.prefix_hit_rate, base.run.prefix_hit_rate
    frag, base_frag = run.mean_fragmentation, base.mean_fragmentation
    return Against(
        run.label, base.label, _moved(run.run.sim_time_s, base.run.sim_time_s),
        _moved(mean_step_ms(run), mean_step_ms(base)),
        Limits(low, high, fmean(limits), base_low, base_high) if differ else None,
        _moved(ttft, base_ttft) if ttft is not None and base_ttft is not None else None,
        _moved(tpot, base_tpot) if tpot is not None and base_tpot is not None else None,
        preemptions, recomputed, Moved(hit, base_hit) if abs(hit - base_hit) >= 0.05 else None,
        Moved(frag, base_frag) if abs(frag - base_frag) >= 0.02 else None)


def _overlapped(run: ConfigRun) -> Overlapped | None:
    if not run.overlap:
        return None
    return Overlapped(sum(1 for f in run.frames if f.timing and f.timing.overlapped), run.run.num_steps,
                      sum(len(f.events_of("finished_late")) for f in run.frames))


def summary_of(runs: Sequence[ConfigRun]) -> Summary:
    """Every run against the first, saying only what the numbers show (viz/compare_words.py says it)."""
    return Summary([_against(run, runs[0]) for run in runs[1:]], [o for run in runs if (o := _overlapped(run))],
                   [r.label for r in runs if r.stop_reason != "finished"])


# -- the verdict: one answer per question ------------------------------------------------------------------

ALIKE_WITHIN = 0.05  # two values closer than this share of the larger are "alike" (the verdict says so)


def _alike(low: float, high: float) -> bool:
    """Within 5% of the larger, however small both are (a short run's 0.163 s and 0.191 s are not alike)."""
    return high == low or abs(high - low) < ALIKE_WITHIN * max(abs(high), abs(low))


@dataclass(frozen=True)
class Ranking:
    """A lower-is-better measure of each run that has it, (value, label) smallest first; `alike`: the best and the
    worst are within 5%."""
    ranked: list[tuple[float, str]]

    @property
    def measured(self) -> bool:
        return len(self.ranked) >= 2

    @property
    def alike(self) -> bool:
        return _alike(self.ranked[0][0], self.ranked[-1][0])


def _ranking(runs: Sequence[ConfigRun], value: Callable[[ConfigRun], float | None]) -> Ranking:
    return Ranking(sorted((v, run.label) for run in runs if (v := value(run)) is not None))


@dataclass(frozen=True)
class Finish:
    """A request that finished at another step than under the first config."""
    id: int
    tokens: int  # its output length
    step: int
    base_step: int


@dataclass(frozen=True)
class Finishes:
    """Where a run's requests finished against the first run's: the moved ones, the shortest first, and how many
    that finished under the first did not under this one (a run that stopped early)."""
    label: str
    base: str
    moved: list[Finish]
    requests: int
    unfinished: int = 0

    @property
    def sooner(self) -> int:
        return sum(f.step < f.base_step for f in self.moved)


@dataclass(frozen=True)
class MemoryUse:
    """One run's memory: its preemptions and recomputed tokens, mean KV use and empty reserved slots (shares)."""
    label: str
    preemptions: int
    recomputed: int
    kv_usage: float
    fragmentation: float


@dataclass(frozen=True)
class Memory:
    """Where memory ran short or was wasted, run by run."""
    runs: list[MemoryUse]

    @property
    def any_preempted(self) -> bool:
        return any(r.preemptions for r in self.runs)

    @property
    def alike(self) -> bool:
        """Preemptions and recomputed tokens both within 5% across the runs: no run is named the least."""
        preemptions, recomputed = [r.preemptions for r in self.runs], [r.recomputed for r in self.runs]
        return _alike(min(preemptions), max(preemptions)) and _alike(min(recomputed), max(recomputed))

    @property
    def by_preemptions(self) -> list[MemoryUse]:
        return sorted(self.runs, key=lambda r: r.preemptions)

    @property
    def fragmentation_differs(self) -> bool:
        shares = [r.fragmentation for r in self.runs]
        return max(shares) - min(shares) >= 0.02


def _finishes(runs: Sequence[ConfigRun]) -> list[Finishes]:
    """Where runs alike on the averages still part: the requests that finished at another step than under the first
    config, e.g. preset 07's short requests."""
    base = runs[0]
    finish = {q.id: q.finish_step for q in base.requests if q.finish_step is not None}
    each = []
    for run in runs[1:]:
        moved = [Finish(q.id, q.num_output_tokens, step, finish[q.id]) for q in run.requests
                 if (step := q.finish_step) is not None and q.id in finish and step != finish[q.id]]
        finished = {q.id for q in run.requests if q.finish_step is not None}
        each.append(Finishes(run.label, base.label, sorted(moved, key=lambda f: (f.tokens, f.id)),
                             len(run.requests), len(finish.keys() - finished)))
    return each


@dataclass(frozen=True)
class Verdicts:
    """The comparison's answers, one per question a learner asks (viz/compare_words.py words them)."""
    first_token: Ranking  # mean steps to the first token
    later_tokens: Ranking  # mean steps per later token
    whole_workload: Ranking  # simulated seconds to finish it
    each_request: list[Finishes]
    memory: Memory


def verdicts_of(runs: Sequence[ConfigRun]) -> Verdicts:
    return Verdicts(_ranking(runs, lambda r: _mean_steps(r, "ttft")), _ranking(runs, lambda r: _mean_steps(r, "tpot")),
                    _ranking(runs, lambda r: r.run.sim_time_s), _finishes(runs),
                    Memory([MemoryUse(r.label, r.run.num_preemptions, r.recomputed_tokens, r.run.mean_kv_usage,
                                      r.mean_fragmentation) for r in runs]))
