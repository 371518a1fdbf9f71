"""An assignment: goals a student's run must meet (engine/inputs/goals.py) and the settings the student may change,
every other one locked. A scenario file carries it as its `[assignment]` table (format in scenarios/README.md).

A run is judged against the scenario it was opened from: its goals on the run's frames (`Assignment.judge`), and
its rules on the run's recipe (`broken_rules`), so a locked setting changed by any way in (a link, a changed
sidebar) is named, with the frame it was changed at.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from engine.inputs.goals import GOALS, PASS, Evidence, Verdict
from engine.run.recipe import RunSpec
from i18n import Message
from scheduler.factory import SETTINGS

if TYPE_CHECKING:
    from engine.inputs.scenario import _Loader

# What an assignment may leave a student free to change: every config field, the engine options, the scheduler,
# the model, the seed, the temperature, and adding requests by hand. Anything else (the workload, the cost model)
# is always locked.
RUN_SETTINGS = ("overlap", "adaptive", "scheduler", "runner", "seed", "temperature", "requests")
LOCKABLE = (*SETTINGS, *RUN_SETTINGS)
MAX_GOALS = 12


@dataclass(frozen=True)
class Goal:
    kind: str  # a key of GOALS
    params: tuple[tuple[str, Any], ...]  # (name, value), in the order GOALS[kind] declares them

    @property
    def words(self) -> Message:
        """What the goal asks, e.g. "Request 3 finishes by step 20."."""
        return GOALS[self.kind].words(**dict(self.params))

    def check(self, evidence: Evidence) -> Verdict:
        return GOALS[self.kind].check(evidence, **dict(self.params))


@dataclass(frozen=True)
class Judgement:
    """Each goal with its verdict, and the rules the run broke (a locked setting changed), at the frame judged."""
    verdicts: tuple[tuple[Goal, Verdict], ...]
    broken: tuple[Message, ...]
    ended: bool

    @property
    def passed(self) -> bool:
        """Every goal met at the run's end, every rule kept."""
        return self.ended and not self.broken and all(v.state == PASS for _, v in self.verdicts)

    def count(self, state: str) -> int:
        return sum(v.state == state for _, v in self.verdicts)


@dataclass(frozen=True)
class Assignment:
    goals: tuple[Goal, ...]
    may_change: tuple[str, ...] = ()

    def locks(self, name: str) -> bool:
        return name not in self.may_change

    def judge(self, evidence: Evidence, given: RunSpec, run: RunSpec) -> Judgement:
        """The run of recipe `run` (opened from the scenario's recipe `given`) judged on `evidence`."""
        return Judgement(tuple((g, g.check(evidence)) for g in self.goals), tuple(self.broken_rules(given, run)),
                         evidence.ended)

    def broken_rules(self, given: RunSpec, run: RunSpec) -> list[Message]:
        """The locked settings the run set otherwise than the scenario, and those it changed mid-run (each once)."""
        start, scenario = settings_of(run), settings_of(given)
        broken = [Message("assignment.locked_at_start", name=name, value=_said(start[name]),
                          given=_said(scenario[name]))
                  for name in scenario if start[name] != scenario[name] and self.locks(name)]
        for change in run.changes:
            names = ("requests",) if change.kind == "request" else tuple(change.settings)
            broken += [Message("assignment.added_request" if name == "requests" else "assignment.locked_changed",
                               name=name, at=change.step) for name in names if self.locks(name)]
        return list(dict.fromkeys(broken))


def settings_of(spec: RunSpec) -> dict[str, Any]:
    """Every setting of a recipe an assignment may lock, by name; `workload` (temperatures aside) and `cost` too."""
    return {**{key: spec.config.value(key) for key in SETTINGS},
            "overlap": spec.overlap, "adaptive": spec.adaptive, "scheduler": spec.scheduler, "runner": spec.runner,
            "seed": spec.seed, "temperature": tuple(sorted({r.temperature for r in spec.workload})),
            "workload": tuple(replace(r, temperature=0.0) for r in spec.workload),
            "cost": spec.cost}


def _said(value) -> str:
    return "…" if isinstance(value, tuple) and len(value) > 3 else repr(value)


def read_assignment(loader: _Loader, table: dict, num_requests: int) -> Assignment:
    """The `[assignment]` table of a scenario file, checked by `loader` (engine/inputs/scenario.py's, whose
    `fail(key, message id, **values)` refuses the file at a key) against a workload of `num_requests` requests."""
    loader.table(table, "assignment", {"may_change": list, "goals": list}, required=("goals",))
    for i, name in enumerate(table.get("may_change", [])):
        if name not in LOCKABLE:
            loader.fail(f"assignment.may_change[{i}]", "assignment.unknown_setting", name=repr(name),
                        names=", ".join(LOCKABLE))
    if not 1 <= len(table["goals"]) <= MAX_GOALS:
        loader.fail("assignment.goals", "assignment.goal_count", n=len(table["goals"]), most=MAX_GOALS)
    goals = tuple(_goal(loader, g, f"assignment.goals[{i}]", num_requests) for i, g in enumerate(table["goals"]))
    return Assignment(goals, tuple(dict.fromkeys(table.get("may_change", []))))


def _goal(loader: _Loader, table, where: str, num_requests: int) -> Goal:
    kind = table.get("kind") if isinstance(table, dict) else None
    if kind not in GOALS or GOALS[kind].coding:  # a coding assignment's goal reads what only its grading has
        loader.fail(f"{where}.kind", "assignment.unknown_goal", kind=repr(kind),
                    kinds=", ".join(k for k, g in GOALS.items() if not g.coding))
    params = GOALS[kind].params
    loader.table(table, where, {"kind": str, **{name: p.type for name, p in params.items()}},
                 required=tuple(name for name, p in params.items() if p.required))
    for name, p in params.items():
        value, key = table.get(name), f"{where}.{name}"
        if value is None:
            continue
        high = num_requests - 1 if name == "request" else p.high
        if p.choices and value not in p.choices:
            loader.fail(key, "assignment.not_a_choice", value=repr(value), choices=", ".join(p.choices))
        if not p.choices and not p.low <= value <= high:
            loader.fail(key, "scenario.out_of_range", value=repr(value), low=p.low, high=high)
    return Goal(kind, tuple((name, p.type(table[name])) for name, p in params.items() if name in table))
