"""The words of the page, defined once in i18n/ and read here by language: each setting's label and help, the
stage legend (the Streamlit legend and the browser-side player show the same marks), the metrics, the two clocks
and the model caveat, and sentences built from them for the settings in effect."""

from __future__ import annotations

from typing import NamedTuple

from i18n import text
from scheduler import Config
from scheduler.config import MODEL_SETTINGS
from scheduler.contract import SchedulerInfo
from scheduler.factory import SETTINGS, scheduler_info


class Setting(NamedTuple):
    label: str
    help: str


# Every setting a learner may change, shared and each kind's own, in the factory's order (labels and help: the message
# ids each declares, scheduler/settings.py).
SETTING_FIELDS = tuple(key for key in SETTINGS if key not in MODEL_SETTINGS)
LEGEND = ("request", "tokens", "budget", "progress", "shared", "colours", "computing")
# The marks drawn beside the queues and the pool: a swatch ("sw:<kind>", drawn by player.css) or a glyph.
TOKEN_MARKS = (("sw:cached", "cached"), ("sw:now", "now"), ("sw:pending", "pending"), ("·", "space"),
               ("⏎", "newline"), ("#42", "token_id"), ("�", "partial"), ("∅", "no_text"), ("⋯", "gap"),
               ("◌", "computing"))
# The marks only one kind of model draws: the player shows each in the legend only on a run that draws it.
ID_MARKS, TEXT_MARKS = ("#42",), ("�", "∅")  # the simulated model's tokens have no text; the real model's have
POOL_MARKS = (("sw:used", "in_use"), ("sw:free", "free"), ("sw:cachedfree", "cached_free"),
              ("sw:overfull", "overfull"))
TREE_POOL_MARKS = POOL_MARKS[:3]  # a radix tree's pool, in its words (no block to overfill)
METRICS = ("TTFT", "TPOT", "latency")


class LegendEntry(NamedTuple):
    shown: str    # what the learner sees on the stage
    meaning: str


def setting(field: str, lang: str, info: SchedulerInfo | None = None) -> Setting:
    """A setting's label and help, from the message ids its declaration names (scheduler/settings.py); under a
    scheduler whose system names a shared field otherwise (`info.labels`), the label leads with that name."""
    spec = SETTINGS[field]
    label = text(lang, spec.label_id)
    if info is not None and info.setting_name(field) != field:
        label = text(lang, "setting.system_label", name=info.setting_name(field), system=info.system, label=label)
    return Setting(label, text(lang, spec.help_id))


def input_help(key: str, lang: str) -> str:
    return text(lang, f"input.{key}")


def legend(lang: str) -> list[LegendEntry]:
    """Every mark the queues, the block grid and the block tables draw."""
    return [LegendEntry(text(lang, f"legend.{key}.shown"), text(lang, f"legend.{key}.meaning")) for key in LEGEND]


def player_legend(lang: str) -> dict:
    """The marks the stage player's legends show, [mark, words] each: the player draws them as sent."""
    return {"tokens": [[mark, text(lang, f"mark.{key}")] for mark, key in TOKEN_MARKS],
            "pool": [[mark, text(lang, f"mark.{key}")] for mark, key in POOL_MARKS],
            "pool_tree": [[mark, text(lang, f"mark.tree.{key}")] for mark, key in TREE_POOL_MARKS],
            "hint": text(lang, "mark.hint"), "hint_tree": text(lang, "mark.tree.hint"),
            "id_marks": ID_MARKS, "text_marks": TEXT_MARKS}


def legend_lines(lang: str) -> list[str]:
    marks = [LegendEntry(mark.removeprefix("sw:") if mark.startswith("sw:") else mark, text(lang, f"mark.{key}"))
             for mark, key in TOKEN_MARKS[3:]]  # the swatches are the token boxes' entry
    return [text(lang, "legend.line", shown=e.shown, meaning=e.meaning) for e in (*legend(lang), *marks)]


def clock(which: str, lang: str) -> str:
    """"simulated" or "real": the clock's name and what it measures."""
    return text(lang, f"clock.{which}")


def model_caveat(lang: str) -> str:
    return text(lang, "model.caveat")


def metric_definitions(lang: str) -> str:
    return " ".join(text(lang, "metric.definition", name=text(lang, f"metric.{name}.name"),
                         meaning=text(lang, f"metric.{name}")) for name in METRICS)


def setting_value(field: str, value, lang: str) -> str:
    if field in SETTINGS and (value_id := SETTINGS[field].value_id(value)):
        return text(lang, value_id)
    if isinstance(value, bool):
        return text(lang, "value.on" if value else "value.off")
    return str(value)


def _label(field: str, lang: str) -> str:
    return text(lang, SETTINGS[field].label_id) if field in SETTINGS else field


def changed_settings(start: Config, now: Config, was: str = "was", ignore: tuple[str, ...] = (),
                     *, lang: str) -> list[str]:
    """Each setting that differs between `start` and `now`, e.g. "KV blocks in the pool 6 (was 3)" (`was`:
    "was" or "was_scenario", "the scenario's: 3")."""
    return [text(lang, "settings.changed", label=_label(f, lang), now=setting_value(f, now.value(f), lang),
                 was=text(lang, f"settings.{was}"), before=setting_value(f, start.value(f), lang))
            for f in SETTING_FIELDS if f not in ignore and start.value(f) != now.value(f)]


def variant_label(changes: dict, lang: str) -> str:
    """A scenario variant's changes in words: "chunked prefill on, token budget per step ... 64"; a variant decided
    by another scheduler names it ("decided by the SGLang twin")."""
    return text(lang, "list.sep").join(_variant_item(f, v, lang) for f, v in changes.items())


def _variant_item(field: str, value, lang: str) -> str:
    """"chunked prefill on"; a switch turned on or off reads as a verb in Chinese (开启……, 关闭……), since a trailing
    关 after a bug's name reads as a double negative."""
    if field == "scheduler":
        return text(lang, "settings.variant_scheduler", name=text(lang, scheduler_info(value).run_name))
    if isinstance(value, bool) and not (field in SETTINGS and SETTINGS[field].value_id(value)):
        return text(lang, f"settings.variant_{'on' if value else 'off'}", label=_label(field, lang))
    return text(lang, "settings.variant_item", label=_label(field, lang), value=setting_value(field, value, lang))
