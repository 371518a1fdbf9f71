"""Browser tokens the server issued (no Streamlit): who a browser is in a class (ui/class_identity.py keeps it in
an HttpOnly cookie that only the server sets, ui/token_route.py).

A token is a random body and the server's signature of it (HMAC-SHA256 under a secret of the server's): a token
the server never issued (`"A" * 32`, or one made up with the right shape) is refused, and that browser is issued a
fresh one. The secret is $SCHEDLAB_TOKEN_SECRET where the operator gives one, else drawn once and kept in the class
store, so every server process of a lecture hall (Redis) issues and accepts the same tokens.

A session hands its new token to its browser through a ticket: a one-use nonce filed in the store for TICKET_S,
which the page sends to the server's route; the route answers with the token's cookie. The page never holds the
token itself, and a ticket redeemed once (or late) sets nothing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import secrets
import threading

from session.class_keys import SERVER, TOKEN_SECRET_FIELD, ticket_key
from session.class_store import ClassStore, Tx

SECRET_ENV = "SCHEDLAB_TOKEN_SECRET"
TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{24}\.[A-Za-z0-9_-]{22}")  # body . signature
TICKET_SHAPE = re.compile(r"[A-Za-z0-9_-]{32}")
TICKET_S = 120  # a ticket not redeemed within this is gone (the page sends it as soon as it is drawn)


def _signature(secret: bytes, body: str) -> str:
    mac = hmac.new(secret, body.encode(), hashlib.sha256).digest()[:16]
    return base64.urlsafe_b64encode(mac).decode().rstrip("=")


def signed(secret: str, body: str) -> str:
    """The token of `body` (24 of [A-Za-z0-9_-]) under `secret`: what a server given $SCHEDLAB_TOKEN_SECRET issues
    for it (a bench's simulated browsers carry tokens made so)."""
    return f"{body}.{_signature(secret.encode(), body)}"


def device_id(token: str) -> str:
    """A short name for a token that says nothing of it (the lecturer's desk lists devices by it: the page never
    holds a token)."""
    return hashlib.sha256(token.encode()).hexdigest()[:12]


class Tokens:
    """Issues and checks a server's browser tokens, and hands them to browsers by ticket."""

    def __init__(self, store: ClassStore):
        self.store = store
        self._secret: bytes | None = None
        self._lock = threading.Lock()

    def _key(self) -> bytes:
        """The server's secret: the operator's, else the store's (drawn by the first process that needs it)."""
        with self._lock:
            if self._secret is None:
                given = os.environ.get(SECRET_ENV)
                if not given:
                    self.store.hsetnx(SERVER, TOKEN_SECRET_FIELD, secrets.token_urlsafe(32))
                    given = self.store.hget(SERVER, TOKEN_SECRET_FIELD)
                self._secret = given.encode()
            return self._secret

    def issue(self) -> str:
        return signed(self._key().decode(), secrets.token_urlsafe(18))

    def issued(self, token: str | None) -> bool:
        """Whether the server issued `token` (its signature is the server's)."""
        if not token or not TOKEN_SHAPE.fullmatch(token):
            return False
        body, signature = token.split(".")
        return hmac.compare_digest(signature, _signature(self._key(), body))

    def ticket(self, token: str) -> str:
        """A one-use ticket for `token`, good for TICKET_S."""
        nonce = secrets.token_urlsafe(24)
        self.store.set(ticket_key(nonce), token, ttl_s=TICKET_S)
        return nonce

    def redeem(self, ticket: str | None) -> str | None:
        """The token of a ticket, once (None: no such ticket, redeemed already, or too late)."""
        if not ticket or not TICKET_SHAPE.fullmatch(ticket):
            return None
        key = ticket_key(ticket)

        def take(tx: Tx) -> str | None:
            token = tx.get(key)
            tx.delete(key)
            return token
        token = self.store.atomically((key,), take)
        return token if self.issued(token) else None
