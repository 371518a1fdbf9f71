"""A student's name in a class (no Streamlit): how it is shown, and the keys two names are compared by.

Shown (`shown_name`): in Unicode's composed form (NFC), letters of every script with their combining marks
(Devanagari's vowel signs and virama, Thai's tone marks, Arabic's harakat: a name's marks are part of it), digits,
spaces and `.-'’`; whitespace collapsed; invisible characters (zero-width spaces, joiners' look-alikes, variation
selectors) dropped; a letter written as a symbol (circled "Ⓐ") shown as that letter, never dropped;
every other character (Markdown's `*[]()`, a formula's `=`, controls) becomes a space, so a name is shown as it is,
never as markup; at most MAX_NAME characters, never cut inside a letter's marks.

Compared (`name_key`, `alike_keys`): two names that a reader cannot tell apart are one name, and a class refuses the
second. Only letters, marks and digits count (so "Alice Smith", "Alice\\u200bSmith" and "Alice-Smith" are one);
compatibility forms are folded (NFKC: full-width "Ａｌｉｃｅ" is "Alice"), a mark written twice in a row counts
once (an extra virama), small capitals are the letters they are drawn as; then each is read through Unicode's
confusable skeleton (TR39, from ICU's data through PyICU: Cyrillic "а", Cherokee "Ꭺ", Lisu "ꓮ", Armenian "օ", Latin
"ɑ", Turkish "ı" and "1" become the Latin letters they are drawn as; "m" and "rn" one skeleton), plus the ASCII
look-alikes the skeleton leaves (0 for O, "vv" for "w", "cl" for "d", Cyrillic "ц" for "u").

Case and look-alikes cannot share one key: capital "I" is drawn as "l" ("AIice" is "Alice"), yet "IVAN" is
"ivan", so one key would make "Lia" and "Ila" one name. A name has a few keys instead (`alike_keys`), and two
names are one when they share any: its key (`name_key`: case folded, then its skeleton: what votes and hand-ins
are filed under), its key read as drawn (the skeleton of the name as typed, case folded after: "AIice" as
"alice"), and, with a digit 1 in it, its key with 1 read as "i" ("K1m" as "kim").
"""

from __future__ import annotations

import functools
import re
import unicodedata

import icu

MAX_NAME = 40
NAME_PUNCTUATION = " .-'’"
JOINERS = "\u200c\u200d"  # zero-width (non-)joiner: part of how Persian, Indic and emoji names are written
# Default-ignorable characters that are not format characters (category Cf, dropped anyway): drawn as nothing.
IGNORABLE = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, *range(0x180B, 0x1810), *range(0xFE00, 0xFE10),
             *range(0xE0100, 0xE01F0)}
SMALL_CAPITAL = "LATIN LETTER SMALL CAPITAL "
# Drawn alike where the skeleton keeps them apart: two ASCII letters for one (read with case kept: "Cl" is not
# "D"), and Cyrillic "ц", a "u" with a tail.
DRAWN_ALIKE = (("vv", "w"), ("VV", "W"), ("cl", "d"), ("ц", "u"))
# Scripts one word of a name may mix (Japanese, Chinese with bopomofo, Korean), as UTS #39's highly restrictive
# level allows; Common and Inherited (digits, marks) belong to every script.
ONE_SCRIPT = {"Hira": "Hani", "Kana": "Hani", "Bopo": "Hani", "Hang": "Hani"}
ANY_SCRIPT = ("Zyyy", "Zinh")
DOT_ABOVE = re.compile("(?<=[ij])\u0307")  # "i̇" (case-folded "İ"): the dot of a dotted letter, drawn as one
_SPOOF = icu.SpoofChecker()  # its skeleton is thread safe (ICU: uspoof_getSkeleton)


def _invisible(c: str) -> bool:
    return (unicodedata.category(c) == "Cf" and c not in JOINERS) or ord(c) in IGNORABLE


def _kept(c: str) -> bool:
    return unicodedata.category(c)[0] in "LMN" or c in NAME_PUNCTUATION or c in JOINERS


