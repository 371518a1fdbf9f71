"""The words of the interface in every language, under one set of message ids (no Streamlit).

Each language is one catalogue module (`i18n/en.py`, `i18n/zh.py`): a dict from message id to text, with
`str.format` placeholders (`{step}`) for the values. `text(lang, id, **values)` looks a message up and fills
it in; a message that counts something has `.one` and `.other` forms (`count(lang, id, n)`). Every id exists
in every language with the same placeholders (tests/test_i18n.py). To add a language, copy `en.py`, translate
every value, and add it to LANGUAGES.

Errors and reasons raised below the page (scheduler, engine, session) are `Message`s: English text (a `str`, so
logs, traces and the command line read it as it is) that keeps its id and values, so the page shows it in the
reader's language with `in_lang(lang, message)`. Their exceptions are `MessageError`s, whose `.message` is one.
"""

from __future__ import annotations

import string

from i18n import en, zh

DEFAULT = "en"
LANGUAGES = {"en": "English", "zh": "中文"}  # link value -> the name the language switch shows
CATALOGUES = {"en": en.MESSAGES, "zh": zh.MESSAGES}


def language(value) -> str:
    """`value` if it names a language this app speaks, else the default."""
    return value if value in CATALOGUES else DEFAULT


def text(lang: str, key: str, /, **values) -> str:
    """The message `key` in `lang`, its placeholders filled from `values` (a `Message`, or an error carrying one,
    in `lang` too). In Chinese a filled value is spaced as the catalogue spaces its own words: one space between a
    Chinese character and a Latin letter or digit, none between two Chinese characters, whichever the value starts
    or ends with (the article's scheduler is 文章的调度器, the vLLM twin vLLM 孪生调度器)."""
    values = {name: in_lang(lang, value) if isinstance(value, Message | MessageError) else value
              for name, value in values.items()}
    message = CATALOGUES[lang][key]
    if lang != "zh":
        return message.format(**values)
    pieces = []
    for literal, name, spec, conversion in string.Formatter().parse(message):
        pieces.append(literal)
        if name is not None:
            pieces.append(("{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
                           + "}").format(**values))
    return "".join(_spaced(pieces))


def _cjk(c: str) -> bool:
    return "\u4e00" <= c <= "\u9fff"


def _full_width_mark(c: str) -> bool:
    return "\u3000" <= c <= "\u303f" or "\uff00" <= c <= "\uffef"


def _spaced(pieces: list[str]) -> list[str]:
    """The pieces of a Chinese message, each seam between them spaced as `text` says, and none beside a full-width
    mark ("2（14 个 token）和 3"); a seam between an ASCII mark and anything, or two Latin words, kept as written. A
    literal of spaces alone between two values ("{loser} {how}") is that seam, so it goes with the value after it."""
    pieces = [p for p in pieces if p]
    for i in range(len(pieces) - 1):
        if not pieces[i].strip(" "):
            pieces[i], pieces[i + 1] = "", pieces[i] + pieces[i + 1]
    pieces = [p for p in pieces if p]
    for i in range(1, len(pieces)):
        left, right = pieces[i - 1].rstrip(" "), pieces[i].lstrip(" ")
        if not (left and right):
            continue
        if _full_width_mark(left[-1]) or _full_width_mark(right[0]):
            pieces[i - 1], pieces[i] = left, right
        elif _cjk(left[-1]) or _cjk(right[0]):
            latin = [c.isascii() and c.isalnum() for c in (left[-1], right[0])]
            if any(latin) or _cjk(left[-1]) and _cjk(right[0]):
                pieces[i - 1], pieces[i] = left, (" " if any(latin) else "") + right
    return pieces


ECHO_MOST = 60  # characters of a visitor's value a message repeats


def echoed(value) -> str:
    """A value a link (or a visitor) carried, as a message repeats it: in a Markdown code span, so nothing in it is
    read as Markdown (bold, a link, a bare address, an HTML tag, Streamlit's `:red[...]` or `:material/...:`); cut at
    ECHO_MOST characters, unprintable ones and backticks (which would end the span) replaced."""
    shown = str(value)
    shown = shown if len(shown) <= ECHO_MOST else shown[:ECHO_MOST] + "…"
    shown = "".join(c if c.isprintable() and c != "`" else "'" if c == "`" else " " for c in shown)
    return f"`{shown}`"


class Message(str):
    """The message `key` filled from `values`: its English text, which remembers how to say itself in another
    language (`in_lang`). Values may be Messages themselves (a reason inside a sentence)."""
    key: str
    values: dict[str, object]

    def __new__(cls, key: str, /, **values):
        message = super().__new__(cls, text(DEFAULT, key, **values))
        message.key, message.values = key, values
        return message

    def __getnewargs_ex__(self):  # copies and pickles rebuild it from its id, not from its English text
        return (self.key,), self.values


class MessageError(ValueError):
    """An error whose text is a `Message`: str() is English (logs, the command line), `.message` says it in any
    language. `MessageError(id, **values)`."""

    def __init__(self, key: str, /, **values):
        super().__init__(Message(key, **values))

    @property
    def message(self) -> Message:
        return self.args[0]

    @property
    def message_id(self) -> str:
        return self.message.key

    @property
    def values(self) -> dict:
        return self.message.values


def message_of(error: Exception) -> Message | str:
    """What `error` says: its Message, or the words of an error raised outside schedlab."""
    return error.message if isinstance(error, MessageError) else str(error)


def in_lang(lang: str, said) -> str:
    """`said` in `lang`: a Message, or an error carrying one, in that language; anything else (an error raised
    outside schedlab, a recorded text) as its own words."""
    if isinstance(said, MessageError):
        said = said.message
    if isinstance(said, Message):
        return text(lang, said.key, **said.values)
    return str(said)


def count(lang: str, key: str, n: int, **values) -> str:
    """A message about `n` things: its `.one` form for exactly one, else its `.other` form (`{n}` is `n`)."""
    return text(lang, f"{key}.{'one' if n == 1 else 'other'}", n=n, **values)


def messages(lang: str, prefix: str) -> dict[str, str]:
    """Every message whose id starts with `prefix`, keyed by the rest of its id (the stage player's strings)."""
    return {key[len(prefix):]: message for key, message in CATALOGUES[lang].items() if key.startswith(prefix)}


def join_and(lang: str, items) -> str:
    """"1", "1 and 2", "1, 2 and 3" (in Chinese "1、2 和 3")."""
    items = [str(i) for i in items]
    if len(items) == 1:
        return items[0]
    return text(lang, "list.and", head=text(lang, "list.sep").join(items[:-1]), last=items[-1])


def problems() -> list[str]:
    """What keeps the catalogues from matching: an id in one language only, or a message whose placeholders
    differ from the English one's (tests/test_i18n.py asserts there are none)."""
    english, found = CATALOGUES[DEFAULT], []
    for lang, catalogue in CATALOGUES.items():
        found += [f"{lang}: {key} is missing" for key in english if key not in catalogue]
        found += [f"{lang}: {key} is not in {DEFAULT}" for key in catalogue if key not in english]
        found += [f"{lang}: {key} has the placeholders {sorted(_fields(message))}, {DEFAULT} "
                  f"{sorted(_fields(english[key]))}" for key, message in catalogue.items()
                  if key in english and _fields(message) != _fields(english[key])]
    return found


def _fields(message: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(message) if name}
