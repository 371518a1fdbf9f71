"""The stage's "Handout" view: the run on screen as an offline player (HTML, which prints as the handout), the
printed handout (PDF, when this server has Chromium) and pictures for slides (a PNG of the frame shown, a GIF of a
range of frames). Each is built when asked and kept until the run, its frames or the language change. And what
Ctrl+P prints: the same pages, from the frames the stage holds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from player.assets import handout_code
from render import chromium
from render.images import GIF_FRAMES, SLIDE_SIZES, gif_of, handout_pngs
from render.pdf import handout_pdf
from ui.downloads import built_on_request
from ui.language import t
from ui.state import lab
from viz.handout import MAX_HANDOUT_FRAMES, Handout, handout_extras
from viz.html_export import gif_steps, handout_html

NAME = "schedlab_handout"  # the files' names start so


def _store(handout: Handout) -> dict:
    """The files built for this run as it stands (a new frame, a branch or the language starts afresh)."""
    key = (id(lab().frames), handout.last, handout.lang)  # a branch or a reset is a new frame store
    if st.session_state.get("handout_key") != key:
        st.session_state.handout_key, st.session_state.handout_files = key, {}
    return st.session_state.handout_files


def handout_view(handout: Handout, whole_run: Callable[[], Handout]):
    """The files of the run on screen: the offline player and the printed handout hold the whole run (`whole_run`,
    computed to its end when one is built) and open at the frame shown; the slides, the frames stepped to."""
    store, cursor = _store(handout), handout.cursor
    st.caption(t("handout.caption", bound=f"{MAX_HANDOUT_FRAMES:,}"))
    html_col, pdf_col = st.columns(2)
    built_on_request(html_col, store, f"handout_html_{cursor}", lambda: handout_html(whole_run()).encode(),
                     t("handout.build_html"), t("handout.download_html"), f"{NAME}.html", "text/html")
    if Path(chromium.CHROMIUM).is_file():  # its pages are the key frames, else the frame shown
        built_on_request(pdf_col, store, f"handout_pdf_{cursor}", lambda: handout_pdf(whole_run()),
                         t("handout.build_pdf"), t("handout.download_pdf"), f"{NAME}.pdf", "application/pdf")
    else:  # the offline player prints as the handout: the browser's own print makes the PDF
        pdf_col.info(t("handout.no_chromium", path=chromium.CHROMIUM), icon=":material/print_disabled:")
    slides(handout, store)


def slides(handout: Handout, store: dict):
    """A PNG of the frame shown and a GIF of a range of frames, at a slide's size."""
    st.caption(t("handout.slides"))
    sizes, last = list(SLIDE_SIZES), handout.last
    size = st.segmented_control(t("handout.size"), sizes, default=sizes[0], key="handout_size") or sizes[0]
    frame = min(handout.cursor, last)
    first, final = st.slider(t("handout.gif_range"), 0, last, (0, last), key=f"handout_gif_{last}") if last else (0, 0)
    png_col, gif_col = st.columns(2)
    built_on_request(png_col, store, f"handout_png_{frame}_{size}",
                     lambda: handout_pngs(handout, [frame], size)[0],
                     t("handout.build_png", frame=frame), t("handout.download_png", frame=frame),
                     f"{NAME}_frame_{frame}_{size}.png", "image/png")
    steps = gif_steps(final + 1, GIF_FRAMES, first)
    built_on_request(gif_col, store, f"handout_gif_{first}_{final}_{size}",
                     lambda: gif_of(handout_pngs(handout, steps, size)),
                     t("handout.build_gif", first=first, last=final),
                     t("handout.download_gif", first=first, last=final),
                     f"{NAME}_frames_{first}-{final}_{size}.gif", "image/gif")


@st.cache_resource(show_spinner=False)
def _print_sources() -> tuple[str, str]:
    js, css = handout_code()
    return js + "\nexport default function (component) { window.SchedlabHandout.follow(component.data); }\n", css


def print_layout(handout: Handout):
    """What the browser's own print (Ctrl+P) shows in place of the page: the handout's title page and one page per
    key frame, drawn at print time from the frames the stage player holds (player/handout.js)."""
    js, css = _print_sources()
    printer = st.components.v2.component("schedlab_handout_print", js=js, css=css, isolate_styles=False)
    printer(data=handout_extras(handout, with_texts=False), key="handout_print", height=0)
