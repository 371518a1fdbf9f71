"""Who is who in a class (no Streamlit): each browser carries a token (a cookie the page sets,
ui/class_identity.py); a student names themselves once per class (`claim`), and the name is bound to that token: no
other browser can vote or hand in under it, and names a reader cannot tell apart (session/names.py: "alice smith",
"Alice\\u200bSmith", Cyrillic "Аlice Smith") are one name, refused to the second browser. A lecturer may instead
give the class a roster: each name gets a personal code (`set_roster`) that binds it to the browser that opens it,
and no other name is taken.

Each change is one atomic change of the store (session/class_store.py `atomically`): the same browser claiming
the same name from several tabs and processes at once, or a claim whose reply was late and sent again, ends with
that one name bound to that browser.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable

from engine.run.limits import BOUNDS
from session.class_error import ClassError, class_open
from session.class_keys import CLASSES, ClassKeys
from session.class_store import ClassStore, Tx
from session.names import name_key, shown_name

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I: a code is read off a projector
PERSONAL_CODE_LENGTH = 8  # a roster name's code: a student types it, a script cannot guess it under the limits
MAX_NAMES = BOUNDS["class_names"][1]  # students named per class, at most
DEFAULT_NAMES = 120  # names a class takes when its lecturer set no number and gave no roster


def drawn_code(length: int) -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))


def _most(tx: Tx, k: ClassKeys) -> int:
    """The most names the class takes: the lecturer's number, else its roster's size, else DEFAULT_NAMES."""
    filed = tx.get(k.most_names)
    return int(filed) if filed else tx.hlen(k.codes) or DEFAULT_NAMES


def _filed(filed: str) -> tuple[str, str]:
    """(name as shown, the token it is bound to: "" for a roster name not opened yet)."""
    name, token = json.loads(filed)
    return name, token


class Names:
    """A class's names (session/class_keys.py: names, by_token, codes); `named` is called once a name is bound
    (the lecturer's roster counts it)."""

    def __init__(self, store: ClassStore, keys: ClassKeys, named: Callable[[], None]):
        self.store, self.keys, self._named = store, keys, named

    def claim(self, token: str, raw_name) -> str:
        """Bind a name to this browser (its token) for the class; the name as shown. ClassError: no usable
        name, one that reads as a name another browser holds, a second name for this browser, a roster class
        (names come with personal codes), or a class with as many names as its lecturer expects (`most`)."""
        name = shown_name(raw_name)
        if name is None:
            raise ClassError("class.bad_name")
        key, k = name_key(name), self.keys

        def change(tx: Tx) -> str:
            class_open(tx, k)
            if (mine := tx.hget(k.by_token, token)) is not None:
                if mine == key:  # this browser's name already (another tab, or this claim sent again)
                    return _filed(tx.hget(k.names, key))[0]
                raise ClassError("class.named_already", name=_filed(tx.hget(k.names, mine))[0])
            if tx.hlen(k.codes):
                raise ClassError("class.roster_only")
            if (taken := tx.hget(k.names, key)) is not None:
                if _filed(taken)[1] != token:
                    raise ClassError("class.name_taken", name=_filed(taken)[0])
            elif tx.hlen(k.names) >= (most := _most(tx, k)):
                raise ClassError("class.too_many_names", most=most)
            tx.hset(k.names, key, json.dumps([name, token]))
            tx.hset(k.by_token, token, key)
            return name
        claimed = self.store.atomically((CLASSES, k.names, k.by_token, k.codes, k.most_names), change)
        self._named()
        return claimed

    def set_roster(self, raw_names: list[str]) -> dict[str, str]:
        """The lecturer's list of the class's students: each new name gets a personal code (names a reader cannot
        tell apart are one); from then on a student is named only by opening their code. {name: code}, every
        roster name's."""
        wanted = {}
        for raw in raw_names[:MAX_NAMES]:
            if (name := shown_name(raw)) is not None:
                wanted.setdefault(name_key(name), name)
        k = self.keys

        def change(tx: Tx):
            class_open(tx, k)
            codes = tx.hgetall(k.codes)
            given = set(codes.values())
            for key, name in wanted.items():
                if key in given:
                    continue
                while (code := drawn_code(PERSONAL_CODE_LENGTH)) in codes:
                    pass
                codes[code] = key
                tx.hset(k.codes, code, key)
                if tx.hget(k.names, key) is None:  # a name claimed before the roster keeps its browser
                    tx.hset(k.names, key, json.dumps([name, ""]))
        self.store.atomically((CLASSES, k.codes, k.names), change)
        return self.roster_codes()

    def most(self) -> int:
        """The most names the class takes (`_most`)."""
        return self.store.atomically((self.keys.most_names, self.keys.codes), lambda tx: _most(tx, self.keys))

    def set_most(self, most: int):
        """The lecturer's number of names the class takes (within BOUNDS["class_names"]; names already taken
        stay)."""
        low, high = BOUNDS["class_names"]
        k = self.keys

        def change(tx: Tx):
            class_open(tx, k)
            tx.set(k.most_names, str(min(high, max(low, int(most)))))
        self.store.atomically((CLASSES, k.most_names), change)

    def roster_codes(self) -> dict[str, str]:
        names = self.all()
        return {names[key]: code for code, key in self.store.hgetall(self.keys.codes).items() if key in names}

    def claim_code(self, token: str, code: str) -> str | None:
        """A student opens their personal code: their roster name is bound to this browser (the first browser to
        open it keeps it). The name, or None for a code that is no roster name's."""
        code, k = (code or "").strip().upper(), self.keys

        def change(tx: Tx) -> str | None:
            class_open(tx, k)
            if (key := tx.hget(k.codes, code)) is None:
                return None
            name, holder = _filed(tx.hget(k.names, key))
            if holder and holder != token:
                raise ClassError("class.name_taken", name=name)
            if (mine := tx.hget(k.by_token, token)) not in (None, key):
                raise ClassError("class.named_already", name=_filed(tx.hget(k.names, mine))[0])
            tx.hset(k.names, key, json.dumps([name, token]))
            tx.hset(k.by_token, token, key)
            return name
        name = self.store.atomically((CLASSES, k.codes, k.names, k.by_token), change)
        if name is not None:
            self._named()
        return name

    def key_of(self, token: str | None) -> str | None:
        """The key of this browser's name in the class, if it has one."""
        return self.store.hget(self.keys.by_token, token) if token else None

    def name(self, key: str) -> str | None:
        """The name as shown of this key."""
        filed = self.store.hget(self.keys.names, key)
        return None if filed is None else _filed(filed)[0]

    def name_of(self, token: str | None) -> str | None:
        """The name this browser goes by in the class, if any."""
        key = self.key_of(token)
        return None if key is None else self.name(key)

    def all(self) -> dict[str, str]:
        """Every student's name, by key (named, or on the roster)."""
        return {key: _filed(filed)[0] for key, filed in self.store.hgetall(self.keys.names).items()}
