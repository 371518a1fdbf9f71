"""A starter's source written to a file as the learner gets it, for the tests that load it (`written`)."""

from pathlib import Path

from starters import Starter, source


def written(starter: Starter, folder: Path) -> str:
    """The starter's source as the learner gets it, in a file of its own: its `path:class`."""
    path = folder / f"{starter.id}.py"
    path.write_text(source(starter), encoding="utf-8")
    return f"{path}:{starter.class_name}"
