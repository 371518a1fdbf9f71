"""Who is who in a class (no Streamlit): each browser carries a token (a cookie the page sets,
ui/class_identity.py); a student names themselves once per class (`claim`), and the name is bound to that token: no
other browser can vote or hand in under it, and names a reader cannot tell apart (session/names.py: "alice smith",
"AIice Smith", Cyrillic "Аlice Smith") are one name, refused to the second browser. A lecturer may instead
give the class a roster: each name gets a personal code (`set_roster`) that binds it to the browser that opens it,
and no other name is taken. A name taken before the roster was given is the roster's: its personal link wins, and
the browser that had typed it loses it. The lecturer may free a name from its browser (`release`: a roster name gets
a new personal code) or remove it from the class (`remove`). A browser that loses its name is told why (`dropped`),
and what it did under the name (votes, hand-ins) leaves with it: it was not the student the name is now bound to.

Each change is one atomic change of the store (session/class_store.py `atomically`): the same browser claiming
the same name from several tabs and processes at once, or a claim whose reply was late and sent again, ends with
that one name bound to that browser.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable

from engine.run.limits import BOUNDS
from i18n import Message
from session.class_error import ClassError, class_open
from session.class_keys import CLASSES, FOLLOWING, ClassKeys
from session.class_store import ClassStore, Tx
from session.names import alike_keys, name_key, shown_name

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I: a code is read off a projector
PERSONAL_CODE_LENGTH = 8  # a roster name's code: a student types it, a script cannot guess it under the limits
MAX_NAMES = BOUNDS["class_names"][1]  # students named per class, at most
DEFAULT_NAMES = 120  # names a class takes when its lecturer set no number and gave no roster
LOST_TO_ROSTER, RELEASED, REMOVED = "class.lost_to_roster", "class.name_released", "class.name_removed"  # `dropped`


def drawn_code(length: int) -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(length))


def _most(tx: Tx, k: ClassKeys) -> int:
    """The most names the class takes: the lecturer's number, else its roster's size, else DEFAULT_NAMES."""
    filed = tx.get(k.most_names)
    return int(filed) if filed else tx.hlen(k.codes) or DEFAULT_NAMES


def _new_code(codes: dict[str, str]) -> str:
    """A personal code no name in `codes` has."""
    while (code := drawn_code(PERSONAL_CODE_LENGTH)) in codes:
        pass
    return code


def _filed(filed: str) -> tuple[str, str, bool]:
    """(name as shown, the token it is bound to: "" for a roster name not opened yet, whether that browser opened
    the name's personal code)."""
    name, token, *by_code = json.loads(filed)
    return name, token, bool(by_code and by_code[0])


def _alike(names: dict[str, str], name: str) -> str | None:
    """The key of a name in `names` (the class's, filed by key) that reads as `name`, if any."""
    keys = alike_keys(name)
    return next((key for key, filed in names.items() if keys & alike_keys(_filed(filed)[0])), None)


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
            names = tx.hgetall(k.names)
            if (taken := _alike(names, name)) is not None and _filed(names[taken])[1] != token:
                raise ClassError("class.name_taken", name=_filed(names[taken])[0])
            if taken is None and len(names) >= (most := _most(tx, k)):
                raise ClassError("class.too_many_names", most=most)
            filed_as = taken or key  # taken: by this browser, this claim sent again after it took effect
            tx.hset(k.names, filed_as, json.dumps([name, token]))
            tx.hset(k.by_token, token, filed_as)
            tx.hdel(k.dropped, token)
            return name
        claimed = self.store.atomically((CLASSES, k.names, k.by_token, k.codes, k.most_names), change)
        self._named()
        return claimed

    def set_roster(self, raw_names: list[str]) -> dict[str, str]:
        """The lecturer's list of the class's students: each new name gets a personal code (names a reader cannot
        tell apart are one); from then on a student is named only by opening their code. A name a browser took
        before is the roster's, as the roster writes it: it stays with that browser until its personal link is
        opened in another one (`claim_code`). {name: code}, every roster name's."""
        wanted: dict[str, str] = {}  # name key -> name, the first of names that read alike
        seen: set[str] = set()
        for raw in raw_names[:MAX_NAMES]:
            if (name := shown_name(raw)) is not None and not (keys := alike_keys(name)) & seen:
                wanted[name_key(name)], seen = name, seen | keys
        k = self.keys

        def change(tx: Tx):
            class_open(tx, k)
            codes, names = tx.hgetall(k.codes), tx.hgetall(k.names)
            given = set(codes.values())
            for key, name in wanted.items():
                key = _alike(names, name) or key  # a name taken before, as its browser typed it
                if key in given:
                    continue
                given.add(key)
                codes[code := _new_code(codes)] = key
                tx.hset(k.codes, code, key)
                holder = _filed(names[key])[1] if key in names else ""
                tx.hset(k.names, key, json.dumps([name, holder]))
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

    def release(self, key: str) -> str | None:
        """The lecturer frees a name from its browser (told so): in a class with a roster it gets a new personal
        code (a roster name's old link opens nothing; a name taken before the roster joins it, since nobody can type
        a name there; returned), in a class without one it leaves the class (whoever types it next takes it)."""
        k = self.keys

        def change(tx: Tx) -> str | None:
            class_open(tx, k)
            codes = tx.hgetall(k.codes)
            if (filed := tx.hget(k.names, key)) is None:
                return None
            name, holder, _ = _filed(filed)
            if holder:
                self._unbind(tx, key, name, holder, RELEASED)
            old = [code for code, coded in codes.items() if coded == key]
            if not codes:
                tx.hdel(k.names, key)
                return None
            for code in old:
                tx.hdel(k.codes, code)
            tx.hset(k.codes, code := _new_code(codes), key)
            tx.hset(k.names, key, json.dumps([name, ""]))
            return code
        code = self.store.atomically((CLASSES, k.codes, k.names, k.by_token, k.submissions, k.polls), change)
        self._tell()
        return code

    def remove(self, key: str) -> bool:
        """The lecturer removes a name from the class and its roster (its browser told so); whether it was there."""
        k = self.keys

        def change(tx: Tx) -> bool:
            class_open(tx, k)
            if (filed := tx.hget(k.names, key)) is None:
                return False
            name, holder, _ = _filed(filed)
            if holder:
                self._unbind(tx, key, name, holder, REMOVED)
            for code, coded in tx.hgetall(k.codes).items():
                if coded == key:
                    tx.hdel(k.codes, code)
            tx.hdel(k.names, key)
            return True
        removed = self.store.atomically((CLASSES, k.codes, k.names, k.by_token, k.submissions, k.polls), change)
        self._tell()
        return removed

    def _tell(self):
        """Wake the tabs following: a browser that lost its name says so (one that broke away, at its next run)."""
        self.store.publish(self.keys.code, FOLLOWING)

    def _unbind(self, tx: Tx, key: str, name: str, holder: str, why: str):
        """The browser `holder` loses the name `key` (told `why`), and what it did under it leaves with it: its
        answers to every question and its hand-ins (session/class_keys.py's layouts)."""
        k = self.keys
        tx.hdel(k.by_token, holder)
        tx.hset(k.dropped, holder, json.dumps([name, why]))
        for poll in tx.hgetall(k.polls):
            tx.watch(k.votes(poll))
            if tx.hget(k.votes(poll), key) is not None:
                tx.hdel(k.votes(poll), key)
        for slot in tx.hgetall(k.submissions):
            if json.loads(slot)[1] == key:
                tx.hdel(k.submissions, slot)

    def dropped(self, token: str | None) -> Message | None:
        """Why this browser has no name any more (a roster's personal link, the lecturer), until it takes one."""
        filed = self.store.hget(self.keys.dropped, token) if token else None
        if filed is None:
            return None
        name, why = json.loads(filed)
        return Message(why, name=name)

    def roster_codes(self) -> dict[str, str]:
        names = self.all()
        return {names[key]: code for code, key in self.store.hgetall(self.keys.codes).items() if key in names}

    def claim_code(self, token: str, code: str) -> str | None:
        """A student opens their personal code: their roster name is bound to this browser (the first browser to
        open it keeps it; a browser that had typed the name before the roster loses it). The name, or None for a
        code that is no roster name's."""
        code, k = (code or "").strip().upper(), self.keys

        def change(tx: Tx) -> tuple[str, bool] | None:
            class_open(tx, k)
            if (key := tx.hget(k.codes, code)) is None:
                return None
            name, holder, by_code = _filed(tx.hget(k.names, key))
            if holder and holder != token and by_code:
                raise ClassError("class.name_taken", name=name)
            if (mine := tx.hget(k.by_token, token)) not in (None, key):
                raise ClassError("class.named_already", name=_filed(tx.hget(k.names, mine))[0])
            if displaced := holder not in ("", token):  # typed before the roster was given: the personal link wins
                self._unbind(tx, key, name, holder, LOST_TO_ROSTER)
            tx.hset(k.names, key, json.dumps([name, token, 1]))
            tx.hset(k.by_token, token, key)
            tx.hdel(k.dropped, token)
            return name, displaced
        opened = self.store.atomically((CLASSES, k.codes, k.names, k.by_token, k.submissions, k.polls), change)
        if opened is None:
            return None
        self._named()
        if opened[1]:
            self._tell()
        return opened[0]

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
