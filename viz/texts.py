"""The page's sentences about a run: each request's text so far (prompt and output), its progress, and what
a mid-run change did (a branch, a change taking effect, settings that differ from the scenario's)."""

from __future__ import annotations

import re
from typing import NamedTuple

from engine.engine import POOL_FIELDS
from engine.frame import Frame, RequestView, token_id_text
from scheduler import Config
from viz.glossary import changed_settings

PROMPT_TAIL_CHARS = 80
CHAT_MARKUP = re.compile(r"<\|[^|]*\|>(?:assistant|user|system)?")  # chat-template markers and role names


class RequestText(NamedTuple):
    request_id: int
    status: str
    prompt: str   # the end of the prompt (a chat template puts the user's words last)
    output: str
    num_output_tokens: int
    max_tokens: int


def _text(request: RequestView, start: int, stop: int) -> str:
    pieces = request.pieces
    if pieces is None:
        return " ".join(map(token_id_text, request.history.token_ids[start:stop]))
    return "".join(pieces[start:stop])


def request_texts(frame: Frame) -> list[RequestText]:
    texts = []
    for r in frame.requests:
        prompt = " ".join(CHAT_MARKUP.sub(" ", _text(r, 0, r.num_prompt_tokens)).split())
        if len(prompt) > PROMPT_TAIL_CHARS:
            prompt = "…" + prompt[-PROMPT_TAIL_CHARS:]
        status = r.status + (f" ({r.finish_reason})" if r.finish_reason else "")
        texts.append(RequestText(r.id, status, prompt, _text(r, r.num_prompt_tokens, r.num_tokens),
                                 r.num_output_tokens, r.max_tokens))
    return texts


def progress_text(text: RequestText, max_model_len: int) -> str:
    """Output so far against max_tokens, and why a request stopped short of it."""
    shown = f"{text.num_output_tokens}/{text.max_tokens} tokens"
    if text.status.endswith("(max_model_len)"):
        return f"{shown}: stopped at max_model_len={max_model_len} (prompt plus output) before its max_tokens"
    if text.status.endswith("(eos)"):
        return f"{shown}: stopped at its end-of-sequence token"
    return shown


def branch_notice(frame: int, old_last: int) -> str:
    """What a change at an earlier frame did to the run."""
    discarded = f"frame {old_last}" if old_last == frame + 1 else f"frames {frame + 1}-{old_last}"
    return (f"Branched at frame {frame}: {discarded} of the old run discarded; the run goes on from frame {frame} "
            "under the new settings.")


def pending_change(shown: Config, next_config: Config, step: int) -> str | None:
    """Settings changed at the frame shown take effect in the next step: say so, and what a pool change does."""
    changes = changed_settings(shown, next_config)
    if not changes:
        return None
    text = f"From step {step + 1}: {', '.join(changes)}."
    if any(getattr(shown, f) != getattr(next_config, f) for f in POOL_FIELDS):
        text += (f" The KV pool is rebuilt then ({next_config.num_kvcache_blocks} blocks of "
                 f"{next_config.kvcache_block_size} tokens): every running request recomputes its tokens in it.")
    return text


def title_in_effect(title: str, start: Config, now: Config, ignore: tuple[str, ...] = ()) -> str:
    """The run's title, naming the settings in effect where they differ from the ones the title describes."""
    changes = changed_settings(start, now, was="the scenario's:", ignore=ignore)
    return f"{title} · now with {', '.join(changes)}" if changes else title
