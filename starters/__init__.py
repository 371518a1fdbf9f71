"""The starters a learner begins a scheduler of their own from (issue 44): each a Python file with one scheduler
class, runnable as it is (`python -m engine run ... --scheduler FILE.py:CLASS`, the workbench's sandbox), its task in
both languages under `starter.<id>.title` / `.task`. The hook-sized exercises override one decision of the article's
scheduler (scheduler/article/scheduler.py, its hooks); `whole` is that scheduler entire, its source read from the
package itself (`source`); `skeleton` a whole scheduler from the contract. A starter's reference solution, where it has
one, is for the tests and the lecturer (starters/solutions/, docs/schedulers.md)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from starters import whole

HERE = Path(__file__).resolve().parent
SOLUTIONS = HERE / "solutions"


@dataclass(frozen=True)
class Starter:
    id: str
    path: Path  # the file its source is read from
    class_name: str  # the scheduler class in that source
    title: str  # message ids: what it is, and the task
    task: str
    solution: tuple[Path, str] | None = None  # a reference solution: its file and class
    build: Callable[[str], str] | None = None  # its source from the file's text (None: the text as it is)


def _starter(id: str, file: str | Path, class_name: str, solution: tuple[Path, str] | None = None,
             build: Callable[[str], str] | None = None) -> Starter:
    return Starter(id, HERE / file, class_name, f"starter.{id}.title", f"starter.{id}.task", solution, build)


STARTERS: tuple[Starter, ...] = (
    _starter("victim", "victim.py", "MyVictim", (HERE / "smart_victim.py", "SmartVictim")),
    _starter("queue_order", "queue_order.py", "MyQueueOrder", (SOLUTIONS / "queue_order.py", "ShortestFirst")),
    _starter("batch_size", "batch_size.py", "MyBatchSize", (SOLUTIONS / "batch_size.py", "BackOff")),
    _starter("preallocate", "preallocate.py", "MyPreallocation", (SOLUTIONS / "preallocate.py", "BlockAhead")),
    _starter("chunk_size", "chunk_size.py", "MyChunkSize", (SOLUTIONS / "chunk_size.py", "QuarterChunks")),
    _starter("whole", whole.PATH, whole.CLASS_NAME, build=whole.whole_source),
    _starter("skeleton", "skeleton.py", "MyScheduler"),
    _starter("double_free", "double_free.py", "DoubleFree"),
)
BY_ID = {starter.id: starter for starter in STARTERS}


def source(starter: Starter) -> str:
    """The starter's source, as the learner first sees it."""
    text = starter.path.read_text(encoding="utf-8")
    return starter.build(text) if starter.build else text
