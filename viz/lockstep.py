"""The words and marks of the lockstep stages (player/lockstep.js): two to six runs of one workload stepped on one
slider, the steps where their decisions part (engine/analysis/partings.py) marked on it and told in `lang`:
"Step 7: tail preemption preempts request 4; smart preemption preempts request 2."
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.analysis.partings import KINDS, SENT_BACK, Decision, Parting, partings
from engine.run.frame import Frame
from i18n import count, join_and, messages, text
from viz.compare import config_color


def _decisions(lang: str, own: Sequence[Decision]) -> list[str]:
    """One phrase per kind of decision: "admits requests 3 (5 tokens) and 4 (3 tokens)", "preempts request 2"."""
    phrases = []
    for kind in KINDS:
        of_kind = [d for d in own if d.kind == kind]
        if of_kind:
            items = [str(d.seq_id) if kind in SENT_BACK else
                     text(lang, "lockstep.item", id=d.seq_id, tokens=count(lang, "n.token", d.num_tokens))
                     for d in of_kind]
            phrases.append(count(lang, f"lockstep.did.{kind}", len(items), items=join_and(lang, items)))
    return phrases


def run_phrase(label: str, own: Sequence[Decision], batch, *, lang: str) -> str:
    """What one run did at a parting: its own decisions, or, with none, the batch it ran."""
    if own:
        did = join_and(lang, _decisions(lang, own))
    elif batch.kind == "idle":
        did = text(lang, "lockstep.did.idle")
    else:
        did = text(lang, "lockstep.did.batch_only", kind=text(lang, f"batch.{batch.kind}"),
                   requests=count(lang, "n.request", len(batch.seq_ids)))
    return text(lang, "lockstep.run", label=label, did=did)


def _runs_did(parting: Parting, labels: Sequence[str], lang: str) -> str:
    """"tail preemption preempts request 4; smart preemption preempts request 2" """
    return text(lang, "lockstep.run_sep").join(run_phrase(label, own, batch, lang=lang) for label, own, batch
                                               in zip(labels, parting.own, parting.batches, strict=True))


def parting_sentence(parting: Parting, labels: Sequence[str], *, lang: str) -> str:
    """"Step 7: tail preemption preempts request 4; smart preemption preempts request 2." """
    return text(lang, "lockstep.sentence", step=parting.step, runs=_runs_did(parting, labels, lang))


def partings_answer(runs: Sequence[tuple[str, Sequence[Frame]]], *, lang: str) -> str:
    """The lab's answer to "where do the decisions part": every parting step, and what the first one was, or that
    they never part."""
    found = partings([f for _, f in runs])
    if not found:
        return text(lang, "lockstep.answer.never")
    return count(lang, "lockstep.answer", len(found), steps=join_and(lang, [p.step for p in found]),
                 first=_runs_did(found[0], [label for label, _ in runs], lang))


def lockstep_marks(runs: Sequence[tuple[str, Sequence[Frame]]], *, lang: str,
                   told: Sequence[tuple[int, str]] | None = None) -> dict:
    """What the lockstep stages show besides each run's frames: the partings ([step, sentence] each; `told`, when
    the caller words them its own way, as the tour does), a colour per run (the lab's charts' colours) and the
    words of the shared controls."""
    labels = [label for label, _ in runs]
    if told is None:
        told = [(p.step, parting_sentence(p, labels, lang=lang)) for p in partings([f for _, f in runs])]
    return {"partings": [[step, sentence] for step, sentence in told],
            "colors": [config_color(i) for i in range(len(runs))], "lang": lang,
            "strings": messages(lang, "lockstep.ui.")}
