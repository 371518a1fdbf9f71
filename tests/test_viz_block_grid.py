from tests.test_viz_scenes import preemption_engine, prefix_engine
from viz.block_grid import block_grid_figure, block_tables_figure, grid_shape
from viz.colors import CACHED_FREE_COLOR, FREE_COLOR, request_color
from viz.sizing import LAPTOP, PROJECTOR


def cell_colors(fig):
    """The colour each drawn cell gets, row-major, decoded from the discrete colorscale."""
    heat = fig.data[0]
    bands = heat.colorscale[::2]
    return [None if z is None else bands[z][1] for row in heat.z for z in row]


def test_grid_is_one_heatmap_that_follows_allocation():
    frames = preemption_engine().frames
    empty, first = block_grid_figure(frames[0]), block_grid_figure(frames[1])
    assert sum(t.type == "heatmap" for t in first.data) == 1
    assert set(cell_colors(empty)) == {FREE_COLOR}
    owners = first.layout.meta["owners"]
    colors = cell_colors(first)
    for block_id, block_owners in enumerate(owners):
        expected = request_color(block_owners[0]) if block_owners else FREE_COLOR
        assert colors[block_id] == expected
    assert colors[:6] == [request_color(0)] * 3 + [request_color(1)] * 3
    assert empty.data[0].z != first.data[0].z


def test_preemption_frees_the_victims_blocks_in_the_grid():
    frames = preemption_engine().frames
    step = next(f.step for f in frames if f.events_of("preempted"))
    preempted = frames[step].events_of("preempted")[0]
    before, after = cell_colors(block_grid_figure(frames[step - 1])), cell_colors(block_grid_figure(frames[step]))
    assert all(before[b] == request_color(preempted.seq_id) for b in preempted.freed_blocks)
    # each freed block is now free, or already taken by the request it was freed for
    assert {after[b] for b in preempted.freed_blocks} == {FREE_COLOR, request_color(preempted.for_seq_id)}


def test_shared_blocks_show_ref_count_and_cached_free_blocks_are_distinct():
    frames = prefix_engine().frames
    shared = block_grid_figure(frames[2])
    assert shared.data[0].text[0][0] == "0 ×2"
    assert shared.layout.meta["ref_counts"][:2] == [2, 2]
    hover = shared.data[0].hovertext[0][0]
    assert "block 0" in hover and "request 0, request 1" in hover and "ref count: 2" in hover
    assert "hash: 0x" in hover and "the quick brown" in hover
    done = block_grid_figure(frames[-1])
    colors = cell_colors(done)
    assert done.layout.meta["cached_free"] == [0, 1, 2, 3]
    assert colors[:4] == [CACHED_FREE_COLOR] * 4 and colors[4] == FREE_COLOR
    assert CACHED_FREE_COLOR not in (FREE_COLOR, *(request_color(i) for i in range(30)))
    assert "the quick brown" in done.data[0].hovertext[0][0]


def test_block_tables_list_each_holders_blocks():
    frame = prefix_engine().frames[2]
    fig = block_tables_figure(frame)
    assert fig.layout.meta["tables"] == {"0": [0, 1, 2], "1": [0, 1, 3]}
    assert list(fig.data[0].text[1][:3]) == ["0 ×2", "1 ×2", "3"]


def test_big_pools_get_a_wider_grid():
    assert grid_shape(64, LAPTOP) == (4, 16)
    assert grid_shape(1024, LAPTOP) == (32, 32)
    assert grid_shape(5, PROJECTOR) == (1, 5)
