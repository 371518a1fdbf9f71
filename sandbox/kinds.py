"""A learner's kind on the server: a declaration only. The worker reports the learner's class as data
(`declaration`): the built-in kind whose declaration it derives, its own kind id and its names per language. The
server (`register`) checks that data again, as a claim, and registers under an id it makes itself (`own_<digest>`
of the declaration), among the kinds known by id only (scheduler/factory.py DECLARED: no list of kinds shows it), a
class of the built-in kind's declaration derived under that id, whose names are the learner's,
and which refuses to run: no learner code ever reaches the server, yet a trace of the kind opens wherever the
built-in kinds' traces open (stage, lab, handouts). At most SANDBOX_KINDS kinds per server process."""

from __future__ import annotations

import hashlib
import json
import threading
import unicodedata

from engine.learner import KIND_ID
from engine.learner import register as register_class
from engine.run.limits import SANDBOX_KINDS
from i18n import CATALOGUES, MessageError
from scheduler.factory import DECLARED, SCHEDULER_KINDS, SCHEDULERS

MAX_NAME = 40  # characters of a kind's name in one language
_lock = threading.Lock()
_registered: set[str] = set()


class DeclarationError(MessageError):
    """A learner's declaration the server will not register (a message id under "sandbox.")."""


def declaration(cls) -> dict:
    """What the learner's class `cls` declares, as data: the built-in kind it derives from (its nearest built-in
    ancestor, whose `info.derive(kind)` must be its `info` exactly), its kind id, its names. In the worker."""
    info = cls.info
    base = next((c.info.kind for c in cls.__mro__[1:] if c.info.kind in SCHEDULER_KINDS and
                 SCHEDULERS[c.info.kind] is c), None)
    if base is None:
        raise DeclarationError("sandbox.no_base", kinds=", ".join(SCHEDULER_KINDS))
    if info != SCHEDULERS[base].info.derive(info.kind):
        changed = [f for f in info.__dataclass_fields__ if getattr(info, f) != getattr(
            SCHEDULERS[base].info.derive(info.kind), f)]
        raise DeclarationError("sandbox.declares_more", fields=", ".join(changed))
    names = getattr(cls, "names", None)
    return {"base": base, "kind": info.kind, "names": dict(names) if isinstance(names, dict) else {}}


def register(data) -> str:
    """The server's kind for a worker's declaration `data` (registered on first sight); DeclarationError for data
    that is not a declaration of a built-in kind derived, or when the server holds as many kinds as it may."""
    base, kind, names = _checked(data)
    digest = hashlib.sha256(json.dumps([base, kind, names], sort_keys=True).encode()).hexdigest()[:12]
    own = f"own_{digest}"
    with _lock:
        if own not in _registered:
            if len(_registered) >= SANDBOX_KINDS:
                raise DeclarationError("sandbox.kinds_full", most=SANDBOX_KINDS)
            built_in = SCHEDULERS[base]
            cls = type(f"Own_{digest}", (built_in,), {"info": built_in.info.derive(own, system=kind),
                                                        "names": names, "__init__": _refuse,
                                                        "__module__": __name__})
            register_class(cls, cls.__name__, DECLARED)  # found by its id, never listed
            _registered.add(own)
    return own


def _refuse(self, *args, **kwargs):
    raise DeclarationError("sandbox.declaration_only")


def _checked(data) -> tuple[str, str, dict[str, str]]:
    if not isinstance(data, dict) or set(data) != {"base", "kind", "names"}:
        raise DeclarationError("sandbox.bad_declaration")
    base, kind, names = data["base"], data["kind"], data["names"]
    if base not in SCHEDULER_KINDS or not isinstance(kind, str) or not KIND_ID.fullmatch(kind):
        raise DeclarationError("sandbox.bad_declaration")
    if not isinstance(names, dict):
        raise DeclarationError("sandbox.bad_declaration")
    cleaned = {lang: _clean(name) for lang, name in names.items() if lang in CATALOGUES and isinstance(name, str)}
    return base, kind, {lang: name for lang, name in cleaned.items() if name} or {"en": kind}


def _clean(name: str) -> str:
    """A name as the stage may show it: printable characters only, spaces collapsed, at most MAX_NAME."""
    shown = "".join(ch if unicodedata.category(ch)[0] not in "CZ" or ch == " " else " " for ch in name)
    return " ".join(shown.split())[:MAX_NAME]
