"""The key-frame strip under the frame slider (viz/key_strip.py): one mark per recorded key frame, placed
along the slider's track, the frame shown marked and its key frame drawn larger."""

import re

from viz.key_strip import TRACK_INSET_PX, key_frame_strip, mark_left


def marks(html: str) -> list[tuple[str, int, str]]:
    """(kind, step, width) of each mark."""
    return [(kind, int(step), width) for kind, step, width in
            re.findall(r"class='strip-(\w+)' data-step='(\d+)'.*?width:(\d+)px", html)]


def test_each_recorded_key_frame_is_marked_and_the_frame_shown_is_highlighted():
    html = key_frame_strip([1, 5, 30], last=10, current=5)
    assert marks(html) == [("key", 1, "5"), ("key", 5, "8"), ("current", 5, "2")]  # 30 is not recorded yet
    assert "title='key frame: step 1'" in html


def test_a_mark_sits_where_the_slider_puts_its_thumb():
    assert mark_left(0, 20) == f"calc({TRACK_INSET_PX}px + (100% - {2 * TRACK_INSET_PX}px) * 0)"
    assert mark_left(5, 20).endswith("* 0.25)") and mark_left(20, 20).endswith("* 1)")


def test_no_strip_without_a_recorded_key_frame():
    assert key_frame_strip([], 10, 3) == "" and key_frame_strip([12], 10, 3) == "" and key_frame_strip([0], 0, 0) == ""
