"""The reference-check harness (tools/refcheck/) on a toy system: a "scheduler" that schedules each request's
tokens in arrival order, and a twin that parts from it where a request asks for more than 5 tokens."""

import random

import pytest

from bench.bench_twins import bench
from tools.refcheck.adapter import SYSTEMS, load
from tools.refcheck.driver import check_mode
from tools.refcheck.golden import Golden, read_golden, replay, write_golden
from tools.refcheck.record import first_difference
from tools.refcheck.shrink import shrink


def _run(workload, cap):
    return [[i, min(n, cap), []] for i, n in enumerate(workload["requests"])]


class ToyOracle:
    release = "1.0"

    def run(self, workload, max_steps=100, timings=None):
        if timings is not None:
            timings.extend((0.004, 0.002) for _ in workload["requests"])
        return _run(workload, cap=10**9)


class ToyAdapter:
    system, releases, modes, fields = "toy", ("1.0",), ("small", "large"), ("request", "tokens", "sent back")
    timed, pressure_field = ("decide", "outputs"), "sent back"
    installed = True

    def random_workload(self, rng, mode):
        return {"mode": mode, "requests": [rng.randint(1, 5 if mode == "small" else 9) for _ in range(6)]}

    def smaller(self, workload):
        requests = workload["requests"]
        for i in range(len(requests)):
            if len(requests) > 1:
                yield {**workload, "requests": requests[:i] + requests[i + 1:]}

    def run_twin(self, workload, release, max_steps=100, timings=None):
        assert release == "1.0"
        if timings is not None:
            timings.extend((0.001, 0.0005) for _ in workload["requests"])
        return _run(workload, cap=5)

    def bench_workload(self, num_requests, seed=0):
        return {"mode": "small", "requests": [1 + n % 5 for n in range(num_requests)]}

    def open_oracle(self):
        if not self.installed:
            raise ImportError("No module named 'toy'")
        return ToyOracle()


def test_first_difference_names_the_step_and_field_or_a_shorter_run():
    fields = ("a", "b")
    assert first_difference([[1, 2], [3, 4]], [[1, 2], [3, 4]], fields) is None
    assert first_difference([[1, 2], [3, 4]], [[1, 2], [3, 5]], fields) == (1, "b")
    assert first_difference([[1, 2], [3, 4]], [[1, 2]], fields) == (1, "number of steps")


def test_the_shrinker_keeps_cutting_while_the_workload_still_differs():
    adapter = ToyAdapter()
    workload = {"mode": "large", "requests": [1, 7, 2, 9, 3]}
    small = shrink(workload, adapter.smaller, lambda w: any(n > 5 for n in w["requests"]))
    assert small["requests"] == [9]


@pytest.mark.parametrize("system, budget", [("vllm", "max_tokens"), ("sglang", "max_new_tokens")])
def test_both_adapters_cut_a_workload_alike_each_under_its_systems_output_budget(system, budget):
    adapter = load(system)
    workload = {"mode": "m", "requests": [{"prompt": [5, 6, 7, 8], budget: 4}, {"prompt": [9], budget: 1}]}
    cuts = list(adapter.smaller(workload))
    assert [len(w["requests"]) for w in cuts] == [1, 1, 2, 2]  # each request dropped, then 0's budget and prompt
    assert cuts[2]["requests"][0] == {"prompt": [5, 6, 7, 8], budget: 2}
    assert cuts[3]["requests"][0] == {"prompt": [5, 6], budget: 4}
    assert list(adapter.smaller({"mode": "m", "requests": [{"prompt": [9], budget: 1}]})) == []  # nothing to cut


def test_a_mode_where_twin_and_oracle_agree_counts_every_workload(capsys):
    adapter, traces = ToyAdapter(), []
    assert check_mode(adapter, adapter.open_oracle(), "small", 20, seed=0, identical_traces=traces)
    assert "toy 1.0 small: 20/20 workloads identical" in capsys.readouterr().out
    assert len(traces) == 20 and traces[0]["steps"] == ToyOracle().run(traces[0]["workload"])


def test_a_difference_is_reported_at_its_first_workload_shrunk_to_one_request(capsys):
    adapter = ToyAdapter()
    assert not check_mode(adapter, adapter.open_oracle(), "large", 50, seed=0)
    out = capsys.readouterr().out
    assert "differs at step 1 (tokens)" in out and "workloads identical before the first difference" in out
    shrunk = next(line for line in out.splitlines() if line.startswith("{"))
    assert shrunk.count(",") == 1  # {"mode": "large", "requests": [n]}


def test_golden_traces_round_trip_and_replay_against_the_twin(tmp_path):
    adapter = ToyAdapter()
    rng = random.Random(1)
    workloads = [adapter.random_workload(rng, "large") for _ in range(5)]
    traces = [{"workload": w, "steps": ToyOracle().run(w)} for w in workloads]
    path = tmp_path / "toy-1.0.json.gz"
    write_golden(path, Golden("toy", "1.0", adapter.fields, traces))
    golden = read_golden(path)
    assert golden == Golden("toy", "1.0", adapter.fields, traces)
    differing = replay(adapter, golden)
    assert differing and all(mode == "large" for _, mode, _, _ in differing)
    assert {n for n, *_ in differing} == {n for n, w in enumerate(workloads) if max(w["requests"]) > 5}


def test_every_registered_system_has_an_adapter_with_the_interface():
    for system in SYSTEMS:
        adapter = load(system)
        assert adapter.system == system and adapter.releases and adapter.modes and adapter.fields
        assert len(adapter.timed) == 2 and adapter.pressure_field in adapter.fields
        assert adapter.bench_workload(3)["mode"] in adapter.modes
        workload = adapter.random_workload(random.Random(0), adapter.modes[0])
        records = adapter.run_twin(workload, adapter.releases[-1])
        assert records and all(len(r) == len(adapter.fields) for r in records)
    with pytest.raises(SystemExit, match="unknown system"):
        load("nosuch")


def test_the_bench_prints_each_timed_part_against_the_system_or_says_it_is_skipped(capsys):
    adapter = ToyAdapter()
    bench(adapter, num_requests=4, repeats=2)
    out = capsys.readouterr().out
    assert "toy 1.0, trace: 4 requests, 4 steps, 0 sent back, identical decisions" in out
    assert "decide" in out and "twin/toy 0.25x" in out and "twin/toy 0.25x" in out.splitlines()[-1]
    adapter.installed = False
    bench(adapter, num_requests=4, repeats=1)
    assert "toy: skipped, its oracle cannot be imported here (No module named 'toy')" in capsys.readouterr().out


def test_every_systems_adapter_names_an_oracle_class_its_package_defines():
    """An adapter's oracle is imported only in its system's environment: here, its "module:Class" is checked to name
    a class of that module's source, so `make <system>-check` does not fail on a misspelt name."""
    import ast
    import importlib
    from pathlib import Path

    from tools.refcheck.adapter import SYSTEMS

    for system, package in SYSTEMS.items():
        adapter = importlib.import_module(package).ADAPTER
        module, name = adapter.oracle.split(":")
        source = Path(*module.split(".")).with_suffix(".py").read_text()
        assert adapter.system == system and name in {node.name for node in ast.walk(ast.parse(source))
                                                     if isinstance(node, ast.ClassDef)}, adapter.oracle
