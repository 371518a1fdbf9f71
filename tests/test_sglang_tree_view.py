"""The SGLang twin's scheduler view (scheduler/sglang/tree_view.py): what the stage draws of the radix tree after
each step, and what changed in it (a split, a lock, an eviction, a retraction) as the twin stepped."""

from scheduler.sglang import Scheduler, ServerArgs
from scheduler.sglang.tree_view import TreeView
from tests.helpers.scheduler_loop import step_sglang_twin


def _stepper(**args):
    twin, view = Scheduler(ServerArgs(**args)), TreeView()

    def step() -> dict:
        step_sglang_twin(twin)
        return view.snapshot(twin)
    return twin, step


def _node(view: dict, tokens: list[int]) -> list:
    return next(n for n in view["nodes"] if n[2] == tokens)


def test_a_prefix_hit_splits_the_node_and_locks_the_shared_head():
    twin, step = _stepper(max_total_tokens=24, max_running_requests=4)
    twin.add_request(0, [1, 2, 3, 4, 5, 6], 2)
    first = step()
    assert [n[2] for n in first["nodes"]] == [[1, 2, 3, 4, 5, 6]] and first["inserted"] == [first["nodes"][0][0]]
    assert first["nodes"][0][4] == 1 and first["nodes"][0][5] is None  # locked by r0: protected, not evictable
    assert first["budget"]["admitted"] == [0] and first["budget"]["reserve"] == 0
    assert first["budget"]["rem_total_tokens"] == 24 - first["budget"]["total_offset"]
    twin.add_request(1, [1, 2, 3, 9, 9], 2)
    second = step()
    head, tail = _node(second, [1, 2, 3]), _node(second, [4, 5, 6])
    assert second["split"] == [[head[0], tail[0]]] and tail[0] == first["nodes"][0][0]  # the old node kept its id
    assert tail[1] == head[0] and (head[4], tail[4]) == (2, 1)  # both requests hold the head, r0 its tail
    assert second["matched"] == [[1, 3, [head[0]]]]  # r1 admitted on the 3 cached tokens
    assert second["inserted"] == [_node(second, [9, 9])[0]]
    assert second["budget"]["reserve"] > 0  # r0 runs: its future tokens x new_token_ratio are set aside


def test_finished_requests_leave_evictable_leaves_taken_least_recent_first():
    twin, step = _stepper(max_total_tokens=24, max_running_requests=4)
    twin.add_request(0, [1, 2, 3, 4, 5, 6], 2)
    twin.add_request(1, [1, 2, 3, 9, 9], 2)
    for _ in range(4):
        done = step()
    assert all(n[4] == 0 for n in done["nodes"]) and done["protected_size"] == 0
    ranks = sorted(n[5] for n in done["nodes"] if n[5] is not None)
    assert ranks == list(range(1, len(ranks) + 1)) and ranks  # the evictable leaves in eviction order
    first_out = next(n for n in done["nodes"] if n[5] == 1)
    twin.add_request(2, [7] * 14, 4)
    views = [step() for _ in range(3)]
    evicted = [e for v in views for e in v["evicted"]]
    assert evicted and evicted[0][:3] == first_out[:3]  # the leaf ranked first went first, with its tokens
    assert all(e[0] not in {n[0] for n in views[-1]["nodes"]} for e in evicted)


def test_a_retraction_is_listed_and_its_request_waits_with_its_cached_prefix():
    twin, step = _stepper(max_total_tokens=32, max_running_requests=4, schedule_conservativeness=0.1)
    twin.add_request(0, [1, 2, 3, 4, 5, 6, 7, 8], 12)
    twin.add_request(1, [1, 2, 3, 4, 9, 9, 9, 9], 12)
    views = [step() for _ in range(20)]
    retracting = next(v for v in views if v["retracted"])
    rid = retracting["retracted"][0]
    assert [r for r, _ in retracting["waiting"]] == [rid]
    assert retracting["new_token_ratio"] > 0.07  # the ratio jumped after the retraction
    readmitted = next(v for v in views[views.index(retracting) + 1:] if any(m[0] == rid for m in v["matched"]))
    assert next(m for m in readmitted["matched"] if m[0] == rid)[1] > 0  # it came back on its cached prefix


def test_the_view_is_recorded_in_each_frame_and_a_trace_gives_it_back():
    """Through the contract (its declared panel, `panels()`): the engine records it, a trace writes and reads it, the
    wire carries it with the nodes' holders."""
    from engine.traces.trace import read_trace, trace_json
    from tools.golden_deltas import sglang_tree_run
    from viz.sched_view import RADIX_TREE, TREE_TOKENS, sched_view

    engine = sglang_tree_run()
    frames = list(engine.frames)
    assert all(f.panel(RADIX_TREE) is not None and f.panel(RADIX_TREE)["kind"] == RADIX_TREE for f in frames)
    store, _ = read_trace(trace_json(engine))
    assert [f.panels for f in store] == [f.panels for f in frames]
    retracting = next(f for f in frames if f.panel(RADIX_TREE)["retracted"])
    wire = sched_view(retracting, None, "en")
    units = wire["units"]
    assert len(units) == len(retracting.blocks) and units[0] == "x"  # SGLang's padding slot
    for node_id, _, _, slots, lock, _ in retracting.panel(RADIX_TREE)["nodes"]:
        assert {units[s][:1] for s in slots} == {"p" if lock else "e"}
        assert all(units[s].split(":")[0] == ("p" if lock else "e") + str(node_id) for s in slots)
    rows = retracting.panel(RADIX_TREE)["nodes"]
    for drawn, row in zip(wire["nodes"], rows, strict=True):  # the panel's rows: first tokens
        assert drawn[2] == row[2][:TREE_TOKENS] and drawn[-1] == len(row[2])  # and the count, slots as runs
        assert [s for first, last in drawn[3] for s in range(first, last + 1)] == row[3]
