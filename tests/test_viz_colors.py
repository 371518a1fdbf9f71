from viz.colors import REQUEST_PALETTE, request_color
from viz.frame_payload import player_colors


def test_a_request_keeps_its_colour_and_neighbours_differ():
    assert request_color(3) == request_color(3) == request_color(3 + len(REQUEST_PALETTE))
    assert len({request_color(i) for i in range(len(REQUEST_PALETTE))}) == len(REQUEST_PALETTE)


def test_the_player_gets_the_same_colours():
    colors = player_colors()
    assert colors["palette"] == list(REQUEST_PALETTE) and colors["free"] != colors["cached_free"]


def test_the_twins_null_block_is_drawn_as_held_by_no_request():
    """vLLM's null block (block 0) is in use but owned by no request: the player paints such a block in the reserved
    colour, not in request 0's, and its tip says what it is."""
    from dataclasses import replace

    from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
    from engine.run.engine import Engine
    from player.assets import player_sources

    spec = load_scenario(SCENARIOS_DIR / "02_preemption.toml", "fake").spec
    engine = Engine(replace(spec, scheduler="vllm"))
    engine.run(steps=2)
    frame = engine.frames[2]
    assert frame.blocks[0].ref_count > 0 and not frame.block_owners(0)
    colors = player_colors()
    assert colors["reserved"] not in (*colors["palette"], colors["free"], colors["cached_free"])
    js, _css = player_sources()
    assert "owners[id].length ? color(owners[id][0]) : COLORS.reserved" in js
    assert "v.cfg.words.reserved_unit" in js  # its tip in the words its scheduler declares
