"""Issue 13 #4, #7: trace files are checked against a schema before anything is built, and written compactly."""

import json
from pathlib import Path

import pytest

from engine.inputs.workload import random_workload
from engine.run.engine import Engine
from engine.run.recipe import Request, RunSpec
from engine.traces.records import store_data
from engine.traces.trace import TRACE_VERSION, read_trace, trace_dict, trace_json
from scheduler import Config
from session.lab import LabError, open_trace


def _upload(trace: dict | str | bytes):
    data = trace if isinstance(trace, bytes) else (trace if isinstance(trace, str) else json.dumps(trace)).encode()
    return open_trace(data, "t.json")


def _edited(engine, edit) -> dict:
    trace = trace_dict(engine, "demo")
    edit(trace)
    return trace


def _set(path: str, value):
    """An edit setting trace[path] (dotted, with list indices)."""
    def edit(trace):
        *parents, last = path.split(".")
        node = trace
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        node[int(last) if isinstance(node, list) else last] = value
    return edit


@pytest.mark.parametrize("edit, where", [
    (_set("frames.3.step", 7), "frames[3].step"),  # steps out of order
    (_set("frames.4.batch.seq_ids", [99]), "frames[4].batch.seq_ids"),  # unknown batch id
    (_set("frames.2.requests.0.id", 40), "frames[2].requests[0].id"),  # request id out of range
    (_set("frames.0.blocks.0.id", 5000), "frames[0].blocks"),  # bad block id
    (_set("frames.2.requests.0.block_table", [4000]), "frames[2].requests[0].block_table"),
    (_set("frames.2.waiting", "0,1"), "frames[2].waiting"),  # a string where a list belongs
    (_set("frames.2.requests.0.num_tokens", 10**9), "frames[2].requests[0].num_tokens"),  # huge token count
    (_set("requests.0.output_token_ids", list(range(20_000))), "requests[0].output_token_ids"),
    (_set("frames.0.config.num_kvcache_blocks", 5000), "frames[0].config.num_kvcache_blocks"),  # #10
    (_set("frames.1.metrics.kv_usage", "full"), "frames[1].metrics.kv_usage"),
    (_set("frames.1.events", [{"kind": "exploded", "seq_id": 0}]), "frames[1].events[0].kind"),
    (_set("frames.1.events", [{"kind": "finished", "seq_id": -1, "reason": "eos"}]), "frames[1].events[0].seq_id"),
    (_set("frames", []), "frames"),
    (_set("version", 9), "version"),
    (_set("frames.1.waiting", [3, 9, [], 0]), "frames[1].waiting[1]"),  # keeps more than the queue held
    (_set("frames.2.waiting", [0, 0, [2], 2, 5]), "frames[2].waiting"),  # not a queue diff
    (_set("frames.3.batch.num_tokens", [1, 900]), "frames[3].batch.num_tokens[1]"),  # the batch rule overruns
])
def test_a_trace_that_does_not_fit_the_schema_is_refused_saying_where(preemption_preset, edit, where):
    with pytest.raises(LabError, match=where.replace("[", r"\[").replace(".", r"\.")):
        _upload(_edited(preemption_preset, edit))


@pytest.mark.parametrize("data, problem", [
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b"\xff\xfe not json", "not JSON"),
    (b"{" + b" " * (21 * 2**20) + b"}", "MB"),
])
def test_files_that_are_not_traces_are_refused_with_a_sentence(data, problem):
    with pytest.raises(LabError, match=problem):
        _upload(data)


def test_every_frame_of_an_accepted_trace_reads_back_as_recorded(preemption_preset):
    lab = _upload(trace_dict(preemption_preset, "demo"))
    assert lab.last == len(preemption_preset.frames) - 1 and lab.title == "Trace: demo"
    for k in range(len(preemption_preset.frames)):
        assert lab.frames[k].to_dict() == preemption_preset.frames[k].to_dict()


def test_a_trace_holds_the_frame_stores_records_and_reads_back_into_them(preemption_preset):
    """One frame codec: the trace's frames are the store's records written out, and a store read from a trace
    writes the same records again (wall times included: they are read, not measured)."""
    trace = trace_dict(preemption_preset, "demo")
    assert trace["frames"] == store_data(preemption_preset.frames)
    assert sum(len(frame["requests"]) for frame in trace["frames"]) < sum(
        len(frame.batch.seq_ids) for frame in preemption_preset.frames)  # the batch rule leaves most out
    store, _ = read_trace(json.dumps(trace))
    assert store_data(store) == trace["frames"]


