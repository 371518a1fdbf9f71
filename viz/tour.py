"""The words of the learning-path tour (engine/analysis/tour.py) in `lang`: a line on each scheduler kind from its
own declaration, and each step where the stop's runs part, explained from what each scheduler recorded there (its
decisions, its batch, its events saying why: viz/narrate.py words them with the numbers the scheduler used), with
the source lines of its system that decided it.

    for told in explained(runs, lang="en"):  # runs: [(kind, frames)] in the stop's order
        told.sentence  # "Step 2: ... admits requests 3 (10 tokens) and 4 (8 tokens); ... only runs its decode ..."
        told.runs[1].why  # ["Request 3 waits: the batch is full (max_num_seqs=3)."]
        told.runs[1].links  # [Link("how the batch is formed", "scheduler.py L611-L662", "https://github.com/...")]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.analysis.partings import KINDS, Parting, partings
from engine.run.frame import BatchView, Frame
from i18n import count, text
from scheduler.factory import scheduler_info
from viz.lockstep import parting_sentence
from viz.narrate import describe

SOURCE_ORDER = ("batch", *KINDS, "wait")  # the order a run's source links are listed in
# a reason the scheduler recorded (partings.WHY) -> the decision whose source lines gave it
REASON_SOURCE = {"preempted": "preempt", "retracted": "retract", "pass_ended": "preempt", "blocked": "wait"}


@dataclass(frozen=True)
class Link:
    """The lines of a system's source that decide one kind of decision: what they decide, where, the address."""
    what: str
    where: str
    url: str


@dataclass(frozen=True)
class RunTold:
    """One run at a parting: its name, its batch in words, why its requests left or waited (its own events, in
    the order it recorded them) and the source lines of its system that decided the step."""
    name: str
    batch: str
    why: tuple[str, ...]
    links: tuple[Link, ...]


@dataclass(frozen=True)
class Told:
    step: int
    sentence: str  # what each run did that not every run did (viz/lockstep.py's parting sentence)
    runs: tuple[RunTold, ...]
    whole: str  # the sentence and every run's batch and reasons, as the lockstep stages tell the step


def kind_name(kind: str, lang: str) -> str:
    """A kind's display name, from its declaration."""
    return text(lang, scheduler_info(kind).name)


def kind_line(kind: str, lang: str) -> str:
    """"vLLM V1 (vLLM 0.32): <its own line>": the release the kind mirrors and what it says of itself on the tour."""
    info = scheduler_info(kind)
    summary = text(lang, info.tour.summary) if info.tour else text(lang, "tour.no_summary")
    if not info.version:  # it follows its system without claiming a release (the article's: its name says it)
        return text(lang, "tour.kind_line.unversioned", name=kind_name(kind, lang), summary=summary)
    return text(lang, "tour.kind_line", name=kind_name(kind, lang), system=f"{info.system} {info.version}",
                summary=summary)


def batch_words(batch: BatchView, lang: str) -> str:
    """"a mixed batch: 3 requests, 14 tokens." """
    if batch.kind == "idle":
        return text(lang, "tour.batch_idle")
    return text(lang, "tour.batch", kind=text(lang, f"batch.{batch.kind}"),
                requests=count(lang, "n.request", len(batch.seq_ids)),
                tokens=count(lang, "n.token", batch.total_tokens))


def source_links(kind: str, parting: Parting, i: int, lang: str) -> tuple[Link, ...]:
    """The source lines of run i's system that decided its part of `parting`: how its batch was formed, each kind
    of decision it made, and why requests left or waited; none where the kind declares no tour."""
    tour = scheduler_info(kind).tour
    if tour is None:
        return ()
    decided = {"batch", *(d.kind for d in parting.own[i]),
               *(REASON_SOURCE[e.kind] for e in (parting.why[i] if parting.why else ()))}
    lines = dict(tour.lines)
    return tuple(Link(text(lang, f"tour.source.{decision}"), _where(lines[decision]), url)
                 for decision in SOURCE_ORDER if decision in decided and (url := tour.link(decision)))


def _where(lines: str) -> str:
    """"scheduler.py#L611-L662" as a reader reads it: "scheduler.py L611-L662"."""
    path, _, anchor = lines.partition("#")
    return f"{path.partition('?')[0]} {anchor}".strip()


def explained(runs: Sequence[tuple[str, Sequence[Frame]]], *, lang: str) -> list[Told]:
    """Every step where the runs (kind, frames) part, each run told by its own decisions, batch and reasons."""
    names = [kind_name(kind, lang) for kind, _ in runs]
    told = []
    for parting in partings([frames for _, frames in runs]):
        each = []
        for i, (kind, frames) in enumerate(runs):
            frame, before = frames[parting.step], frames[parting.step - 1]
            why = tuple(describe(e, frame, before, lang=lang) for e in parting.why[i])
            each.append(RunTold(names[i], batch_words(parting.batches[i], lang), why,
                                source_links(kind, parting, i, lang)))
        sentence = parting_sentence(parting, names, lang=lang)
        told.append(Told(parting.step, sentence, tuple(each), text(lang, "tour.why_sep").join(
            [sentence, *(text(lang, "tour.run_told", name=r.name, batch=r.batch,
                              why=text(lang, "tour.why_sep").join(r.why)).strip() for r in each)])))
    return told
