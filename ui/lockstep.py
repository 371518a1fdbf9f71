"""The policy lab's lockstep stages: player/lockstep.js as a Streamlit component (st.components.v2), sent every
frame of the comparison's runs at once, so stepping, playing and the slider never wait for the server. The
message is built once per comparison and language and kept as JSON text (a fraction of its size as Python
objects); a rerun sends the same text, which the browser keeps as it is (playing or not)."""

from __future__ import annotations

import json
from collections.abc import Callable

import streamlit as st

from i18n import in_lang
from player.assets import lockstep_sources
from ui.language import current_lang, t
from viz.html_export import lockstep_message

LAST_STEP = 2000  # the stages hold steps 0..LAST_STEP: the most runs a comparison holds stay a few MB
AT_ONCE_FRAMES = 1000  # a comparison with more frames than this builds its stages when asked (a button)


@st.cache_resource(show_spinner=False)
def _component_sources() -> tuple[str, str]:
    """The players' and the lockstep's JS as the module a v2 component runs (its default export mounts), and CSS."""
    js, css = lockstep_sources()
    return (js + "\nexport default function (component) { return window.SchedlabLockstep.mount(component); }\n",
            css + "\n.sp-ls { --sp-ls-top: 3.75rem; }\n")  # its bar stops under Streamlit's header


def _built(runs) -> dict:
    """This comparison's lockstep messages by language (JSON), and whether the learner asked for them."""
    built = st.session_state.get("lockstep_messages")
    if built is None or built["runs"] is not runs:
        built = st.session_state.lockstep_messages = {"runs": runs, "asked": False}
    return built


def stopped_notes(runs, lang: str) -> list[str | None]:
    """Per run, what stopped it before its end (a scheduler of one's own that broke an invariant), or None."""
    return [in_lang(lang, run.ended) if run.ended else None for run in runs]


def lockstep_stages(runs, told: Callable[[str], tuple[list[str], list[tuple[int, str]]]] | None = None,
                    heading: bool = True, key: str | None = None):
    """Every run's stage at the same step, on one slider, with the steps where their decisions part. A long
    comparison builds them when asked: encoding its frames takes about three times as long as the comparison.
    `told(lang)`: the stages' names and the partings ([(step, sentence)]) in the caller's words (the tour's); by
    default the runs' labels and viz/lockstep.py's sentences; a run that stopped early (`ConfigRun.ended`) says why
    on its stage. `heading`: the lab's title and caption above. `key`:
    which stages these are: stages sent with another key start at step 0 (a tour's stop), the same ones sent again
    (in another language) keep their step."""
    lang, built = current_lang(), _built(runs)
    if heading:
        st.subheader(t("lab.lockstep"))
        st.caption(t("lab.lockstep_caption"))
    frames = sum(min(len(r.frames), LAST_STEP + 1) for r in runs)
    if frames > AT_ONCE_FRAMES and not built["asked"]:
        if not st.button(t("lab.lockstep_show", frames=f"{frames:,}"), key="lockstep_show"):
            return
        built["asked"] = True
    if (longest := max(len(r.frames) for r in runs) - 1) > LAST_STEP:
        st.caption(t("lab.lockstep_first", last=f"{LAST_STEP:,}", steps=f"{longest:,}"))
    if lang not in built:
        with st.spinner(t("lab.lockstep_preparing")):
            labels, partings = told(lang) if told else ([r.label for r in runs], None)
            named = [(label, run.frames) for label, run in zip(labels, runs, strict=True)]
            built[lang] = json.dumps(lockstep_message(named, lang=lang, last_step=LAST_STEP, told=partings,
                                                      stopped=stopped_notes(runs, lang)) | {"key": key})
    js, css = _component_sources()
    component = st.components.v2.component("schedlab_lockstep", js=js, css=css, isolate_styles=False)
    component(data=built[lang], key="lockstep")
