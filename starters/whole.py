"""The article's scheduler whole, as a starter a learner may change anywhere: the source of its own module
(scheduler/article/scheduler.py), with its class renamed and declared as the learner's kind, so that there is one copy
of it, the package's. The class subclasses the article's (`info` its declaration derived, as every kind of one's own
declares it); what its module no longer needs goes (the guided tour's links, which describe the article's own code,
and the imports only they and the original declaration used)."""

from __future__ import annotations

import ast
from pathlib import Path

from scheduler.article import scheduler as article_module

PATH = Path(article_module.__file__)
BASE = "Scheduler"  # the article's class, in its module and as the learner's source imports it
CLASS_NAME, KIND = "MyWhole", "my_whole"
HEADER = ("# The article's scheduler whole (scheduler/article/scheduler.py), yours to change anywhere. Your class\n"
          "# subclasses it only for its declaration (`info`); every method it runs is written below.\n")
DECLARATION = (f'    info: ClassVar[SchedulerInfo] = {BASE}.info.derive("{KIND}")'
               "  # your kind's id, in traces and links\n"
               '    names = {"en": "my whole scheduler", "zh": "我的完整调度器"}\n')


def whole_source(text: str) -> str:
    """The learner's version of the article's module `text`."""
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == BASE)
    info = next(n for n in cls.body if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "info")
    tour = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "TOUR")
    edits = {cls.lineno: f"class {CLASS_NAME}({BASE}):\n", info.lineno: DECLARATION}
    dropped = _lines_of(info) | _with_comments_above(lines, tour)
    kept = [edits.get(i, "" if i in dropped else line) for i, line in enumerate(lines, start=1)]
    return HEADER + _imports_as_used("".join(kept))


def _lines_of(node: ast.stmt) -> set[int]:
    return set(range(node.lineno, (node.end_lineno or node.lineno) + 1))


def _with_comments_above(lines: list[str], node: ast.stmt) -> set[int]:
    """The line numbers of `node` and of the comment lines right above it."""
    first = node.lineno
    while first > 1 and lines[first - 2].lstrip().startswith("#"):
        first -= 1
    return set(range(first, node.lineno)) | _lines_of(node)


def _imports_as_used(text: str) -> str:
    """`text` with the names its module-level `from` imports bring in but it no longer uses dropped, and the base
    class imported from the article's package."""
    tree = ast.parse(text)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    lines = text.splitlines(keepends=True)
    for node in reversed([n for n in tree.body if isinstance(n, ast.ImportFrom)]):
        names = [a for a in node.names if (a.asname or a.name) in used]
        if node.module == "scheduler.article":
            names = sorted([*names, ast.alias(BASE)], key=lambda a: (a.name.islower(), a.name))
        if names != node.names:
            new = [ast.unparse(ast.ImportFrom(node.module, names, 0)) + "\n"] if names else []
            lines[node.lineno - 1:node.end_lineno or node.lineno] = new
    return "".join(lines)
