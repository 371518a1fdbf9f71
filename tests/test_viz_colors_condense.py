from viz.colors import REQUEST_PALETTE, Categories, blend, discrete_colorscale, request_color
from viz.condense import GAP, condense_queue, condense_row


def test_a_request_keeps_its_colour_and_neighbours_differ():
    assert request_color(3) == request_color(3) == request_color(3 + len(REQUEST_PALETTE))
    assert len({request_color(i) for i in range(len(REQUEST_PALETTE))}) == len(REQUEST_PALETTE)


def test_blend_moves_toward_white():
    assert blend("#000000", amount=0.5) == "#808080"
    assert blend("#2E91E5", amount=0.0) == "#2E91E5"


def test_discrete_colorscale_gives_each_integer_its_own_band():
    scale = discrete_colorscale(["#111111", "#222222", "#333333"])
    assert scale == [(0, "#111111"), (1 / 3, "#111111"), (1 / 3, "#222222"), (2 / 3, "#222222"),
                     (2 / 3, "#333333"), (1.0, "#333333")]
    categories = Categories()
    assert [categories.z(c) for c in ("#111111", "#222222", "#111111")] == [0, 1, 0]
    assert categories.heatmap_args()["zmax"] == 1.5


def test_short_rows_are_kept_whole():
    assert condense_row(5, 10) == ([0, 1, 2, 3, 4], 0)


def test_long_rows_keep_both_ends_within_the_limit():
    row = condense_row(100, 12)
    assert len(row.shown) <= 12
    assert row.shown[0] == 0 and row.shown[-1] == 99 and GAP in row.shown
    assert row.hidden + sum(1 for i in row.shown if i is not GAP) == 100


def test_long_rows_keep_the_focus_in_the_middle():
    row = condense_row(200, 20, focus=range(90, 100))
    assert 99 in row.shown and row.shown.count(GAP) == 2
    assert len(row.shown) <= 20


def test_long_queues_show_the_head_and_count_the_rest():
    assert condense_queue(list(range(10)), 4) == ([0, 1, 2, 3], 6)
    assert condense_queue((1, 2), 4) == ([1, 2], 0)
