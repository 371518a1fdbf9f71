from viz.colors import REQUEST_PALETTE, request_color
from viz.frame_payload import player_colors


def test_a_request_keeps_its_colour_and_neighbours_differ():
    assert request_color(3) == request_color(3) == request_color(3 + len(REQUEST_PALETTE))
    assert len({request_color(i) for i in range(len(REQUEST_PALETTE))}) == len(REQUEST_PALETTE)


def test_the_player_gets_the_same_colours():
    colors = player_colors()
    assert colors["palette"] == list(REQUEST_PALETTE) and colors["free"] != colors["cached_free"]
