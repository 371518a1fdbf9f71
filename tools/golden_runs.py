"""Digests of runs on the fake model, for checking that a refactor changed no behaviour.

Records every preset's trace (and its variant's) and a differential run over random configs with mid-run
changes (config fields, pool rebuilds, requests added by hand, overlap and adaptive switches), each replayed
and branched through the engine and through the session layer (a lab on a run cache, with checkpoints), and
prints one sha256 per run; wall times and the `decided_by` record are left out, and frames are digested whole, not
as a trace file or the frame store encodes them, so a change of encoding leaves every digest as it was.
`tests/test_golden_runs.py` compares the presets' digests with `tests/data/golden_runs.json`;
`python tools/golden_runs.py --all > out.json` writes every digest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine import load_scenario, preset_paths  # noqa: E402
from engine.inputs.workload import random_workload  # noqa: E402
from engine.run.adaptive import AdaptiveBatch  # noqa: E402
from engine.run.engine import Engine  # noqa: E402
from engine.run.recipe import (
    Request,  # noqa: E402
    RunSpec,  # noqa: E402
)
from engine.traces.panels import panels_as_legacy  # noqa: E402
from engine.traces.trace import trace_dict  # noqa: E402
from i18n import MessageError  # noqa: E402
from scheduler import Config  # noqa: E402
from session.lab import Lab, RunInputs  # noqa: E402
from session.run_cache import RunCache  # noqa: E402

# Left out of a digest: wall times, and the record of which scheduler decided a run (its kind is in the trace's own
# `scheduler` field, which the digest covers; the record itself came after the digests were taken and decides nothing),
# and the trace's records for its referee, which came after them too: why the run stopped, each request's sampling.
WALL = ("wall_schedule_s", "wall_model_s", "decided_by", "ended", "sampling")


def _without_wall(value):
    if isinstance(value, dict):
        return {k: _without_wall(v) for k, v in value.items() if k not in WALL}
    if isinstance(value, list):
        return [_without_wall(v) for v in value]
    return value


def digest(data) -> str:
    return hashlib.sha256(json.dumps(_without_wall(data), sort_keys=True, default=repr).encode()).hexdigest()


def whole_frames(frames) -> list[dict]:
    """Every frame whole, each request's and block's view in full: what the run decided, in no trace format's
    encoding (a change of how traces or the frame store encode frames leaves the digests as they were); the
    scheduler's panels under the keys frames had before their one slot (engine/traces/panels.py), as the digests
    were made."""
    return [panels_as_legacy(frame.to_dict(tokens=False)) for frame in frames]


def engine_digest(engine) -> str:
    """The run's trace, its frames whole (`whole_frames`) rather than as the trace's own encoding."""
    trace = {key: value for key, value in trace_dict(engine).items() if key not in ("version", "frames")}
    return digest({**trace, "frames": whole_frames(engine.frames)})


def preset_digests() -> dict[str, str]:
    out = {}
    for path in preset_paths():
        scenario = load_scenario(path, runner="fake")
        for variant in (False, True) if scenario.variant else (False,):
            engine = scenario.engine(variant=variant)
            engine.run()
            out[path.stem + (":variant" if variant else "")] = engine_digest(engine)
    return out


# -- the differential run ------------------------------------------------------------------------------

def random_config(rng: random.Random) -> Config:
    while True:
        try:
            max_model_len = rng.choice([32, 64, 128])
            chunked = rng.random() < 0.4
            spec = rng.choice([0, 0, 0, 2, 3])
            return Config(max_num_seqs=rng.randint(1, 6),
                          max_num_batched_tokens=rng.choice([16, 32, 64]) if chunked else max_model_len * 2,
                          max_model_len=max_model_len, num_kvcache_blocks=rng.randint(4, 24),
                          kvcache_block_size=rng.choice([2, 4, 8]), eos=rng.choice([-1, 7]),
                          prefill_first=rng.random() < 0.6, enable_prefix_caching=rng.random() < 0.5,
                          chunked_prefill=chunked, mixed_batches=chunked and rng.random() < 0.5,
                          preemption_policy=rng.choice(["tail", "smart", "priority"]),
                          queue_policy=rng.choice(["fcfs", "priority"]), num_speculative_tokens=spec)
        except MessageError:
            continue


def random_change(rng: random.Random, step: int) -> tuple[str, dict | Request]:
    kind = rng.choice(["swap", "swap", "pool", "request", "overlap", "adaptive"])
    if kind == "swap":
        return "config", rng.choice([{"max_num_seqs": rng.randint(1, 6)}, {"prefill_first": rng.random() < 0.5},
                                     {"enable_prefix_caching": rng.random() < 0.5},
                                     {"preemption_policy": rng.choice(["tail", "smart", "priority"])},
                                     {"queue_policy": rng.choice(["fcfs", "priority"])},
                                     {"num_speculative_tokens": rng.choice([0, 2])}])
    if kind == "pool":
        return "config", rng.choice([{"num_kvcache_blocks": rng.randint(3, 30)},
                                     {"kvcache_block_size": rng.choice([2, 4, 8])}, {"eos": rng.choice([-1, 7])}])
    if kind == "request":
        prompt = tuple(rng.randint(1, 999) for _ in range(rng.randint(1, 12)))
        return "request", Request(prompt_token_ids=prompt, max_tokens=rng.randint(1, 20),
                                  priority=rng.randint(-2, 2))
    if kind == "overlap":
        return "config", {"overlap": rng.random() < 0.6}
    return "config", {"adaptive": rng.choice([None, AdaptiveBatch(0.011, 0.013, 1, 1, 6)])}


def differential_case(seed: int) -> dict[str, str]:
    """One random run: stepped with changes, then replayed and branched at a random frame; and the same inputs
    through a lab (branching at earlier frames, from a run cache that keeps checkpoints)."""
    rng = random.Random(seed)
    config = random_config(rng)
    n = rng.randint(2, 10)
    arrivals = sorted(rng.randint(0, 6) for _ in range(n))
    workload = tuple(random_workload(n, seed, arrivals, [rng.randint(1, 24) for _ in range(n)]))
    overlap = not config.num_speculative_tokens and rng.random() < 0.3
    adaptive = AdaptiveBatch(0.011, 0.013, 1, 1, 6) if rng.random() < 0.2 else None
    inputs = RunInputs("t", "n", RunSpec(config, workload, "fake", seed, adaptive=adaptive, overlap=overlap))
    changes = {}
    for _ in range(rng.randint(0, 5)):
        changes.setdefault(rng.randint(0, 12), []).append(random_change(rng, 0))
    out, refused = {}, []

    engine = Engine(inputs.spec)
    while not engine.is_finished and engine.step_count < 400:
        for kind, change in changes.get(engine.step_count, []):
            try:
                engine.add_request(change) if kind == "request" else engine.set_config(**change)
            except MessageError as e:
                refused.append((engine.step_count, str(e)))
        engine.step()
        if engine.stalled:
            break
    out["engine"] = engine_digest(engine)
    out["engine_refused"] = digest(refused)
    k = rng.randint(0, engine.step_count)
    replayed = engine.replay(k)
    replayed.run(steps=400)
    out["replay"] = engine_digest(replayed)
    branched = engine.branch(k, max_num_seqs=rng.randint(1, 6))
    branched.run(steps=400)
    out["branch"] = engine_digest(branched)

    cache = RunCache(2**30, checkpoint_every=3, checkpoint_runners=frozenset({"fake"}))
    lab = Lab(inputs, cache=cache)
    lab_refused = []
    for _ in range(3):
        lab.run(rng.randint(1, 12))
        lab.goto(rng.randint(0, lab.last))
        kind, change = random_change(rng, lab.cursor)
        try:
            if kind == "request":
                lab.add_request("hello there " * rng.randint(1, 3), change.max_tokens, change.priority)
            elif set(change) & {"overlap", "adaptive"}:
                lab.set_options(**change)
            else:
                lab.set_config(**change)
        except MessageError as e:
            lab_refused.append((lab.cursor, str(e)))
    lab.run(60)
    out["lab"] = digest(whole_frames(lab.frames[i] for i in range(lab.last + 1)))
    out["lab_refused"] = digest(lab_refused)
    return out


def differential_digests(cases: int = 40) -> dict[str, str]:
    return {f"random_{seed}:{name}": d for seed in range(cases) for name, d in differential_case(seed).items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="the differential run too, not only the presets")
    parser.add_argument("--cases", type=int, default=40)
    args = parser.parse_args()
    digests = preset_digests()
    if args.all:
        digests |= differential_digests(args.cases)
    print(json.dumps(digests, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
