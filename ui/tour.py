"""The guided tour's page parts (app_pages/tour.py) and its pointer on the landing page: the stops of
engine/analysis/tour.py, their runs kept per session, the lockstep stages and the partings in the tour's words
(viz/tour.py). Every kind shown is read from the factory, through its declaration."""

from __future__ import annotations

import streamlit as st

from engine.analysis.compare import ConfigRun
from engine.analysis.tour import STOPS, Stop, run_stop, tour_kinds
from i18n import join_and
from ui.language import current_lang, said, t
from ui.lockstep import lockstep_stages
from ui.state import USER_ERRORS, presets
from viz.tour import Told, explained, kind_line, kind_name


def stop_title(stop: Stop) -> str:
    return t("tour.stop_label", n=STOPS.index(stop) + 1, title=t(f"tour.stop.{stop.id}.title"))


def stop_runs(stop: Stop) -> list[ConfigRun] | None:
    """The stop's runs under every kind, computed once per session (the fake model: well under a second each);
    None, said on the page, when its preset cannot be read or a kind refuses it."""
    scenarios, errors = presets()
    if stop.preset not in scenarios:
        st.error(t("tour.no_preset", preset=stop.preset, error=errors.get(f"{stop.preset}.toml", "")))
        return None
    kept = st.session_state.setdefault("tour_runs", {})
    key = (stop.id, tour_kinds())  # a kind registered since gets its stage
    if key not in kept:
        try:
            kept[key] = run_stop(stop, scenarios[stop.preset])
        except USER_ERRORS as e:  # a kind that refuses the stop's config or workload says why; the page stays
            st.error(t("tour.not_run", error=said(e)))
            return None
    return kept[key]


def about():
    """The learning path the tour follows, and one line per kind: its name, what it mirrors, what it says of itself."""
    lang, kinds = current_lang(), tour_kinds()
    with st.expander(t("tour.about", n=len(kinds))):
        st.markdown(t("tour.caption", n=len(kinds)))
        st.markdown("\n".join(f"- {kind_line(kind, lang)}" for kind in kinds))


def _told(runs: list[ConfigRun]):
    """The stages' names and the partings' words in a language, for the lockstep stages."""
    def told(lang: str) -> tuple[list[str], list[tuple[int, str]]]:
        return ([kind_name(run.label, lang) for run in runs],
                [(each.step, each.whole) for each in explained([(r.label, r.frames) for r in runs], lang=lang)])
    return told


def _run_lines(each: Told) -> str:
    lines = []
    for run in each.runs:
        links = " · ".join(f"[{t('tour.link', what=link.what, where=link.where)}]({link.url})" for link in run.links)
        told = t("tour.run_told", name=f"**{run.name}**", batch=run.batch, why=t("tour.why_sep").join(run.why))
        lines.append(f"- {told}" + (f" — {links}" if links else ""))
    return "\n".join(lines)


def partings_told(runs: list[ConfigRun]):
    """Every parting step: what each scheduler did, why, and the source lines that decide it."""
    st.subheader(t("tour.partings"))
    st.caption(t("tour.partings_caption"))
    told = explained([(r.label, r.frames) for r in runs], lang=current_lang())
    if not told:
        st.info(t("tour.never"))
    for each in told:
        st.markdown(f"{each.sentence}\n\n{_run_lines(each)}")


def tour_page():
    st.subheader(t("tour.title"))
    stops = {stop.id: stop for stop in STOPS}
    chosen = st.segmented_control(t("tour.stop"), list(stops), default=STOPS[0].id, required=True, key="tour_stop",
                                  format_func=lambda stop_id: stop_title(stops[stop_id]), label_visibility="collapsed")
    stop = stops.get(chosen, STOPS[0])
    st.markdown(t(f"tour.stop.{stop.id}.intro"))
    about()
    runs = stop_runs(stop)
    if runs is None:
        return
    lockstep_stages(runs, told=_told(runs), heading=False, key=stop.id)  # each stop opens at its step 0
    partings_told(runs)


def tour_pointer(page):
    """On the landing page: which schedulers the app holds (from their declarations), and the way to the tour."""
    lang, kinds = current_lang(), tour_kinds()
    words, link = st.columns([5, 1], vertical_alignment="center")
    words.caption(t("tour.pointer", n=len(kinds), names=join_and(lang, [kind_name(k, lang) for k in kinds])))
    link.page_link(page, label=t("tour.pointer_link"), icon=":material/route:")
