"""Each request's text so far: prompt and generated output, as the page lists them."""

from __future__ import annotations

import re
from typing import NamedTuple

from engine.frame import Frame, RequestView, token_id_text

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
