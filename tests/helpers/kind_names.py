"""Where code outside a scheduler's own package names a scheduler kind: the guard of tests/test_kind_names.py.

A kind is named by its id (`SchedulerInfo.kind`) or by its package's name (scheduler/vllm_v1/ is "vllm_v1"), and
is known to the rest of the app only through its declaration. This reads code as code: in Python the string
literals (docstrings left out: prose may speak of vLLM) and the names; in the player's JavaScript the same, its
comments stripped. A message id built from a kind elsewhere (`f"sidebar.scheduler.{kind}"`) hides the name from
such a reading; the catalogues' rule catches it instead: an id that names a kind lives under that kind's prefix
(`catalogue_namings`), which only the kind's declaration builds."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Naming:
    path: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


def kind_words(kinds: dict[str, str | None]) -> re.Pattern:
    """What names a kind (`kinds`: kind id -> its package's name, None for a kind that is a module of scheduler/):
    a string that is its id; and, in any case, as a word or a part of one between underscores, dots, slashes or
    dashes (`vllm_view`, `sglang.no_token`), its package's name and an id its package's name starts with. (An id
    that is an everyday word, the article's, counts only whole.)"""
    parts = {w for kind, package in kinds.items() if package for w in (package, kind) if package.startswith(w)}
    whole = "|".join(map(re.escape, sorted(kinds, key=len, reverse=True)))
    part = "|".join(map(re.escape, sorted(parts, key=len, reverse=True)))
    return re.compile(rf"^[a-z]*(['\"`])({whole})\1$" + (rf"|(?i:(?<![a-z0-9])({part})(?![a-z0-9]))" if part else ""))


def _names(words: re.Pattern, text: str) -> bool:
    """Whether `text` names a kind, a camelCase name read as its words (`renderVllmView`: render_vllm_view)."""
    return bool(words.search(text) or words.search(_CAMEL_HUMP.sub("_", text)))


_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                lines.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return lines


def python_namings(path: Path, source: str, words: re.Pattern) -> list[Naming]:
    """The kinds a Python module names in its code: string literals but docstrings, names, built ids."""
    docstrings = _docstring_lines(ast.parse(source))
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.STRING or token.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
            if token.start[0] in docstrings:
                continue
        elif token.type != tokenize.NAME:
            continue
        if _names(words, token.string):
            found.append(Naming(str(path), token.start[0], token.string))
    return found


_JS_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# A quoted string on one line, or a word (an identifier, or a dotted or dashed id inside any string or template)
_JS_CODE_TOKEN = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|[A-Za-z_$][\w$.\-]*")


def _strip_js_comments(source: str) -> str:
    """The source with its comments blanked (newlines kept, so lines still count), strings left whole."""
    out, i = [], 0
    strings = re.compile(r"'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|`(?:\\.|[^`\\])*`")
    while i < len(source):
        s, c = strings.match(source, i), _JS_COMMENT.match(source, i)
        if s:
            out.append(s.group())
            i = s.end()
        elif c:
            out.append(re.sub(r"[^\n]", " ", c.group()))
            i = c.end()
        else:
            out.append(source[i])
            i += 1
    return "".join(out)


def js_namings(path: Path, source: str, words: re.Pattern) -> list[Naming]:
    """The kinds a player script names in its code: its strings and identifiers."""
    code = _strip_js_comments(source)
    return [Naming(str(path), code.count("\n", 0, match.start()) + 1, match.group())
            for match in _JS_CODE_TOKEN.finditer(code) if _names(words, match.group())]


def catalogue_namings(ids, words: re.Pattern, kinds) -> list[str]:
    """The message ids that name a kind (a segment between dots names it) but do not live under its prefix
    (`<kind>.`): an id such as `sidebar.scheduler.sglang` is one the app can only reach by building it from a kind's
    name."""
    return [key for key in ids
            if any(segment in kinds or _names(words, segment) for segment in key.split("."))
            and key.split(".")[0] not in kinds]
