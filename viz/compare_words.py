"""A comparison in words (engine/analysis/compare.py measures it): the metric table's names, the summary's
sentences and the verdict's answers, in the language asked for.

    print(summary(runs, "en"))           # plain sentences, generated from the numbers
    print(verdicts(runs, "en"))          # one answer per question: first token, later tokens, whole workload, memory
    rows = metric_rows(runs, lang="en")  # one row per metric, one column per config
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.analysis.compare import (
    LATENCIES,
    OWN_SCHEDULERS,
    Against,
    ConfigRun,
    Finishes,
    Memory,
    Moved,
    Ranking,
    metric_values,
    summary_of,
    title_id,
    verdicts_of,
)
from i18n import count, join_and, text
from scheduler.factory import scheduler_info

TIMES_FROM = 1.5  # a ratio this large is said as "3.1x", a smaller one as a percentage
FINISH_LISTED = 4  # requests named in the finish-step answer; the rest are counted


# -- the metric table -------------------------------------------------------------------------------------

def metric_label(name: str, lang: str, batch_limit: str = "max_num_seqs") -> str:
    """A metric of `metric_values` named in `lang`: "TTFT p99 steps", "TTFT p99（步）"; the batch limit's rows under
    `batch_limit`, the name (or names) the runs' systems give max_num_seqs."""
    for latency, attr in LATENCIES.items():
        if name.startswith(latency + " "):
            stat, unit = name[len(latency) + 1:].split()
            return text(lang, "compare.latency_stat", latency=text(lang, f"compare.latency.{attr}"),
                        stat=text(lang, f"compare.stat.{stat}"), unit=text(lang, f"compare.unit.{unit}"))
    return text(lang, f"compare.metric.{name}", name=batch_limit)


def metric_rows(runs: Sequence[ConfigRun], digits: int = 2, *, lang: str) -> list[dict]:
    """One row per metric: {"metric": name, <label>: value, ...}, floats rounded to `digits`, names in `lang`."""
    columns = [metric_values(run) for run in runs]
    header = text(lang, "compare.metric")
    batch_limit = " / ".join(dict.fromkeys(scheduler_info(run.scheduler).setting_name("max_num_seqs")
                                           for run in runs))  # SGLang's max_running_requests
    return [{header: metric_label(name, lang, batch_limit), **{run.label: _rounded(col[name], digits)
                                                  for run, col in zip(runs, columns, strict=True)}}
            for name in columns[0]]


def _rounded(value, digits: int):
    return round(value, digits) if isinstance(value, float) else value


# -- the summary ----------------------------------------------------------------------------------------

def _how_much(lang: str, moved: Moved, more: str, less: str) -> str:
    """"12% more" / "3.1x less" style words for a measure that moved (`more`, `less`: ids of compare.word.*)."""
    word = text(lang, f"compare.word.{more if moved.up else less}")
    if moved.ratio is None:
        return text(lang, "compare.against_values", word=word, new=f"{moved.new:.3g}", old=f"{moved.old:.3g}")
    if moved.ratio >= TIMES_FROM:
        return text(lang, "compare.times", ratio=f"{moved.ratio:.1f}", word=word)
    return text(lang, "compare.percent", percent=f"{abs(moved.new - moved.old) / moved.old:.0%}", word=word)


def _differences(d: Against, lang: str) -> list[str]:
    phrases = []
    if d.finished:
        phrases.append(text(lang, "compare.diff.finished", words=_how_much(lang, d.finished, "later", "sooner")))
    if d.step_ms:
        phrases.append(text(lang, "compare.diff.step", words=_how_much(lang, d.step_ms, "longer", "less_time"),
                            ms=f"{d.step_ms.new:.1f}", base=f"{d.step_ms.old:.1f}"))
    if d.limits:
        phrases.append(text(lang, "compare.diff.limits", low=d.limits.low, high=d.limits.high,
                            mean=f"{d.limits.mean:.1f}", base_low=d.limits.base_low, base_high=d.limits.base_high))
    for what, moved, more, less in (("ttft", d.ttft, "longer", "less"), ("tpot", d.tpot, "longer", "less_time")):
        if moved:
            phrases.append(text(lang, f"compare.diff.{what}", words=_how_much(lang, moved, more, less)))
    for what, moved in (("preemptions", d.preemptions), ("recomputed", d.recomputed)):
        if moved:
            phrases.append(text(lang, f"compare.diff.{what}", new=moved.new, old=moved.old))
    for what, moved in (("prefix", d.prefix_hit), ("fragmentation", d.fragmentation)):
        if moved:
            phrases.append(text(lang, f"compare.diff.{what}", new=f"{moved.new:.0%}", old=f"{moved.old:.0%}"))
    return phrases


def summary(runs: Sequence[ConfigRun], lang: str) -> str:
    """One paragraph comparing every run with the first, saying only what the numbers show."""
    said, sentences = summary_of(runs), []
    for d in said.against:
        if d.alike:
            sentences.append(text(lang, "compare.alike", base=d.base, run=d.label))
        else:
            sentences.append(text(lang, "compare.against", base=d.base, run=d.label,
                                  phrases=join_and(lang, _differences(d, lang))))
    sentences += [text(lang, "compare.overlap_late" if o.late else "compare.overlap_none_late",
                       overlapped=o.overlapped, steps=o.steps, late=o.late) for o in said.overlapped]
    if said.unfinished:
        sentences.append(text(lang, "compare.unfinished", labels=text(lang, "list.sep").join(said.unfinished)))
    return text(lang, "compare.sentence_sep").join(sentences)


