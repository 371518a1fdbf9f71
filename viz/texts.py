"""The page's sentences about a run: each request's text so far (prompt and output), its progress, and what
a mid-run change did (a branch, a change taking effect, settings that differ from the scenario's)."""

from __future__ import annotations

import re
from typing import NamedTuple

from engine.run.frame import Frame, RequestView, token_id_text
from engine.run.recipe import POOL_FIELDS
from i18n import in_lang, text
from scheduler import Config
from scheduler.factory import scheduler_info
from viz.glossary import changed_settings
from viz.narrate import pool_size

PROMPT_TAIL_CHARS = 80
CHAT_MARKUP = re.compile(r"<\|[^|]*\|>(?:assistant|user|system)?")  # chat-template markers and role names
FINISH_TAGS = ("eos", "max_tokens", "max_model_len")  # a finished request's reason; an aborted one's is a sentence


class RequestText(NamedTuple):
    request_id: int
    status: str
    prompt: str   # the end of the prompt (a chat template puts the user's words last)
    output: str
    num_output_tokens: int
    max_tokens: int
    finish_reason: str | None  # as recorded: a FINISH_TAGS tag, an abort's reason, or None


def _text(request: RequestView, start: int, stop: int) -> str:
    pieces = request.pieces
    if pieces is None:
        return " ".join(map(token_id_text, request.history.token_ids[start:stop]))
    return "".join(pieces[start:stop])


def prompt_text(request: RequestView) -> str:
    """The end of a request's prompt, chat-template markers dropped (a chat template puts the user's words last)."""
    prompt = " ".join(CHAT_MARKUP.sub(" ", _text(request, 0, request.num_prompt_tokens)).split())
    return "…" + prompt[-PROMPT_TAIL_CHARS:] if len(prompt) > PROMPT_TAIL_CHARS else prompt


def output_text(request: RequestView) -> str:
    """What a request has written so far: the real model's text, or the simulated model's token ids."""
    return _text(request, request.num_prompt_tokens, request.num_tokens)


def status_text(request: RequestView, lang: str) -> str:
    status = text(lang, f"status.{request.status}")
    if request.finish_reason:
        status = text(lang, "texts.status_because", status=status, reason=reason_text(request.finish_reason, lang))
    return status


def request_texts(frame: Frame, lang: str) -> list[RequestText]:
    return [RequestText(r.id, status_text(r, lang), prompt_text(r), output_text(r), r.num_output_tokens,
                        r.max_tokens, r.finish_reason) for r in frame.requests]


def reason_text(reason: str, lang: str) -> str:
    """Why a request ended, in a few words: a finish's tag, or an abort's reason (a Message, said in `lang`; a
    trace's recorded reason as it was written)."""
    return text(lang, f"finish_tag.{reason}") if reason in FINISH_TAGS else in_lang(lang, reason)


def progress_text(request: RequestText, max_model_len: int, lang: str) -> str:
    """Output so far against max_tokens, and why a request stopped short of it."""
    shown = text(lang, "texts.progress", n=request.num_output_tokens, max_tokens=request.max_tokens)
    if request.finish_reason == "max_model_len":
        return text(lang, "texts.stopped_max_model_len", shown=shown, max_model_len=max_model_len)
    if request.finish_reason == "eos":
        return text(lang, "texts.stopped_eos", shown=shown)
    return shown


def branch_notice(frame: int, old_last: int, lang: str) -> str:
    """What a change at an earlier frame did to the run."""
    discarded = (text(lang, "texts.discarded_one", frame=old_last) if old_last == frame + 1
                 else text(lang, "texts.discarded_many", first=frame + 1, last=old_last))
    return text(lang, "texts.branched", frame=frame, discarded=discarded)


def pending_change(frame: Frame, next_config: Config, lang: str) -> str | None:
    """Settings changed at the frame shown take effect in the next step: say so, and what a pool change does (in
    the units of the frame's pool)."""
    shown = frame.config
    changes = changed_settings(shown, next_config, lang=lang)
    if not changes:
        return None
    notice = text(lang, "texts.from_step", step=frame.step + 1, changes=text(lang, "list.sep").join(changes))
    if any(getattr(shown, f) != getattr(next_config, f) for f in POOL_FIELDS):
        notice += text(lang, "texts.pool_rebuilt", pool=pool_size(lang, frame, next_config.num_kvcache_blocks,
                                                                  next_config.kvcache_block_size))
    return notice


def title_in_effect(title: str, start: Config, now: Config, ignore: tuple[str, ...] = (),
                    *, lang: str) -> str:
    """The run's title, naming the settings in effect where they differ from the ones the title describes."""
    changes = changed_settings(start, now, was="was_scenario", ignore=ignore, lang=lang)
    return text(lang, "texts.title_now", title=title, changes=text(lang, "list.sep").join(changes)) if changes \
        else title


def scheduler_title(title: str, own: str, scheduler: str, lang: str) -> str:
    """A preset's title, naming the scheduler that decides the run when it is not the one the preset was written for
    (`own`): its title and story tell that one's decisions."""
    if scheduler == own:
        return title
    return text(lang, "run.other_scheduler", title=title, scheduler=text(lang, scheduler_info(scheduler).run_name))


def scheduler_story(story: str, own: str, scheduler: str, lang: str) -> str:
    """A preset's story, told after a line saying so when another scheduler than its own decides the run."""
    if scheduler == own:
        return story
    return text(lang, "run.other_scheduler_story", own=text(lang, scheduler_info(own).run_name),
                scheduler=text(lang, scheduler_info(scheduler).run_name)) + "\n\n" + story