def _as_letter(c: str) -> str:
    """A character a name keeps as it is; a symbol that is a letter in another form (circled "Ⓐ") as that letter;
    anything else a space."""
    if _kept(c):
        return c
    plain = unicodedata.normalize("NFKC", c)
    return plain if len(plain) == 1 and unicodedata.category(plain)[0] in "LN" else " "


def shown_name(raw) -> str | None:
    """The name as the class shows it (module docstring); None when nothing is left of it."""
    composed = unicodedata.normalize("NFC", str(raw or ""))
    kept = "".join(_as_letter(c) for c in composed if not _invisible(c))
    name = " ".join(kept.split())
    if len(name) > MAX_NAME:
        cut = MAX_NAME
        while cut > 0 and unicodedata.category(name[cut])[0] == "M":  # the letter whose marks would be cut goes
            cut -= 1
        name = name[:cut]
    return name.strip() or None


def _small_letter(small_capital: str) -> str | None:
    """The small letter of a small capital's name ("ᴀ": "a"), where Unicode has one."""
    try:
        return unicodedata.lookup(unicodedata.name(small_capital).replace(SMALL_CAPITAL, "LATIN SMALL LETTER "))
    except KeyError:
        return None


# Small capitals ("ᴀʟɪᴄᴇ") as the letters they are drawn as (the skeleton leaves most of them): those of IPA, the
# phonetic extensions and Latin Extended-D.
SMALL_CAPITALS = str.maketrans({c: small for c in map(chr, (*range(0x0250, 0x02B0), *range(0x1D00, 0x1D80),
                                                            *range(0xA720, 0xA800)))
                                if unicodedata.name(c, "").startswith(SMALL_CAPITAL) and (small := _small_letter(c))})


def _letters(name: str) -> str:
    """What of a name is compared: its letters, marks and digits in compatibility form, a mark written twice in a
    row once, small capitals as letters."""
    folded = unicodedata.normalize("NFKC", name)
    letters = "".join(c for c in folded if unicodedata.category(c)[0] in "LMN" and not _invisible(c))
    once = "".join(c for i, c in enumerate(letters) if not (i and c == letters[i - 1]
                                                            and unicodedata.category(c)[0] == "M"))
    return once.translate(SMALL_CAPITALS)


def _skeleton(text: str, drawn: bool) -> str:
    """TR39's confusable skeleton, small capitals read again (the skeleton maps some letters to them), case
    folded; `drawn`: the ASCII look-alikes the skeleton leaves read as the letter they imitate, case kept until then."""
    seen = _SPOOF.getSkeleton(0, text).translate(SMALL_CAPITALS)
    if drawn:
        for written, read in DRAWN_ALIKE:
            seen = seen.replace(written, read)
    return unicodedata.normalize("NFC", seen.casefold())


def name_key(name: str) -> str:
    """The key a name is filed under in a class: its case folded, then its skeleton (module docstring)."""
    folded = DOT_ABOVE.sub("", unicodedata.normalize("NFD", _letters(name).casefold()))
    return _skeleton(folded, drawn=False)


@functools.lru_cache(maxsize=4096)  # a claim compares the new name with every name of the class
def alike_keys(name: str) -> frozenset[str]:
    """Every key of a name: two names that share one are one name (module docstring)."""
    letters = _letters(name)
    return frozenset({name_key(name), _skeleton(letters, drawn=True),
                      *([name_key(letters.replace("1", "i"))] if "1" in letters else [])})


def _script(c: str) -> str:
    code = icu.Script.getScript(ord(c)).getShortName()
    return ONE_SCRIPT.get(code, code)


def odd_letters(name: str) -> list[str]:
    """The letters of a name written in another script than the rest of their word ("Аlice": the Cyrillic А), so
    that a roster can show them: two names that differ by them never look the same there."""
    odd = []
    for word in name.split():
        scripts = [script for c in word if (script := _script(c)) not in ANY_SCRIPT]
        most = max(sorted(set(scripts)), key=scripts.count, default=None)
        odd += [c for c in word if _script(c) not in (most, *ANY_SCRIPT)]
    return odd