def _version_2_run() -> Engine:
    """The run tests/data/trace_v2.json was written from by the version 2 writer (a config change after step 5,
    a request added and the pool rebuilt after step 9), on the fake model."""
    config = Config(max_num_seqs=3, max_num_batched_tokens=32, max_model_len=32, num_kvcache_blocks=10,
                    kvcache_block_size=4, enable_prefix_caching=True)
    engine = Engine(RunSpec(config, random_workload(5, 2, [0, 0, 1, 3, 5], 8), seed=2))
    engine.run(6)
    engine.set_config(max_num_seqs=2)
    engine.run(4)
    engine.add_request(Request(prompt_token_ids=(5, 6, 7, 8, 9), max_tokens=5))
    engine.set_config(num_kvcache_blocks=14)
    engine.run()
    return engine


def _timeless(frame) -> dict:
    return {k: v for k, v in frame.to_dict().items() if not k.startswith("wall_")}


def test_a_version_2_trace_written_before_version_3_still_opens_frame_for_frame():
    data = (Path(__file__).parent / "data" / "trace_v2.json").read_text()
    assert json.loads(data)["version"] == 2
    store, trace = read_trace(data)
    run = _version_2_run()
    assert len(store) == len(run.frames) == 24 and {"num_blocks", "config"} <= trace["frames"][11].keys()
    assert [_timeless(frame) for frame in store] == [_timeless(frame) for frame in run.frames]


def test_a_version_1_trace_with_full_frames_still_opens(preemption_preset):
    trace = trace_dict(preemption_preset, "old")
    trace["version"] = 1
    trace["frames"] = [frame.to_dict(tokens=False) for frame in preemption_preset.frames]
    store, _ = read_trace(json.dumps(trace))
    assert store[len(store) - 1].to_dict() == preemption_preset.frames[-1].to_dict()


def test_a_trace_grows_with_what_changes_per_step_not_with_the_pool():
    config = Config(max_num_seqs=4, max_num_batched_tokens=256, max_model_len=128, num_kvcache_blocks=4096,
                    kvcache_block_size=4)
    engine = Engine(RunSpec(config, random_workload(8, 0, max_tokens=40)))
    engine.run(40)
    assert TRACE_VERSION >= 3  # records of what changed
    per_frame = len(trace_json(engine)) / len(engine.frames)
    full_frame = len(json.dumps(engine.frames[20].to_dict(tokens=False)))
    assert full_frame > 300_000 and per_frame < full_frame / 20  # the first frame holds the pool once


def test_a_comparison_export_over_its_size_budget_is_refused_with_the_reason(monkeypatch):
    from engine.analysis.compare import GENERATED_CONFIG, compare, generated_workload, variants_for
    from engine.analysis.export import comparison_json
    runs = compare(variants_for("prefill-first vs decode-first", GENERATED_CONFIG, "en"), generated_workload(4))
    assert json.loads(comparison_json(runs))["runs"][0]["trace"]["version"] == TRACE_VERSION
    monkeypatch.setattr("engine.analysis.export.MAX_EXPORT_BYTES", 1000)
    with pytest.raises(ValueError, match="an export may take"):
        comparison_json(runs)


def test_an_event_of_a_step_wide_kind_names_no_request_in_a_trace(preemption_preset):
    """A kind's event that concerns the whole step (`Event.step_wide`, as a pool rebuilt does) is read back with
    seq_id -1, where an event about a request must name one of the trace's."""
    from dataclasses import dataclass

    from scheduler.events import EVENT_TYPES, Event

    @dataclass(frozen=True)
    class PhaseChosen(Event):
        kind = "test_phase_chosen"
        step_wide = True
        phase: str

    try:
        trace = _edited(preemption_preset, _set("frames.1.events", [PhaseChosen(-1, "decode").to_dict()]))
        assert _upload(trace)
    finally:
        del EVENT_TYPES[PhaseChosen.kind]
