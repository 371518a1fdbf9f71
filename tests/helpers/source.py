"""The project's own Python sources, read as syntax trees: for the tests that check what a module may import or
name (tests/test_layout.py, tests/test_scheduler_contract.py)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def source_files(*folders: str) -> Iterator[tuple[str, ast.Module]]:
    """(path relative to the root, its syntax tree) of every .py file under `folders`, or, with none, of the whole
    tree: the top-level files and every folder not hidden (not the venvs, vLLM's included)."""
    tops = [ROOT / f for f in folders] if folders else [t for t in sorted(ROOT.iterdir()) if not t.name.startswith(".")]
    for top in tops:
        for path in [top] if top.suffix == ".py" else sorted(top.rglob("*.py")) if top.is_dir() else []:
            relative = path.relative_to(ROOT).as_posix()
            if not any(part.startswith(".") for part in relative.split("/")):
                yield relative, ast.parse(path.read_text())


def imported_modules(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, module) of every absolute import in `tree`, at any depth (a function's deferred import counts too)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.lineno, node.module
