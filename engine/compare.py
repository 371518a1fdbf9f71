"""Policy comparison: one workload run under two to four configs, each in its own engine, measured alike.

    runs = compare(variants_for("prefill-first vs decode-first", base), workload)
    print(verdicts(runs))           # one answer per question: first token, later tokens, whole workload, memory
    print(summary(runs))            # plain sentences, generated from the numbers
    rows = metric_rows(runs)        # one row per metric, one column per config

Every run is independent and deterministic (same runner kind, seed and cost model), so the differences come
from the configs alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from statistics import fmean

from engine.adaptive import AdaptiveBatch, step_latencies
from engine.engine import CostModel, Engine
from engine.frame import Frame
from engine.metrics import (
    RequestMetrics,
    RunMetrics,
    Span,
    internal_fragmentation,
    percentile,
    recomputed_tokens,
    run_metrics,
)
from engine.workload import Request, lengths, poisson_arrivals, random_workload
from scheduler import Config

MAX_VARIANTS = 4
ADAPTIVE = AdaptiveBatch()  # the controller of the "adaptive batch size off vs on" comparison
DEFAULT_COST = CostModel()
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
    overlap: bool = False  # overlapped scheduling (engine/overlap.py)
    adaptive: AdaptiveBatch | None = None  # the adaptive batch size controller (engine/adaptive.py)


def same_capacity(base: Config, block_size: int) -> Config:
    """`base` with another block size and as many blocks as keep the pool's token capacity (at least one)."""
    return replace(base, kvcache_block_size=block_size,
                   num_kvcache_blocks=max(1, base.kv_capacity_tokens // block_size))


# Named comparisons: each turns a base config into its variants.
COMPARISONS: dict[str, Callable[[Config], list[Variant]]] = {
    "prefill-first vs decode-first": lambda c: [Variant("prefill-first", replace(c, prefill_first=True)),
                                                Variant("decode-first", replace(c, prefill_first=False))],
    "whole vs chunked prefill": lambda c: [Variant("whole prefill", replace(c, chunked_prefill=False)),
                                           Variant("chunked prefill", replace(c, chunked_prefill=True))],
    "tail vs smart preemption": lambda c: [Variant("tail preemption", replace(c, preemption_policy="tail")),
                                           Variant("smart preemption", replace(c, preemption_policy="smart"))],
    "block size 4 vs 16 vs 64": lambda c: [Variant(f"block size {size}", same_capacity(c, size))
                                           for size in BLOCK_SIZES],
    "prefix caching on vs off": lambda c: [Variant("prefix caching on", replace(c, enable_prefix_caching=True)),
                                           Variant("prefix caching off", replace(c, enable_prefix_caching=False))],
    "speculation off vs on": lambda c: [Variant("no speculation", replace(c, num_speculative_tokens=0)),
                                        Variant("n-gram speculation, k=4", replace(c, num_speculative_tokens=4))],
    "overlap off vs on": lambda c: [Variant("synchronous", replace(c, num_speculative_tokens=0)),
                                    Variant("overlapped scheduling", replace(c, num_speculative_tokens=0),
                                            overlap=True)],
    "adaptive batch size off vs on": lambda c: [
        Variant(f"fixed max_num_seqs={c.max_num_seqs}", c),
        Variant(f"adaptive batch size ({ADAPTIVE.low_s * 1000:.0f}-{ADAPTIVE.high_s * 1000:.0f} ms)", c,
                adaptive=ADAPTIVE)],
}


def variants_for(comparison: str, base: Config) -> list[Variant]:
    """The variants of a named comparison (see COMPARISONS); raises ConfigError if one is impossible."""
    return COMPARISONS[comparison](base)


@dataclass(frozen=True)
class ConfigRun:
    """One config's run of the workload, with everything the comparison shows."""
    label: str
    config: Config  # the config it started with (an adaptive controller changes max_num_seqs as it goes)
    stop_reason: str
    engine: Engine  # for exports (engine.trace); its frames are `frames`
    frames: list[Frame]
    run: RunMetrics
    requests: list[RequestMetrics]
    recomputed_tokens: int
    fragmentation: list[float]  # internal fragmentation after each step 1..n
    elapsed_s: float  # real time this run took, recording and measuring included

    @property
    def mean_fragmentation(self) -> float:
        return fmean(self.fragmentation) if self.fragmentation else 0.0


def run_variant(variant: Variant, workload: Sequence[Request], runner: str = "fake", seed: int = 0,
                cost: CostModel = DEFAULT_COST, max_steps: int = 10_000) -> ConfigRun:
    start = time.perf_counter()
    engine = Engine(variant.config, workload, runner, seed, cost, record=True, max_steps=max_steps,
                    adaptive=variant.adaptive, overlap=variant.overlap)
    reason = engine.run()
    frames = list(engine.frames)
    run, requests = run_metrics(frames)
    return ConfigRun(variant.label, variant.config, reason, engine, frames, run, requests, recomputed_tokens(frames),
                     [internal_fragmentation(f) for f in frames[1:]], time.perf_counter() - start)


def mean_step_ms(run: ConfigRun, wall: bool = False) -> float:
    """Mean simulated (or measured) time per step, in ms."""
    latencies = step_latencies(run.frames, wall)
    return fmean(latencies) * 1000 if latencies else 0.0


def batch_limits(run: ConfigRun) -> list[int]:
    """max_num_seqs each step 1..n ran under."""
    return [f.config.max_num_seqs for f in run.frames[1:]]


def compare(variants: Sequence[Variant], workload: Sequence[Request], runner: str = "fake", seed: int = 0,
            cost: CostModel = DEFAULT_COST, max_steps: int = 10_000,
            on_progress: Callable[[int, str], None] | None = None) -> list[ConfigRun]:
    """Run the workload under each variant; `on_progress(i, label)` is called before run i starts."""
    if not 2 <= len(variants) <= MAX_VARIANTS:
        raise ValueError(f"compare two to {MAX_VARIANTS} configs, not {len(variants)}")
    labels = [v.label for v in variants]
    if len(set(labels)) != len(labels):
        raise ValueError(f"give each config its own name; got {labels}")
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


def metric_values(run: ConfigRun) -> dict[str, float | int | None]:
    """Every compared number of one run, by display name (units in the name)."""
    r, limits = run.run, batch_limits(run)
    values = {"steps to finish": r.num_steps, "simulated time (s)": r.sim_time_s,
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


def metric_rows(runs: Sequence[ConfigRun], digits: int = 2) -> list[dict]:
    """One row per metric: {"metric": name, <label>: value, ...}, floats rounded to `digits`."""
    columns = [metric_values(run) for run in runs]
    return [{"metric": name, **{run.label: _rounded(col[name], digits) for run, col in zip(runs, columns,
                                                                                          strict=True)}}
            for name in columns[0]]


def _rounded(value, digits: int):
    return round(value, digits) if isinstance(value, float) else value


# -- the summary ----------------------------------------------------------------------------------------

def _change(new: float, old: float, more: str, less: str) -> str | None:
    """"12% more" / "3.1x less" style words for new against old; None when they differ by under 5%."""
    if old == new or (old and abs(new - old) / abs(old) < 0.05):
        return None
    if old <= 0 or new <= 0:
        return f"{more if new > old else less} ({new:.3g} against {old:.3g})"
    ratio = new / old if new > old else old / new
    word = more if new > old else less
    return f"{ratio:.1f}x {word}" if ratio >= 1.5 else f"{abs(new - old) / old:.0%} {word}"


def _mean_steps(run: ConfigRun, attr: str) -> float | None:
    spans = [getattr(q, attr) for q in run.requests if getattr(q, attr) is not None]
    return fmean(s.steps for s in spans) if spans else None


def _differences(run: ConfigRun, base: ConfigRun) -> list[str]:
    phrases = []
    if words := _change(run.run.sim_time_s, base.run.sim_time_s, "later", "sooner"):
        phrases.append(f"finished all requests {words}")
    step_ms, base_step_ms = mean_step_ms(run), mean_step_ms(base)
    if words := _change(step_ms, base_step_ms, "longer", "less time"):
        phrases.append(f"made each step take {words} on average ({step_ms:.1f} ms against {base_step_ms:.1f} ms)")
    if (limits := batch_limits(run)) and set(limits) != set(batch_limits(base)):
        low, high = _span_of(limits)
        phrases.append(f"ran under max_num_seqs from {low} to {high} (mean {fmean(limits):.1f}) against "
                       "{} to {}".format(*_span_of(batch_limits(base))))
    for name, attr, more, less in (("the first token wait", "ttft", "longer", "less"),
                                   ("each later token take", "tpot", "longer", "less time")):
        new, old = _mean_steps(run, attr), _mean_steps(base, attr)
        if new is not None and old is not None and (words := _change(new, old, more, less)):
            phrases.append(f"made {name} {words} on average")
    for name, new, old in (("preemptions", run.run.num_preemptions, base.run.num_preemptions),
                           ("recomputed tokens", run.recomputed_tokens, base.recomputed_tokens)):
        if new != old:
            phrases.append(f"had {new} {name} against {old}")
    if abs(run.run.prefix_hit_rate - base.run.prefix_hit_rate) >= 0.05:
        phrases.append(f"found {run.run.prefix_hit_rate:.0%} of prompt blocks in the prefix cache against "
                       f"{base.run.prefix_hit_rate:.0%}")
    if abs(run.mean_fragmentation - base.mean_fragmentation) >= 0.02:
        phrases.append(f"left {run.mean_fragmentation:.0%} of its reserved KV slots empty against "
                       f"{base.mean_fragmentation:.0%}")
    return phrases


def _join(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def _how_it_ran(run: ConfigRun) -> str | None:
    """What an optimisation did in a run, for the summary: how many steps overlapped, how many requests
    finished one step late."""
    if not run.engine.overlap:
        return None
    overlapped = sum(1 for f in run.frames if f.timing and f.timing.overlapped)
    late = sum(len(f.events_of("finished_late")) for f in run.frames)
    return (f"With overlapped scheduling, {overlapped} of {run.run.num_steps} steps were scheduled while the model "
            f"computed the step before" + (f", and {late} request(s) finished one step late on EOS." if late else
                                           "; no request finished late."))


def summary(runs: Sequence[ConfigRun]) -> str:
    """One paragraph comparing every run with the first, saying only what the numbers show."""
    base, sentences = runs[0], []
    for run in runs[1:]:
        phrases = _differences(run, base)
        if phrases:
            sentences.append(f"Against {base.label}, {run.label} {_join(phrases)}.")
        else:
            sentences.append(f"{run.label} and {base.label} performed alike on this workload (within 5%).")
    sentences += filter(None, map(_how_it_ran, runs))
    unfinished = [r.label for r in runs if r.stop_reason != "finished"]
    if unfinished:
        sentences.append(f"Not every run finished: {', '.join(unfinished)} stopped early (stalled or out of "
                         "steps), so its numbers cover only part of the workload.")
    return " ".join(sentences)


# -- the verdict: one answer per question ------------------------------------------------------------------

def _ranked(runs: Sequence[ConfigRun], value: Callable[[ConfigRun], float | None]) -> list[tuple[float, str]]:
    """(value, label) of each run that has the value, smallest first."""
    return sorted((v, run.label) for run in runs if (v := value(run)) is not None)


def _lower_is_better(runs: Sequence[ConfigRun], value: Callable[[ConfigRun], float | None], better: str,
                     measure: str, unit: str) -> str:
    """"prefill-first 3.1x sooner (mean TTFT 2.0 against 6.2 steps)", or "alike" within 5%."""
    ranked = _ranked(runs, value)
    if len(ranked) < 2:
        return "not measured: too few requests got that far"
    (best, winner), (worst, loser) = ranked[0], ranked[-1]
    if worst == best or (best and (worst - best) / worst < 0.05) or (not best and worst < 0.05):
        return f"alike in every config ({measure} {best:.1f} {unit}, within 5%)"
    ratio = worst / best if best else None
    how = f"{ratio:.1f}x {better}" if ratio and ratio >= 1.5 else f"{(worst - best) / worst:.0%} {better}"
    others = ", ".join(f"{v:.1f} for {label}" for v, label in ranked[1:])
    return f"{winner} {how} than {loser} ({measure} {best:.1f} {unit}, against {others})"


def _memory(runs: Sequence[ConfigRun]) -> str:
    """Preemptions, recomputed tokens and empty reserved slots: where memory ran short or was wasted."""
    if all(r.run.num_preemptions == 0 for r in runs):
        text = "no config ran out of KV blocks (no preemption)"
    else:
        best, *rest = sorted(runs, key=lambda r: r.run.num_preemptions)
        others = ", ".join(f"{r.run.num_preemptions} ({r.recomputed_tokens} tokens recomputed) for {r.label}"
                           for r in rest)
        text = (f"{best.label} ran out of KV blocks least: {best.run.num_preemptions} preemptions "
                f"({best.recomputed_tokens} tokens recomputed), against {others}")
    kv = ", ".join(f"{r.label} {r.run.mean_kv_usage:.0%}" for r in runs)
    text += f"; mean KV use: {kv}"
    if max(r.mean_fragmentation for r in runs) - min(r.mean_fragmentation for r in runs) >= 0.02:
        wasted = ", ".join(f"{r.label} {r.mean_fragmentation:.0%}" for r in runs)
        text += f"; reserved slots left empty: {wasted}"
    return text


def verdicts(runs: Sequence[ConfigRun]) -> list[tuple[str, str]]:
    """The comparison's answers, one per question a learner asks: (question, answer), from the numbers."""
    return [
        ("first token", _lower_is_better(runs, lambda r: _mean_steps(r, "ttft"), "sooner", "mean TTFT", "steps")),
        ("later tokens", _lower_is_better(runs, lambda r: _mean_steps(r, "tpot"), "faster", "mean TPOT", "steps")),
        ("whole workload", _lower_is_better(runs, lambda r: r.run.sim_time_s, "sooner", "simulated time",
                                            "s")),
        ("memory", _memory(runs)),
    ]
