"""A student's name (session/names.py): shown in every script with its marks, never as markup; compared so that
names a reader cannot tell apart are one."""

import json
import unicodedata
from pathlib import Path

import pytest

from session.classroom import ClassError, Registry
from session.names import MAX_NAME, name_key, odd_letters, shown_name


@pytest.mark.parametrize("raw, shown", [
    ("  Ada   Lovelace ", "Ada Lovelace"), ("李雷", "李雷"), ("O'Brien-Smith", "O'Brien-Smith"),
    ("प्रिया शर्मा", "प्रिया शर्मा"), ("สมศักดิ์ ใจดี", "สมศักดิ์ ใจดี"), ("محمد عَلي", "محمد عَلي"),  # marks kept
    ("E\u0301mile", "Émile"),  # decomposed: shown composed
    ("**bold** [x](http://e)", "bold x http e"), ("=cmd|' /C calc'!A0", "cmd ' C calc' A0"),
    ("Alice\u200bSmith", "AliceSmith"), ("a\x00b\nc", "a b c"), ("", None), ("  \t ", None), (None, None),
    ("x" * 100, "x" * MAX_NAME),
])
def test_a_name_is_shown_composed_with_its_marks_and_never_as_markup(raw, shown):
    assert shown_name(raw) == shown


def test_a_long_name_is_never_cut_inside_a_letters_marks():
    name = shown_name("a" * (MAX_NAME - 1) + "ि" * 1 + "्" + "b")  # the 40th character is a mark of the 39th letter
    assert len(name) <= MAX_NAME and name.endswith("a")


@pytest.mark.parametrize("look_alike", ["alice smith", "ALICE SMITH", "Alice\u200bSmith", "Alice-Smith",
                                        "\u0410lice Smith", "Ａｌｉｃｅ Ｓｍｉｔｈ", "A1ice Smith", "Alic\u0435 Smith",
                                        "Alice\u00adSmith", "Alice\ufe0f Smith"])
def test_names_a_reader_cannot_tell_apart_have_one_key(look_alike):
    assert name_key(shown_name(look_alike)) == name_key(shown_name("Alice Smith"))


def test_names_that_differ_keep_their_own_keys():
    keys = {name_key(shown_name(n)) for n in ("Alice Smith", "Alice Smyth", "Émile", "Emile", "प्रिया", "प्रय",
                                              "王小明", "王小名")}
    assert len(keys) == 8  # an accent, a vowel sign, a character: another name


LOOK_ALIKES = json.loads((Path(__file__).parent / "data" / "look_alike_names.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("form, of, how", LOOK_ALIKES["look_alikes"], ids=[f"{i}-{how}" for i, (_, _, how) in
                                                                             enumerate(LOOK_ALIKES["look_alikes"])])
def test_every_look_alike_of_a_name_in_the_class_is_refused_as_that_name(form, of, how):
    room = Registry().start()
    for i, name in enumerate(LOOK_ALIKES["names"]):
        room.names.claim(f"browser-{i}", name)
    with pytest.raises(ClassError) as refused:
        room.names.claim("mallory", form)
    assert refused.value.message_id == "class.name_taken" and refused.value.message.values["name"] == of


def test_distinct_real_names_of_every_script_are_all_accepted_in_one_class():
    room = Registry().start()
    for i, name in enumerate(LOOK_ALIKES["distinct"]):
        assert room.names.claim(f"browser-{i}", name) == unicodedata.normalize("NFC", name)
    assert len(room.names.all()) == len(LOOK_ALIKES["distinct"])


def test_a_letter_written_as_a_symbol_is_shown_as_that_letter_not_dropped():
    assert shown_name("\u24b6lice Smith") == "Alice Smith"  # circled A: before, "lice Smith"
    assert shown_name("Alice\u2122") == "Alice"  # ™ is two letters: a symbol, not a name's


@pytest.mark.parametrize("name, odd", [("\u0410lice Smith", ["\u0410"]), ("Alice Smith", []),
                                       ("\u13aalice", ["\u13aa"]), ("\u0418\u0432\u043be\u0432", ["e"]),
                                       ("田中さくら", []), ("王小明 Li", []), ("प्रिया शर्मा", []),
                                       ("Nguyễn Văn An", [])])
def test_the_letters_of_another_script_than_their_word_are_the_ones_a_roster_spells_out(name, odd):
    assert odd_letters(name) == odd
