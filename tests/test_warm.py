"""tools/warm.py: the one command that warms every server process before a class (opens a page on each, waits
until the presets $SCHEDLAB_PRECOMPUTE names are computed, says per process what is ready)."""

import pytest

from i18n import text
from tools.app_server import app_server, free_port
from tools.warm import PANEL, main, pending, stream_url


def test_the_websocket_is_found_under_the_process_path_and_pending_presets_are_read_off_the_panel():
    assert stream_url("http://127.0.0.1:8501/p1/") == "ws://127.0.0.1:8501/p1/_stcore/stream"
    assert stream_url("https://class.example.org") == "wss://class.example.org/_stcore/stream"
    done, waiting = text("en", "precompute.done", frames=50), text("en", "precompute.waiting")
    computing = text("en", "precompute.computing")
    line = f"{PANEL}05_prefix_caching {done} (cached); 08_chat_poisson {computing}; 02_preemption {waiting}"
    assert pending(line) == ["08_chat_poisson", "02_preemption"]
    assert pending(f"{PANEL}05_prefix_caching {done}") == [] and pending(None) == []


@pytest.mark.slow  # two app servers
def test_warming_opens_each_process_and_waits_for_its_presets_and_says_which_could_not_be_reached(capsys):
    presets = {"SCHEDLAB_PRECOMPUTE": "05_prefix_caching,08_chat_poisson"}
    with app_server("fake", base_path="p1", env=presets) as (url, _process):
        assert main([url, "--limit", "120"]) == 0
        ready = capsys.readouterr().out
        assert ready.startswith(f"{url}: ready in ")
        assert "05_prefix_caching 50 frames, to its end" in ready and "08_chat_poisson 201 frames, to its end" in ready
        closed = f"http://127.0.0.1:{free_port()}/p2"
        assert main([url, closed, "--limit", "30"]) == 1  # one process down: said, and the command fails
        said = capsys.readouterr().out
        assert f"{url}: ready" in said and f"{closed}: not reached" in said
