"""A handout of the run on screen in the stepper: what its offline player, its printed pages and its slides show
beside the frames. The cover (title, story, the settings the run started under, the changes made during it), the
steps that get a printed page each (the key frames reached), and each request's generated text frame by frame, as
the stage's "Generated text" view shows it. viz/html_export.py draws them all with the stage player.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from engine.run.frame import Frame
from engine.run.recipe import Change
from i18n import text
from scheduler import Config
from scheduler.factory import DEFAULT_KIND, scheduler_info, settings_of
from viz.glossary import SETTING_FIELDS, setting, setting_value
from viz.texts import output_text, progress_text, prompt_text, status_text

MAX_HANDOUT_FRAMES = 2000  # frames 0..2,000 of a longer run, as the policy lab's stages (the cover says so)


@dataclass(frozen=True)
class Handout:
    """The run on screen, in words of `lang`: `frames` from frame 0 (the player's message, viz/html_export.py),
    `key_frames` as the stage's header carries them ([step, note, holds]), `titles` [first frame, title] per stretch
    of frames run under the same settings, `changes` the mid-run changes made (in order), `cursor` the frame shown."""
    title: str
    narrative: str
    model: str
    frames: Sequence[Frame]
    lang: str
    key_frames: Sequence[Sequence] = ()
    titles: Sequence[Sequence] = ()
    changes: Sequence[Change] = ()
    cursor: int = 0
    scheduler: str = DEFAULT_KIND  # the kind that decided the run (a trace records it)
    real_model: bool = False

    @property
    def last(self) -> int:
        return min(len(self.frames) - 1, MAX_HANDOUT_FRAMES)

    @property
    def shown(self) -> FirstFrames:
        """Frames 0..last, read from the run's store one at a time."""
        return FirstFrames(self.frames, self.last)

    def page_steps(self) -> list[int]:
        """The frames printed one per page: the key frames reached, else the frame shown (player/handout.js
        picks them so from the frames it holds)."""
        return sorted({k[0] for k in self.key_frames if k[0] <= self.last}) or [min(self.cursor, self.last)]


class FirstFrames(Sequence):
    """Frames 0..last of a run's frame store (which rebuilds a frame when asked), none of them copied."""

    def __init__(self, frames: Sequence[Frame], last: int):
        self._frames, self._count = frames, last + 1

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, k: int) -> Frame:
        if not -self._count <= k < self._count:
            raise IndexError(k)
        return self._frames[k % self._count]


def change_sentence(change: Change, lang: str) -> str:
    """A mid-run change in words: "After frame 5: max_num_seqs 1" or "After frame 3: a request added by hand, ..."."""
    if change.kind == "request":
        request = change.payload
        return text(lang, "handout.change_request", frame=change.step, prompt=request.prompt or "",
                    max_tokens=request.max_tokens)
    return text(lang, "handout.change", frame=change.step, settings=text(lang, "list.sep").join(
        _setting_words(name, value, lang) for name, value in change.settings.items()))


def _setting_words(name: str, value, lang: str) -> str:
    if name in SETTING_FIELDS:
        return f"{setting(name, lang).label} {setting_value(name, value, lang)}"
    if name in ("overlap", "adaptive"):
        return f"{text(lang, f'sidebar.{name}')} {text(lang, 'value.on' if value else 'value.off')}"
    return name


def _settings_tables(config: Config, lang: str, kind: str) -> str:
    """The settings the scheduler of `kind` reads, by its system's names (the others decide nothing in its run), in
    two tables side by side, so that the title page holds them under a long story."""
    info = scheduler_info(kind)
    rows = [f"<tr><th>{html.escape(setting(s.key, lang, info).label)}</th>"
            f"<td>{html.escape(setting_value(s.key, config.value(s.key), lang))}</td></tr>"
            for s in settings_of(kind) if s.key in SETTING_FIELDS and s.key not in info.ignored]
    half = -(-len(rows) // 2)
    return "<div class='sh-settings-pair'>" + "".join(
        f"<table class='sh-settings'>{''.join(part)}</table>" for part in (rows[:half], rows[half:])) + "</div>"


def cover_html(handout: Handout) -> str:
    """The title page: the run's title and story, its model and scheduler, the frames it holds, the settings of
    frame 0 its scheduler reads and the changes made during the run."""
    lang, last = handout.lang, handout.last
    t = lambda key, **values: html.escape(text(lang, key, **values))  # noqa: E731
    facts = [t("handout.model", model=handout.model)]
    facts.append(t("handout.scheduler", scheduler=text(lang, scheduler_info(handout.scheduler).name)))
    if len(handout.frames) - 1 > last:
        facts.append(t("handout.cut", total=len(handout.frames) - 1))
    changes = "".join(f"<li>{html.escape(change_sentence(c, lang))}</li>" for c in handout.changes)
    return (f"<h1>{html.escape(handout.title)}</h1><p class='sh-narrative'>{html.escape(handout.narrative)}</p>"
            f"<p class='sh-facts'>{'<br>'.join(facts)}<br><span class='sh-frames'></span></p>"
            f"<div class='sh-columns'><section>"
            f"<h2>{t('handout.settings')}</h2>{_settings_tables(handout.frames[0].config, lang, handout.scheduler)}"
            f"</section><section>"
            f"<h2>{t('handout.changes')}</h2>{f'<ul>{changes}</ul>' if changes else '<p>' + t('handout.no_changes')}"
            f"</section></div>")


def text_deltas(frames: Sequence[Frame], lang: str) -> tuple[dict[str, str], list[list]]:
    """Each request's prompt (by id) and, per frame, [request id, its status and progress, characters of its output
    kept from the frame before (as JavaScript counts them), characters added] for each request whose line changed:
    the "Generated text" view, frame by frame, in a few bytes a step."""
    prompts, deltas, before = {}, [], {}
    for frame in frames:
        changed = []
        for r in frame.requests:
            head = f"{status_text(r, lang)} · {progress_text(r, frame.config.max_model_len, lang)}"
            out = output_text(r)
            if r.id not in before:
                prompts[str(r.id)] = text(lang, "stage.prompt", prompt=prompt_text(r))
            old_head, old_out = before.get(r.id, (None, ""))
            if (head, out) != (old_head, old_out):
                keep = len(old_out) if out.startswith(old_out) else _common_prefix(old_out, out)
                changed.append([r.id, head, _utf16_length(out[:keep]), out[keep:]])
                before[r.id] = (head, out)
        deltas.append(changed)
    return prompts, deltas


def _utf16_length(s: str) -> int:
    """The length of `s` as JavaScript counts it (an emoji is two)."""
    return len(s.encode("utf-16-le")) // 2


def _common_prefix(a: str, b: str) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def handout_extras(handout: Handout, with_texts: bool = True) -> dict:
    """What handout.js shows beside the player: the cover, its language, the key frames' steps (those reached are
    printed) and the generated texts."""
    lang = handout.lang
    extras = {"cover": cover_html(handout), "lang": lang, "pages": sorted({k[0] for k in handout.key_frames}),
              "strings": {"frames": text(lang, "handout.frames", last="{last}"),  # filled in by the frames held
                          "texts_title": text(lang, "stage.view.text"), "nothing_yet": text(lang, "stage.nothing_yet"),
                          "caveat": text(lang, "model.caveat") if handout.real_model else ""}}
    if with_texts:
        extras["prompts"], extras["texts"] = text_deltas(handout.shown, lang)
    return extras
