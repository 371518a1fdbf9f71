"""A thin strip under the frame slider marking where the key frames sit along the run, the frame shown
highlighted: HTML for the page, no Streamlit. Its marks line up with the slider's thumb because Streamlit's
slider track is inset by the thumb's half width (`TRACK_INSET_PX`) on each side of an element of the same width."""

from __future__ import annotations

TRACK_INSET_PX = 6
KEY_COLOR, CURRENT_COLOR, LINE_COLOR = "#F0A202", "#1C6FD1", "#E3E7ED"


def mark_left(step: int, last: int) -> str:
    """CSS `left` of the centre of the mark for `step` on a run of frames 0..last."""
    return f"calc({TRACK_INSET_PX}px + (100% - {2 * TRACK_INSET_PX}px) * {step / last:.6g})"


def _mark(step: int, last: int, color: str, width: int, height: int, title: str, kind: str) -> str:
    return (f"<span class='strip-{kind}' data-step='{step}' title='{title}' style='position:absolute;"
            f"left:{mark_left(step, last)};top:{(14 - height) // 2}px;width:{width}px;height:{height}px;"
            f"margin-left:-{width / 2:g}px;background:{color};border-radius:2px'></span>")


def key_frame_strip(key_steps: list[int], last: int, current: int) -> str:
    """The strip's HTML: a mark at each key frame recorded so far (larger at the frame shown) and a tick at the
    frame shown; empty when no key frame is recorded yet."""
    shown = [step for step in key_steps if step <= last]
    if not shown or last <= 0:
        return ""
    marks = [_mark(step, last, KEY_COLOR, 8 if step == current else 5, 14 if step == current else 10,
                   f"key frame: step {step}", "key") for step in shown]
    marks.append(_mark(current, last, CURRENT_COLOR, 2, 14, f"frame shown: {current}", "current"))
    line = (f"<span style='position:absolute;left:{TRACK_INSET_PX}px;right:{TRACK_INSET_PX}px;top:6px;height:2px;"
            f"background:{LINE_COLOR}'></span>")
    return (f"<div class='key-frame-strip' style='position:relative;height:14px;margin:-0.75rem 0 0.25rem'>"
            f"{line}{''.join(marks)}</div>")
