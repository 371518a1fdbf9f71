"""bench/bench_class_follow.py's rule for a follower landing on the lecturer's paused frame: the server's last move
since the Pause stopped its player on that frame. A follower moved there but told to play on, stopped on another
frame, or stopped there before the Pause, has not landed (the server's messages are made here as it sends them)."""

import json
import time

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.bench_class_follow import ClassPage
from bench.class_client import PLAYER


def player_message(moves: int, cursor: int, playing: float) -> ForwardMsg:
    """The stage player's data as the server sends it with a move of the cursor (frames 0 to 20 held)."""
    msg = ForwardMsg()
    player = msg.delta.new_element.bidi_component
    player.component_name, player.id = f"schedlab.{PLAYER}", "player"
    player.json = json.dumps({"run": 1, "from": 0, "frames": [{}] * 21, "over": False, "last": 20,
                              "cursor": cursor, "cursor_moves": moves, "playing": playing})
    return msg


def test_a_follower_lands_on_the_paused_frame_when_the_server_stops_it_there():
    page = ClassPage()
    page.read(player_message(1, 12, 0.0))
    paused = time.perf_counter()  # the lecturer's Pause: after that move
    assert page.stopped_on(12, 0.0) == page.moves[-1][0]
    assert page.stopped_on(12, paused) is None  # stopped on the frame before the Pause (a step of the lecturer's)

    page.read(player_message(2, 12, 2.0))
    assert page.stopped_on(12, paused) is None  # moved to the frame, but playing on from it

    page.read(player_message(3, 12, 0.0))
    assert page.stopped_on(12, paused) == page.moves[-1][0] > paused  # the Pause: stopped there, when it was read
    assert page.stopped_on(11, paused) is None

    page.read(player_message(3, 12, 0.0))
    assert len(page.moves) == 3 and page.stopped_on(12, paused) == page.moves[-1][0]  # drawn again: no new move

    page.read(player_message(4, 14, 0.0))
    assert page.stopped_on(12, paused) is None  # stopped on another frame after it
