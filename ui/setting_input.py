"""One scheduler setting's widget, as its declaration says (scheduler/settings.py): a choice among its `choices`
(its values in words), a number within its bounds (a fraction at its `step`), or a switch. The sidebar and the policy
lab's custom comparison draw a setting through it."""

from __future__ import annotations

from engine.run.limits import BOUNDS
from scheduler.settings import SettingSpec
from viz.glossary import setting_value


def setting_input(container, spec: SettingSpec, label: str, lang: str, value=None, **widget):
    """The widget of `spec` in `container` (streamlit or a column), showing `value` (None: what its key holds in
    the session state), with `widget`'s arguments (key, help, on_change...); returns what it shows."""
    if spec.choices:
        index = {} if value is None else {"index": spec.choices.index(value)}
        return container.selectbox(label, spec.choices, format_func=lambda v: setting_value(spec.key, v, lang),
                                   **index, **widget)
    shown = {} if value is None else {"value": value}
    if spec.kind == "int":
        return container.number_input(label, *BOUNDS[spec.key], step=1, **shown, **widget)
    if spec.kind == "float":
        return container.number_input(label, *map(float, BOUNDS[spec.key]), step=spec.declared.step, format="%.2f",
                                      **shown, **widget)
    return container.toggle(label, **shown, **widget)
