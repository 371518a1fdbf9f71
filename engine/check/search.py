"""The search for a workload that breaks a kind's invariants (`python -m engine check`): Hypothesis draws random
configs and workloads (strategies.py), drives the kind on each (invariants.py), and shrinks the first failure to the
smallest workload that still fails. Derandomized, so the same scheduler gets the same verdict each time."""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, Verbosity, given, settings

from engine.check.invariants import drive
from engine.check.strategies import configs, workloads
from scheduler import Config
from scheduler.config import CONFIG_FIELDS
from scheduler.factory import scheduler_info
from scheduler.settings import declared

CONFIGS = configs(eos=(-1, 7), long_prefill=(0, 0, 3))


@dataclass
class Verdict:
    """How many workloads were tried and, where one broke an invariant or raised, the smallest such: its config,
    its requests (arrival step, sequence as drawn, abort step or None) and the error."""
    tried: int = 0
    config: Config = field(default_factory=Config)
    workload: list = field(default_factory=list)
    error: Exception | None = None


def search(kind: str, examples: int = 200) -> Verdict:
    verdict = Verdict()

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True, report_multiple_bugs=False,
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False,
              phases=[p for p in Phase if p is not Phase.explain])  # no notes of the app's lines on the error
    @given(config=CONFIGS, workload=workloads())
    def keeps_them(config, workload):
        verdict.tried += 1
        drawn = [(arrival, (list(seq.token_ids), seq.sampling_params.max_tokens), abort_at)
                 for arrival, seq, abort_at in workload]
        try:
            drive(kind, config, workload)
        except Exception as e:  # the last one raised is the one Hypothesis shrank to, replayed
            verdict.config, verdict.workload, verdict.error = config, drawn, e
            raise

    with suppress(Exception):  # what failed is in the verdict
        keeps_them()
    return verdict


def config_lines(kind: str, config: Config) -> list[str]:
    """The settings of `config` the kind reads, where set away from their defaults: `key = value` each."""
    default = Config()
    shared = [(f, getattr(config, f)) for f in CONFIG_FIELDS if getattr(config, f) != getattr(default, f)]
    own = [(spec.key, getattr(section, spec.name)) for section in config.sections
           for spec in declared(type(section)) if getattr(section, spec.name) != spec.default]
    reads = scheduler_info(kind).reads
    return [f"{key} = {value!r}" for key, value in (*shared, *own) if reads(key)]


def workload_lines(workload: list) -> list[str]:
    return [f"request {i}: arrives at step {arrival}, prompt {prompt}, up to {most} tokens"
            + (f", aborted at step {abort_at}" if abort_at is not None else "")
            for i, (arrival, (prompt, most), abort_at) in enumerate(workload)]
