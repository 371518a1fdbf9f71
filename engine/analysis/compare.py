"""Policy comparison: one workload run under two to four configs, each in its own engine, measured alike.

    runs = compare(variants_for("prefill-first vs decode-first", base, "en"), workload)
    print(verdicts(runs, "en"))     # one answer per question: first token, later tokens, whole workload, memory
    print(summary(runs, "en"))      # plain sentences, generated from the numbers
    rows = metric_rows(runs, lang="en")  # one row per metric, one column per config

Every run is independent and deterministic (same runner kind, seed and cost model), so the differences come
from the configs alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from itertools import combinations
from statistics import fmean

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
from engine.run.recipe import CostModel, Request, RunSpec
from i18n import MessageError, join_and, text
from scheduler import Config
from scheduler.config import SCHEDULE_POLICIES
from scheduler.factory import DEFAULT_KIND, SCHEDULER_KINDS, scheduler_info

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
    overlap: bool = False  # overlapped scheduling (engine/run/overlap.py)
    adaptive: AdaptiveBatch | None = None  # the adaptive batch size controller (engine/run/adaptive.py)
    scheduler: str = DEFAULT_KIND  # one of scheduler.factory.SCHEDULER_KINDS


def same_capacity(base: Config, block_size: int) -> Config:
    """`base` with another block size and as many blocks as keep the pool's token capacity (at least one)."""
    return replace(base, kvcache_block_size=block_size,
                   num_kvcache_blocks=max(1, base.kv_capacity_tokens // block_size))


# Named comparisons: each turns a base config into its variants, labelled in a language (`compare.variant.*`).
COMPARISONS: dict[str, Callable[..., list[Variant]]] = {
    "prefill-first vs decode-first": lambda c, say: [
        Variant(say("compare.variant.prefill_first"), replace(c, prefill_first=True)),
        Variant(say("compare.variant.decode_first"), replace(c, prefill_first=False))],
    "whole vs chunked prefill": lambda c, say: [
        Variant(say("compare.variant.whole"), replace(c, chunked_prefill=False)),
        Variant(say("compare.variant.chunked"), replace(c, chunked_prefill=True))],
    "tail vs smart preemption": lambda c, say: [
        Variant(say("compare.variant.tail"), replace(c, preemption_policy="tail")),
        Variant(say("compare.variant.smart"), replace(c, preemption_policy="smart"))],
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
    "whole sequence vs first chunk at admission (vLLM)": lambda c, say: [  # scheduler_reserve_full_isl
        Variant(say("compare.variant.reserve_on"), replace(c, scheduler_reserve_full_isl=True)),
        Variant(say("compare.variant.reserve_off"), replace(c, scheduler_reserve_full_isl=False))],
    "watermark 0 vs 0.1 (vLLM)": lambda c, say: [
        Variant(say("compare.variant.watermark", watermark=0), replace(c, watermark=0.0)),
        Variant(say("compare.variant.watermark", watermark=0.1), replace(c, watermark=0.1))],
    "vLLM 0.32 vs 0.33": lambda c, say: [  # vllm_version: the vLLM release whose decisions the twin makes
        Variant(say("compare.variant.vllm_version", version=release), replace(c, vllm_version=release))
        for release in ("0.32", "0.33")],
    "lpm vs dfs-weight vs fcfs vs lof (SGLang)": lambda c, say: [  # SGLang's waiting-queue orders, side by side
        Variant(say("compare.variant.schedule_policy", policy=policy), replace(c, schedule_policy=policy))
        for policy in SCHEDULE_POLICIES],
}


def _under_schedulers(kinds: tuple[str, ...]) -> Callable[..., list[Variant]]:
    return lambda c, say: [Variant(say(f"compare.variant.{kind}"), c, scheduler=kind) for kind in kinds]


# The comparisons whose variants name their own scheduler, one per pair of the factory's schedulers and one of them
# all ("article vs vllm", ..., "article vs vllm vs sglang"); every other is run by the scheduler chosen for it.
OWN_SCHEDULERS = tuple(" vs ".join(kinds) for n in range(2, min(len(SCHEDULER_KINDS), MAX_VARIANTS) + 1)
                       for kinds in combinations(SCHEDULER_KINDS, n))
COMPARISONS.update({name: _under_schedulers(tuple(name.split(" vs "))) for name in OWN_SCHEDULERS})


def variants_for(comparison: str, base: Config, lang: str, scheduler: str = DEFAULT_KIND) -> list[Variant]:
    """The variants of a named comparison (see COMPARISONS), labelled in `lang`, each decided by `scheduler`
    (unless the comparison is one of OWN_SCHEDULERS); raises ConfigError if one is impossible."""
    variants = COMPARISONS[comparison](base, partial(text, lang))
    return variants if comparison in OWN_SCHEDULERS else [replace(v, scheduler=scheduler) for v in variants]


def alike_under(kind: str, variants: Sequence[Variant]) -> bool:
    """Whether the variants differ only in settings the scheduler of `kind` does not read (under the vLLM twin:
    prefill-first vs decode-first, tail vs smart preemption; under the article's, vLLM's own knobs), so that under
    it they are one run, repeated."""
    unread = {name: getattr(Config(), name) for name in scheduler_info(kind).ignored}
    return len({(replace(v.config, **unread), v.overlap, v.adaptive, v.scheduler) for v in variants}) == 1


@dataclass(frozen=True)
class ConfigRun:
    """One config's run of the workload, with everything the comparison shows."""
    label: str
    config: Config  # the config it started with (an adaptive controller changes max_num_seqs as it goes)
    stop_reason: str
    engine: Engine  # for exports (engine.traces.trace); its frames are `frames`
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
    engine = Engine(RunSpec(variant.config, workload, runner, seed, cost, variant.adaptive, variant.overlap,
                            variant.scheduler, max_steps=max_steps))
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
        raise MessageError("compare.count", most=MAX_VARIANTS, n=len(variants))
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


def metric_label(name: str, lang: str) -> str:
    """A metric of `metric_values` named in `lang`: "TTFT p99 steps", "TTFT p99（步）"."""
    for latency, attr in LATENCIES.items():
        if name.startswith(latency + " "):
            stat, unit = name[len(latency) + 1:].split()
            return text(lang, "compare.latency_stat", latency=text(lang, f"compare.latency.{attr}"),
                        stat=text(lang, f"compare.stat.{stat}"), unit=text(lang, f"compare.unit.{unit}"))
    return text(lang, f"compare.metric.{name}")


def metric_rows(runs: Sequence[ConfigRun], digits: int = 2, *, lang: str) -> list[dict]:
    """One row per metric: {"metric": name, <label>: value, ...}, floats rounded to `digits`, names in `lang`."""
    columns = [metric_values(run) for run in runs]
    header = text(lang, "compare.metric")
    return [{header: metric_label(name, lang), **{run.label: _rounded(col[name], digits)
                                                  for run, col in zip(runs, columns, strict=True)}}
            for name in columns[0]]


def _rounded(value, digits: int):
    return round(value, digits) if isinstance(value, float) else value


# -- the summary ----------------------------------------------------------------------------------------

def _change(lang: str, new: float, old: float, more: str, less: str) -> str | None:
    """"12% more" / "3.1x less" style words for new against old (`more`, `less`: ids of compare.word.*); None when
    they differ by under 5%."""
    if old == new or (old and abs(new - old) / abs(old) < 0.05):
        return None
    word = text(lang, f"compare.word.{more if new > old else less}")
    if old <= 0 or new <= 0:
        return text(lang, "compare.against_values", word=word, new=f"{new:.3g}", old=f"{old:.3g}")
    ratio = new / old if new > old else old / new
    if ratio >= 1.5:
        return text(lang, "compare.times", ratio=f"{ratio:.1f}", word=word)
    return text(lang, "compare.percent", percent=f"{abs(new - old) / old:.0%}", word=word)


def _mean_steps(run: ConfigRun, attr: str) -> float | None:
    spans = [getattr(q, attr) for q in run.requests if getattr(q, attr) is not None]
    return fmean(s.steps for s in spans) if spans else None


def _differences(run: ConfigRun, base: ConfigRun, lang: str) -> list[str]:
    phrases = []
    if words := _change(lang, run.run.sim_time_s, base.run.sim_time_s, "later", "sooner"):
        phrases.append(text(lang, "compare.diff.finished", words=words))
    step_ms, base_step_ms = mean_step_ms(run), mean_step_ms(base)
    if words := _change(lang, step_ms, base_step_ms, "longer", "less_time"):
        phrases.append(text(lang, "compare.diff.step", words=words, ms=f"{step_ms:.1f}", base=f"{base_step_ms:.1f}"))
    if (limits := batch_limits(run)) and set(limits) != set(batch_limits(base)):
        (low, high), (base_low, base_high) = _span_of(limits), _span_of(batch_limits(base))
        phrases.append(text(lang, "compare.diff.limits", low=low, high=high, mean=f"{fmean(limits):.1f}",
                            base_low=base_low, base_high=base_high))
    for what, attr, more, less in (("ttft", "ttft", "longer", "less"), ("tpot", "tpot", "longer", "less_time")):
        new, old = _mean_steps(run, attr), _mean_steps(base, attr)
        if new is not None and old is not None and (words := _change(lang, new, old, more, less)):
            phrases.append(text(lang, f"compare.diff.{what}", words=words))
    for what, new, old in (("preemptions", run.run.num_preemptions, base.run.num_preemptions),
                           ("recomputed", run.recomputed_tokens, base.recomputed_tokens)):
        if new != old:
            phrases.append(text(lang, f"compare.diff.{what}", new=new, old=old))
    if abs(run.run.prefix_hit_rate - base.run.prefix_hit_rate) >= 0.05:
        phrases.append(text(lang, "compare.diff.prefix", new=f"{run.run.prefix_hit_rate:.0%}",
                            old=f"{base.run.prefix_hit_rate:.0%}"))
    if abs(run.mean_fragmentation - base.mean_fragmentation) >= 0.02:
        phrases.append(text(lang, "compare.diff.fragmentation", new=f"{run.mean_fragmentation:.0%}",
                            old=f"{base.mean_fragmentation:.0%}"))
    return phrases


def _how_it_ran(run: ConfigRun, lang: str) -> str | None:
    """What an optimisation did in a run, for the summary: how many steps overlapped, how many requests
    finished one step late."""
    if not run.engine.overlap:
        return None
    overlapped = sum(1 for f in run.frames if f.timing and f.timing.overlapped)
    late = sum(len(f.events_of("finished_late")) for f in run.frames)
    return text(lang, "compare.overlap_late" if late else "compare.overlap_none_late", overlapped=overlapped,
                steps=run.run.num_steps, late=late)


def summary(runs: Sequence[ConfigRun], lang: str) -> str:
    """One paragraph comparing every run with the first, saying only what the numbers show."""
    base, sentences = runs[0], []
    for run in runs[1:]:
        phrases = _differences(run, base, lang)
        if phrases:
            sentences.append(text(lang, "compare.against", base=base.label, run=run.label,
                                  phrases=join_and(lang, phrases)))
        else:
            sentences.append(text(lang, "compare.alike", base=base.label, run=run.label))
    sentences += filter(None, (_how_it_ran(run, lang) for run in runs))
    unfinished = [r.label for r in runs if r.stop_reason != "finished"]
    if unfinished:
        sentences.append(text(lang, "compare.unfinished", labels=text(lang, "list.sep").join(unfinished)))
    return text(lang, "compare.sentence_sep").join(sentences)


# -- the verdict: one answer per question ------------------------------------------------------------------

def _ranked(runs: Sequence[ConfigRun], value: Callable[[ConfigRun], float | None]) -> list[tuple[float, str]]:
    """(value, label) of each run that has the value, smallest first."""
    return sorted((v, run.label) for run in runs if (v := value(run)) is not None)


ALIKE_WITHIN = 0.05  # two values closer than this share of the larger are "alike" (the verdict says so)


def _alike(low: float, high: float) -> bool:
    """Within 5% of the larger, however small both are (a short run's 0.163 s and 0.191 s are not alike)."""
    return high == low or abs(high - low) < ALIKE_WITHIN * max(abs(high), abs(low))


def _shown(value: float) -> str:
    """A compared value with the digits that tell it apart: 0.163 s, 12.4 steps."""
    return f"{value:.3g}" if abs(value) < 10 else f"{value:.1f}"


def _lower_is_better(lang: str, runs: Sequence[ConfigRun], value: Callable[[ConfigRun], float | None], better: str,
                     measure: str, unit: str) -> str:
    """"prefill-first 3.1x sooner (mean TTFT 2.0 against 6.2 steps)", or "alike" within 5% (`better`, `measure`,
    `unit`: ids of compare.word.*, compare.measure.* and compare.unit.*)."""
    ranked = _ranked(runs, value)
    if len(ranked) < 2:
        return text(lang, "compare.not_measured")
    (best, winner), (worst, loser) = ranked[0], ranked[-1]
    measure, unit, better = (text(lang, f"compare.measure.{measure}"), text(lang, f"compare.unit.{unit}"),
                             text(lang, f"compare.word.{better}"))
    if _alike(best, worst):
        return text(lang, "compare.all_alike", measure=measure, value=_shown(best), unit=unit)
    ratio = worst / best if best else None
    how = (text(lang, "compare.times", ratio=f"{ratio:.1f}", word=better) if ratio and ratio >= 1.5 else
           text(lang, "compare.percent", percent=f"{(worst - best) / worst:.0%}", word=better))
    others = text(lang, "list.sep").join(text(lang, "compare.value_for", value=_shown(v), label=label)
                                         for v, label in ranked[1:])
    return text(lang, "compare.winner", winner=winner, how=how, loser=loser, measure=measure, value=_shown(best),
                unit=unit, others=others)


def _memory(runs: Sequence[ConfigRun], lang: str) -> str:
    """Preemptions, recomputed tokens and empty reserved slots: where memory ran short or was wasted."""
    sep = text(lang, "list.sep")
    preemptions, recomputed = [r.run.num_preemptions for r in runs], [r.recomputed_tokens for r in runs]
    if not any(preemptions):
        answer = text(lang, "compare.memory.none")
    elif _alike(min(preemptions), max(preemptions)) and _alike(min(recomputed), max(recomputed)):
        answer = text(lang, "compare.memory.alike", n=sep.join(dict.fromkeys(map(str, preemptions))),
                      tokens=sep.join(dict.fromkeys(map(str, recomputed))))
    else:
        best, *rest = sorted(runs, key=lambda r: r.run.num_preemptions)
        others = sep.join(text(lang, "compare.memory.other", n=r.run.num_preemptions, tokens=r.recomputed_tokens,
                               label=r.label) for r in rest)
        answer = text(lang, "compare.memory.least", label=best.label, n=best.run.num_preemptions,
                      tokens=best.recomputed_tokens, others=others)
    answer += text(lang, "compare.memory.kv", kv=sep.join(f"{r.label} {r.run.mean_kv_usage:.0%}" for r in runs))
    if max(r.mean_fragmentation for r in runs) - min(r.mean_fragmentation for r in runs) >= 0.02:
        answer += text(lang, "compare.memory.empty",
                       wasted=sep.join(f"{r.label} {r.mean_fragmentation:.0%}" for r in runs))
    return answer


def _finish_steps(runs: Sequence[ConfigRun], lang: str) -> str:
    """Where runs alike on the averages still part: the requests that finished at another step than under the first
    config (the shortest requests first, each with its output length), e.g. preset 07's short requests."""
    base, sep, parts = runs[0], text(lang, "list.sep"), []
    finish = {q.id: q.finish_step for q in base.requests}
    for run in runs[1:]:
        moved = sorted((q for q in run.requests if q.finish_step is not None and finish.get(q.id) is not None
                        and q.finish_step != finish[q.id]), key=lambda q: (q.num_output_tokens, q.id))
        if not moved:
            parts.append(text(lang, "compare.finish.same", run=run.label, base=base.label))
            continue
        shown = sep.join(text(lang, "compare.finish.request", id=q.id, tokens=q.num_output_tokens, step=q.finish_step,
                              base_step=finish[q.id]) for q in moved[:FINISH_LISTED])
        sooner = sum(q.finish_step < finish[q.id] for q in moved)
        parts.append(text(lang, "compare.finish.moved", run=run.label, base=base.label, requests=shown,
                          sooner=sooner, later=len(moved) - sooner, same=len(run.requests) - len(moved),
                          more=text(lang, "compare.finish.more", n=len(moved) - FINISH_LISTED)
                          if len(moved) > FINISH_LISTED else ""))
    return text(lang, "compare.finish.sep").join(parts)  # one clause per run after the first


FINISH_LISTED = 4  # requests named in the finish-step answer; the rest are counted


def verdicts(runs: Sequence[ConfigRun], lang: str) -> list[tuple[str, str]]:
    """The comparison's answers, one per question a learner asks: (question, answer), from the numbers."""
    answers = (
        ("first_token", _lower_is_better(lang, runs, lambda r: _mean_steps(r, "ttft"), "sooner", "ttft", "steps")),
        ("later_tokens", _lower_is_better(lang, runs, lambda r: _mean_steps(r, "tpot"), "faster", "tpot", "steps")),
        ("whole_workload", _lower_is_better(lang, runs, lambda r: r.run.sim_time_s, "sooner", "time", "s")),
        ("each_request", _finish_steps(runs, lang)),
        ("memory", _memory(runs, lang)),
    )
    return [(text(lang, f"compare.question.{question}"), answer) for question, answer in answers]
