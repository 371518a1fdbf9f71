"""A link's mid-run changes in one URL parameter: `changes=v1.<URL-safe base64 of compact JSON, unpadded>`.

The JSON is a list, one entry per change in the order made: `[frame, {"setting": "value", ...}]` for settings
(each value written as its own link parameter would be, so `session/links.py` reads it with the same checks) or
`[frame, prompt, max_tokens, priority]` (with the temperature fifth when it is not 0) for a request added by hand.
The version prefix lets a later format be told apart; this module only packs and unpacks, it checks nothing.
"""

from __future__ import annotations

import base64
import binascii
import json

VERSION = "v1."


def pack(entries: list[list]) -> str:
    data = json.dumps(entries, separators=(",", ":"), ensure_ascii=False).encode()
    return VERSION + base64.urlsafe_b64encode(data).decode().rstrip("=")


def unpack(text: str) -> list:
    """The entries `pack` wrote; ValueError for any other text (another version, not base64, not a JSON list)."""
    if not text.startswith(VERSION):
        raise ValueError("not v1")
    body = text[len(VERSION):]
    try:
        entries = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode())
    except (binascii.Error, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(str(e)) from None
    if not isinstance(entries, list):
        raise ValueError("not a list")
    return entries
