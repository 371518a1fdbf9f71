"""A student's name in a class (no Streamlit): how it is shown, and the key two names are compared by.

Shown (`shown_name`): in Unicode's composed form (NFC), letters of every script with their combining marks
(Devanagari's vowel signs and virama, Thai's tone marks, Arabic's harakat: a name's marks are part of it), digits,
spaces and `.-'’`; whitespace collapsed; invisible characters (zero-width spaces, joiners' look-alikes, variation
selectors) dropped; every other character (Markdown's `*[]()`, a formula's `=`, controls) becomes a space, so a
name is shown as it is, never as markup; at most MAX_NAME characters, never cut inside a letter's marks.

Compared (`name_key`): two names that a reader cannot tell apart get the same key, and a class refuses the second:
compatibility forms folded (NFKC: full-width "Ａｌｉｃｅ" is "Alice"), case folded, everything but letters, marks and
digits dropped (so "Alice Smith", "alice smith", "Alice\\u200bSmith" and "Alice-Smith" are one), and the Cyrillic
and Greek letters that look like Latin ones mapped to them (Cyrillic "Аlice" is "Alice"; a table of those scripts'
look-alikes from Unicode's confusables, not the whole list), as are 0 and 1 to o and l.
"""

from __future__ import annotations

import unicodedata

MAX_NAME = 40
NAME_PUNCTUATION = " .-'’"
JOINERS = "\u200c\u200d"  # zero-width (non-)joiner: part of how Persian, Indic and emoji names are written
# Default-ignorable characters that are not format characters (category Cf, dropped anyway): drawn as nothing.
IGNORABLE = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, *range(0x180B, 0x1810), *range(0xFE00, 0xFE10),
             *range(0xE0100, 0xE01F0)}
# After case folding: letters of Cyrillic and Greek drawn like a Latin letter (most of them as capitals: their
# lower case is what folding leaves), and the digits drawn like letters.
LOOK_ALIKES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "ë", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "ï", "ј": "j", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l",
    "α": "a", "β": "b", "ε": "e", "η": "h", "ι": "i", "κ": "k", "μ": "m", "ν": "n", "ο": "o", "ρ": "p", "τ": "t",
    "υ": "y", "χ": "x", "ζ": "z", "0": "o", "1": "l",
})


def _invisible(c: str) -> bool:
    return (unicodedata.category(c) == "Cf" and c not in JOINERS) or ord(c) in IGNORABLE


def _kept(c: str) -> bool:
    return unicodedata.category(c)[0] in "LMN" or c in NAME_PUNCTUATION or c in JOINERS


def shown_name(raw) -> str | None:
    """The name as the class shows it (module docstring); None when nothing is left of it."""
    composed = unicodedata.normalize("NFC", str(raw or ""))
    kept = "".join(c if _kept(c) else " " for c in composed if not _invisible(c))
    name = " ".join(kept.split())
    if len(name) > MAX_NAME:
        cut = MAX_NAME
        while cut > 0 and unicodedata.category(name[cut])[0] == "M":  # the letter whose marks would be cut goes
            cut -= 1
        name = name[:cut]
    return name.strip() or None


def name_key(name: str) -> str:
    """What two names are compared by: equal for names a reader cannot tell apart (module docstring)."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    letters = "".join(c for c in folded if unicodedata.category(c)[0] in "LMN" and not _invisible(c))
    return unicodedata.normalize("NFC", letters.translate(LOOK_ALIKES))
