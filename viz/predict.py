"""Predict, then reveal: a multiple-choice question about a step, built from the frames before and after it.

The question asks about the step's most telling decision: who is preempted, else who finishes, else who is
admitted, else how many KV blocks are free after it. The right choice is read off the frame after the step;
the wrong ones are what the frame before makes plausible (other running requests, other prefixes of the
waiting queue, nearby block counts). Built from recorded frames only, it works for presets, custom setups
and traces alike.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.run.frame import Frame
from i18n import count, join_and, text

MAX_CHOICES = 4


@dataclass(frozen=True)
class Question:
    step: int  # the step asked about: the answer is in frame `step`
    text: str
    choices: tuple[str, ...]
    answer: int  # index of the right choice

    @property
    def answer_text(self) -> str:
        return self.choices[self.answer]


def who(ids, lang: str) -> str:
    """"nobody", "request 3", "requests 2 and 3", "requests 1, 2 and 3"."""
    ids = sorted(ids)
    if not ids:
        return text(lang, "predict.nobody")
    return count(lang, "predict.who", len(ids), ids=join_and(lang, ids))


def _ids(frame: Frame, kind: str) -> tuple[int, ...]:
    return tuple(sorted({e.seq_id for e in frame.events_of(kind)}))


def _question(step: int, asked: str, truth, candidates, label) -> Question | None:
    """`truth` and up to three distinct wrong candidates, in a stable order (not the answer's)."""
    options = [truth]
    for candidate in candidates:
        if candidate not in options and len(options) < MAX_CHOICES:
            options.append(candidate)
    if len(options) < 2:
        return None
    options.sort(key=lambda o: (len(o), o) if isinstance(o, tuple) else o)
    return Question(step, asked, tuple(label(o) for o in options), options.index(truth))


def _request_question(step: int, asked: str, truth: tuple[int, ...], candidates, lang: str) -> Question | None:
    return _question(step, asked, truth, [tuple(sorted(c)) for c in candidates], lambda ids: who(ids, lang))


def question_for(before: Frame, after: Frame, lang: str, shown: int | None = None) -> Question:
    """The question about step `after.step`, with what the screen cannot show: the requests that arrive at the start
    of the step, and how far ahead of the frame `shown` (by default `before`, the one just before it) it is."""
    question = _decision_question(before, after, lang)
    context = []
    if arrivals := [i for i in _ids(after, "arrived") if i not in before.waiting]:
        context.append(count(lang, "predict.arrivals", len(arrivals), ids=join_and(lang, arrivals)))
    if shown is not None and (ahead := after.step - shown) > 1:
        context.append(text(lang, "predict.ahead", n=ahead, frame=shown))
    return replace(question, text=" ".join([question.text, *context]))


def _decision_question(before: Frame, after: Frame, lang: str) -> Question:
    step = after.step
    if preempted := _ids(after, "preempted"):
        singles = [(r,) for r in reversed(before.running)]  # the tail first: the reference victim
        question = _request_question(step, text(lang, "predict.preempted", step=step), preempted, [(), *singles],
                                     lang)
    elif finished := _ids(after, "finished"):
        question = _request_question(step, text(lang, "predict.finished", step=step), finished,
                                     [(), *[(r,) for r in before.running]], lang)
    elif admitted := _ids(after, "admitted"):
        queue = [*before.waiting, *(i for i in _ids(after, "arrived") if i not in before.waiting)]
        prefixes = [tuple(queue[:n]) for n in range(len(queue) + 1)]
        question = _request_question(step, text(lang, "predict.admitted", step=step), admitted,
                                     sorted(prefixes, key=lambda p: abs(len(p) - len(admitted))), lang)
    else:
        question = None
    return question or free_blocks_question(before, after, lang)


def free_blocks_question(before: Frame, after: Frame, lang: str) -> Question:
    free, total = after.metrics.num_free_blocks, len(after.blocks)
    nearby = [before.metrics.num_free_blocks, free - 1, free + 1, free - 2, free + 2, free + 3]
    return _question(after.step, text(lang, "predict.free_blocks", step=after.step), free,
                     [n for n in nearby if 0 <= n <= total], str)


def question_steps(key_steps: list[int], frames, last: int) -> list[int]:
    """The steps to ask about: a scenario's key frames; without any, every recorded step with an admission,
    preemption or finish (a custom setup or a trace)."""
    if key_steps:
        return [s for s in key_steps if s >= 1]
    return [s for s in range(1, last + 1)
            if any(frames[s].events_of(kind) for kind in ("admitted", "preempted", "finished"))]