# -- the verdict: one answer per question ------------------------------------------------------------------

def _shown(value: float) -> str:
    """A compared value with the digits that tell it apart: 0.163 s, 12.4 steps."""
    return f"{value:.3g}" if abs(value) < 10 else f"{value:.1f}"


def _lower_is_better(lang: str, ranking: Ranking, better: str, measure: str, unit: str) -> str:
    """"prefill-first 3.1x sooner (mean TTFT 2.0 against 6.2 steps)", or "alike" within 5% (`better`, `measure`,
    `unit`: ids of compare.word.*, compare.measure.* and compare.unit.*)."""
    if not ranking.measured:
        return text(lang, "compare.not_measured")
    (best, winner), (worst, loser) = ranking.ranked[0], ranking.ranked[-1]
    measure, unit, better = (text(lang, f"compare.measure.{measure}"), text(lang, f"compare.unit.{unit}"),
                             text(lang, f"compare.word.{better}"))
    if ranking.alike:
        return text(lang, "compare.all_alike", measure=measure, value=_shown(best), unit=unit)
    ratio = worst / best if best else None
    how = (text(lang, "compare.times", ratio=f"{ratio:.1f}", word=better) if ratio and ratio >= TIMES_FROM else
           text(lang, "compare.percent", percent=f"{(worst - best) / worst:.0%}", word=better))
    others = text(lang, "list.sep").join(text(lang, "compare.value_for", value=_shown(v), label=label)
                                         for v, label in ranking.ranked[1:])
    return text(lang, "compare.winner", winner=winner, how=how, loser=loser, measure=measure, value=_shown(best),
                unit=unit, others=others)


def _memory(memory: Memory, lang: str) -> str:
    """Preemptions, recomputed tokens and empty reserved slots: where memory ran short or was wasted."""
    sep = text(lang, "list.sep")
    if not memory.any_preempted:
        answer = text(lang, "compare.memory.none")
    elif memory.alike:
        answer = text(lang, "compare.memory.alike", n=sep.join(dict.fromkeys(str(r.preemptions) for r in memory.runs)),
                      tokens=sep.join(dict.fromkeys(str(r.recomputed) for r in memory.runs)))
    else:
        best, *rest = memory.by_preemptions
        others = sep.join(text(lang, "compare.memory.other", n=r.preemptions, tokens=r.recomputed, label=r.label)
                          for r in rest)
        answer = count(lang, "compare.memory.least", best.preemptions, label=best.label, tokens=best.recomputed,
                       others=others)
    def shares(share) -> str:  # each config's share in words around it: "watermark 0 56%" read as two numbers
        return sep.join(text(lang, "compare.memory.share", label=r.label, share=f"{share(r):.0%}") for r in memory.runs)

    answer += text(lang, "compare.memory.kv", kv=shares(lambda r: r.kv_usage))
    if memory.fragmentation_differs:
        answer += text(lang, "compare.memory.empty", wasted=shares(lambda r: r.fragmentation))
    return answer


def _finish_steps(each: Sequence[Finishes], lang: str) -> str:
    """The requests that finished at another step than under the first config (the shortest first, each with its
    output length), run by run."""
    sep, parts = text(lang, "list.sep"), []
    for run in each:
        unfinished = text(lang, "compare.finish.unfinished", n=run.unfinished, run=run.label, base=run.base) \
            if run.unfinished else ""  # a run that stopped early: its requests past its end are not the same
        if not run.moved:
            same = "compare.finish.same_finished" if run.unfinished else "compare.finish.same"
            parts.append(text(lang, same, run=run.label, base=run.base) + unfinished)
            continue
        shown = sep.join(text(lang, "compare.finish.request", id=f.id, tokens=f.tokens, step=f.step,
                              base_step=f.base_step) for f in run.moved[:FINISH_LISTED])
        parts.append(text(lang, "compare.finish.moved", run=run.label, base=run.base, requests=shown,
                          sooner=run.sooner, later=len(run.moved) - run.sooner,
                          same=run.requests - len(run.moved) - run.unfinished,
                          more=text(lang, "compare.finish.more", n=len(run.moved) - FINISH_LISTED)
                          if len(run.moved) > FINISH_LISTED else "") + unfinished)
    return text(lang, "compare.finish.sep").join(parts)  # one clause per run after the first


def verdicts(runs: Sequence[ConfigRun], lang: str) -> list[tuple[str, str]]:
    """The comparison's answers, one per question a learner asks: (question, answer), from the numbers."""
    found = verdicts_of(runs)
    answers = (
        ("first_token", _lower_is_better(lang, found.first_token, "sooner", "ttft", "steps")),
        ("later_tokens", _lower_is_better(lang, found.later_tokens, "faster", "tpot", "steps")),
        ("whole_workload", _lower_is_better(lang, found.whole_workload, "sooner", "time", "s")),
        ("each_request", _finish_steps(found.each_request, lang)),
        ("memory", _memory(found.memory, lang)),
    )
    return [(text(lang, f"compare.question.{question}"), answer) for question, answer in answers]


def comparison_name(comparison: str, lang: str) -> str:
    """A named comparison's title in `lang`: one of schedulers names them by their runs' names ("the article's
    scheduler vs the vLLM twin"), any other by its title's message (engine/analysis/compare.py `title_id`)."""
    if comparison in OWN_SCHEDULERS:
        return text(lang, "compare.versus").join(text(lang, scheduler_info(kind).run_name)
                                                 for kind in comparison.split(" vs "))
    return text(lang, title_id(comparison))
