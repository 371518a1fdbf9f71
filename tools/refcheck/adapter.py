"""The interface between the reference-check harness (tools/refcheck/) and one system's twin: what a system
provides so that `python -m tools.refcheck SYSTEM` compares its twin with the system's own scheduler.

A system is a package `tools/refcheck/<system>/` whose `ADAPTER` satisfies `Adapter`, and one line in `SYSTEMS`
below. The harness owns the rest: the random-workload loop per mode, the comparison step by step
(tools/refcheck/record.py), the shrinker (shrink.py), the golden traces (golden.py) and the printed figures
(driver.py). An adapter provides plain data only:

- a **workload** is a JSON-able dict (settings, requests, the fake model's seed) holding at least `"mode"`;
- a **step record** is a list of JSON-able values, one per name in `fields`, produced the same way by both sides
  for the same step; two runs agree when their lists of step records are equal;
- `run_twin` is pure Python (the golden-trace tests call it without the system installed); only
  `open_oracle` imports the system, in the environment `make <system>-check` builds.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from scheduler import SamplingParams, Sequence

# system name -> the package whose ADAPTER checks that system's twin
SYSTEMS = {"vllm": "tools.refcheck.vllm", "sglang": "tools.refcheck.sglang", "vllm_v0": "tools.refcheck.vllm_v0"}


class Oracle(Protocol):
    """The system's own scheduler, stepped offline with the adapter's fake model."""

    release: str  # the release installed, as the twin names it ("0.33")

    def run(self, workload: dict, max_steps: int = ..., timings: list | None = None) -> list[list]:
        """Every step's record for `workload` (at most `max_steps`); `timings` gets each step's seconds in the
        two parts the adapter's `timed` names."""


class Adapter(Protocol):
    system: str  # "vllm": the package name under tools/refcheck/ and the prefix of its golden traces
    releases: tuple[str, ...]  # the releases the twin mirrors, oldest first
    modes: tuple[str, ...]  # kinds of random workload, each checked (and counted) on its own
    fields: tuple[str, ...]  # the names of a step record's entries, in order
    timed: tuple[str, str]  # the scheduler's two calls a step is timed in (deciding, then taking the outputs)
    pressure_field: str  # the field listing the requests memory pressure sent back (preempted, retracted)

    def random_workload(self, rng: random.Random, mode: str) -> dict:
        """A workload of `mode`, drawn from `rng` alone (the same seed gives the same workloads)."""

    def smaller(self, workload: dict) -> Iterator[dict]:
        """Workloads one step smaller than `workload` (a request dropped, a prompt cut...), to shrink a
        difference; each must be a valid workload. Yield nothing when it cannot shrink."""

    def run_twin(self, workload: dict, release: str, max_steps: int = ..., timings: list | None = None
                 ) -> list[list]:
        """Every step's record of the twin set to mirror `release`, `timings` as the oracle's run."""

    def bench_workload(self, num_requests: int, seed: int = 0) -> dict:
        """A long workload of `num_requests` requests for the benchmark (bench/bench_twins.py)."""

    def open_oracle(self) -> Oracle:
        """The system's own scheduler (imports the system: only in its oracle environment)."""


def load(system: str) -> Adapter:
    """The adapter of `system` (a name in SYSTEMS)."""
    if system not in SYSTEMS:
        raise SystemExit(f"unknown system {system!r}: use one of {', '.join(SYSTEMS)}")
    return importlib.import_module(SYSTEMS[system]).ADAPTER


@dataclass(frozen=True)
class SystemAdapter:
    """An `Adapter` as plain data, what each system's package declares: its workloads' and twin's functions, and
    where its oracle is, "module:Class", imported only when opened (the system is installed in its environment
    alone)."""
    system: str
    releases: tuple[str, ...]
    modes: tuple[str, ...]
    fields: tuple[str, ...]
    timed: tuple[str, str]
    pressure_field: str
    random_workload: Callable[[random.Random, str], dict]
    smaller: Callable[[dict], Iterator[dict]]
    run_twin: Callable[..., list[list]]
    bench_workload: Callable[..., dict]
    oracle: str

    def open_oracle(self) -> Oracle:
        module, name = self.oracle.split(":")
        return getattr(importlib.import_module(module), name)()


def workload_sequences(workload: dict) -> list[Sequence]:
    """The requests a workload lists (`workload["requests"]`: prompt, max_tokens, ignore_eos, optional
    stop_token_ids and min_tokens, priority, arrival), as the engine's Sequences, ids in order: the request format
    the vLLM adapters (V1 and V0) share."""
    return [Sequence(r["prompt"], SamplingParams(max_tokens=r["max_tokens"], ignore_eos=r["ignore_eos"],
                                                 stop_token_ids=tuple(r.get("stop_token_ids", ())),
                                                 min_tokens=r.get("min_tokens", 0)),
                     priority=r["priority"], arrival=r["arrival"], seq_id=i)
            for i, r in enumerate(workload["requests"])]
