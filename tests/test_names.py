"""A student's name (session/names.py): shown in every script with its marks, never as markup; compared so that
names a reader cannot tell apart are one."""

import pytest

from session.names import MAX_NAME, name_key, shown_name


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
