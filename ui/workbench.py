"""The Workbench: a learner writes a scheduler in the browser (a starter to begin from, the editor, a file up or
down), picks what to run it on, and runs it in the sandbox; what came of it is said here (every invariant held, the
one that broke and at which frame, their traceback at their line, the limit it hit, what it printed) and its run
opens on the stage (ui/stage.py), the same as any other run's."""

from __future__ import annotations

import ast

import streamlit as st

from editor import code_editor, edited_source, editor_built
from i18n import text
from sandbox.limits import MAX_SOURCE
from session.own_scheduler import OwnScheduler
from starters import BY_ID, STARTERS, source
from ui.language import current_lang, said, t
from ui.stage import stage
from ui.state import init_session, lab, settings_in_effect
from ui.workbench_run import Run, collect, start
from ui.workbench_state import bench, edited, load, own_scheduler
from ui.workbench_target import target_spec

POLL_S = 0.5  # how often the page looks whether the run has ended
EDITOR_HEIGHT = 400  # pixels: about 20 lines, with Run in sight at 1280x720


def classes_in(code: str) -> list[str]:
    """The classes `code` defines at its top level, in order; none where it does not parse (the run will say why).
    Only parsed, never run."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [node.name for node in tree.body if isinstance(node, ast.ClassDef)]


def _on_edit():
    """The editor's text kept as the learner's; one longer than the sandbox runs is not kept (the editor still holds
    it), said under the editor until it is short enough."""
    code = edited_source()
    bench().too_long = code is not None and len(code) > MAX_SOURCE
    if code is not None and not bench().too_long:
        edited(source=code)


def _on_starter():
    chosen = BY_ID[st.session_state.workbench_starter]
    load(OwnScheduler(source(chosen), chosen.class_name, chosen.id))


def starter_picker():
    """The starters (the first is the learner's until they pick another) and the task of the one picked; loading one
    replaces the editor's text (its help says to download the learner's first)."""
    own, lang = own_scheduler(), current_lang()
    ids = [s.id for s in STARTERS]
    if st.session_state.get("workbench_starter") not in ids:
        st.session_state.workbench_starter = own.starter if own.starter in ids else ids[0]
    cols = st.columns([2, 1, 4], vertical_alignment="bottom")
    cols[0].selectbox(t("workbench.starter"), ids, key="workbench_starter",
                      format_func=lambda i: text(lang, BY_ID[i].title))
    cols[1].button(t("workbench.load_starter"), on_click=_on_starter, width="stretch",
                   help=t("workbench.load_starter_help"))
    cols[2].caption(t(BY_ID[st.session_state.workbench_starter].task))


def uploader():
    """A .py file of the learner's in place of the editor's text (loaded once per file)."""
    upload = st.file_uploader(t("workbench.upload"), type=["py"], key="workbench_upload")
    here = bench()
    if upload is None or upload.file_id == here.upload_id:
        return
    here.upload_id = upload.file_id
    try:
        code = upload.getvalue().decode("utf-8")
    except UnicodeDecodeError:
        st.error(t("workbench.upload_not_text", name=upload.name))
        return
    if len(code) > MAX_SOURCE:
        st.error(t("workbench.upload_too_big", name=upload.name, kb=MAX_SOURCE // 1024))
        return
    found = classes_in(code)
    load(OwnScheduler(code, found[-1] if found else own_scheduler().class_name))
    st.rerun()  # the editor, drawn above, shows the file


@st.fragment
def editor_pane():
    """The editor, the class that is the scheduler, the file down or up, what to run it on and Run: one fragment, so
    the learner's edits rerun only this, and Run, pressed as the editor sends its last edit (leaving it), is seen by
    the run that edit starts (a click outside the fragment would be lost to it)."""
    here, own = bench(), own_scheduler()
    if editor_built():
        code_editor(own.source, here.doc_id, here.markers, here.marker_id, t("workbench.editor_label"), _on_edit,
                    EDITOR_HEIGHT)
    else:  # a checkout where `make install` did not build the editor: a plain text area, said why
        st.caption(t("workbench.no_editor"))
        code = st.text_area(t("workbench.editor_label"), own.source, height=EDITOR_HEIGHT, max_chars=MAX_SOURCE)
        if code != own.source:
            edited(source=code)
    if here.too_long:
        st.error(t("workbench.too_long", kb=MAX_SOURCE // 1024))
    own = own_scheduler()
    found = classes_in(own.source)
    cols = st.columns([2, 1, 2], vertical_alignment="bottom")
    if found:
        chosen = cols[0].selectbox(t("workbench.class"), found, found.index(own.class_name)
                                   if own.class_name in found else len(found) - 1, key="workbench_class")
        if chosen != own.class_name:
            edited(class_name=chosen)
    else:
        cols[0].caption(t("workbench.no_class"))
    cols[1].download_button(t("workbench.download"), own.source, file_name=f"{own.class_name or 'scheduler'}.py",
                            mime="text/x-python", width="stretch", icon=":material/download:")
    with cols[2].popover(t("workbench.upload_short"), icon=":material/upload_file:", width="stretch"):
        uploader()
    run_button()


def run_button():
    """What to run it on, and Run."""
    spec = target_spec()
    pressed = st.button(t("workbench.run"), type="primary", disabled=spec is None, icon=":material/play_arrow:",
                        width="stretch")
    if pressed and spec is not None:
        if not start(bench(), own_scheduler(), spec):
            st.warning(t("workbench.busy"))
            return
        st.rerun()  # the whole page: the run's status below, looked at until it ends


def outcome_view(run: Run):
    """What came of the run, in the learner's words."""
    if run.busy:
        st.info(t("workbench.running", s=f"{run.elapsed_s:.0f}"), icon=":material/hourglass_top:")
        return
    if run.error is not None:
        st.error(said(run.error))
    outcome = run.outcome
    if outcome is None:
        return
    if outcome.fault is not None:
        st.error(said(outcome.fault.message), icon=":material/bug_report:")
        st.code(outcome.fault.text, language="python")
    if outcome.broken is not None:
        where = [t("workbench.at_frame", frame=run.lab.cursor)] if run.lab is not None else []
        st.error("\n\n".join([t("workbench.broken", step=outcome.broken.step, what=said(outcome.broken)), *where]),
                 icon=":material/report:")
    if outcome.stopped is not None:
        st.warning(t("workbench.stopped", why=said(outcome.stopped)), icon=":material/timer_off:")
    if outcome.ok:
        st.success(t("workbench.ok", steps=run.lab.last if run.lab else 0), icon=":material/check_circle:")
    if outcome.prints:
        with st.expander(t("workbench.prints", n=len(outcome.prints))):
            st.code(outcome.prints, language=None)


def run_status():
    """The run going on (looked at every POLL_S until it ends: then the whole page, for its stage) or the last."""
    here = bench()
    busy = isinstance(here.run, Run) and here.run.busy

    @st.fragment(run_every=POLL_S if busy else None)
    def status():
        run = collect(here)
        if run is None:
            return
        if busy and not run.busy:
            st.rerun()  # the whole page: the stage shows the run
        outcome_view(run)
    status()


def workbench_page():
    init_session()  # this session's lab and the stage's own state, as the stepper has them
    here = bench()
    st.subheader(t("workbench.title"))
    st.caption(t("workbench.intro"))
    starter_picker()
    editor_pane()
    run_status()
    if isinstance(here.run, Run) and here.run.lab is not None and lab() is here.run.lab:
        st.session_state.sidebar_settings = settings_in_effect()  # as the sidebar does: the stage compares them
        stage()
