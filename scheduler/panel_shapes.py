"""The panel shapes every player draws for any kind, so a kind ships a panel of its own by declaring it
(`PanelKind(id, shape=Card)`, scheduler/contract.py) and returning its data from `panels()`, with no renderer of its
own in player/:

- `Card` (shape "card"): a title, lines of facts (each a message id and the numbers it is filled with) and meters
  (a labelled bar, `used` of `limit`, with marks at given points): V0's phase and SchedulingBudget;
- `PoolMarks` (shape "pool_marks"): lines a kind draws on one of its pools, at a number of units, each with its
  label (V0's watermark on the GPU pool).

Every number is the one the scheduler used at the step, recorded here as it was; the words are message ids under the
kind's own prefix, said in the reader's language by viz/panels.py and drawn by player/panel_shapes.js (a card) and
player/pool.js (pool marks)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

Value = int | str


@dataclass(frozen=True)
class Said:
    """A message id (under the kind's prefix in the catalogues) and the values it is filled with."""
    key: str
    values: Mapping[str, Value] = field(default_factory=dict)

    def to_data(self) -> list:
        return [self.key, dict(self.values)]

    @classmethod
    def from_data(cls, data) -> Said:
        key, values = data
        return cls(str(key), dict(values))


@dataclass(frozen=True)
class Mark:
    """A line at `at` units of a meter or a pool, labelled by `said`."""
    at: int
    said: Said

    def to_data(self) -> list:
        return [self.at, *self.said.to_data()]

    @classmethod
    def from_data(cls, data) -> Mark:
        at, *said = data
        return cls(int(at), Said.from_data(said))


def _marks(data) -> tuple[Mark, ...]:
    return tuple(Mark.from_data(mark) for mark in data)


@dataclass(frozen=True)
class Meter:
    """A labelled bar: `used` of `limit` (the label says both, in the kind's terms), with its marks."""
    said: Said
    used: int
    limit: int
    marks: tuple[Mark, ...] = ()

    def to_data(self) -> list:
        return [*self.said.to_data(), self.used, self.limit, [mark.to_data() for mark in self.marks]]

    @classmethod
    def from_data(cls, data) -> Meter:
        key, values, used, limit, marks = data
        return cls(Said.from_data([key, values]), int(used), int(limit), _marks(marks))


@dataclass(frozen=True)
class Card:
    """A panel of facts and meters: its `title`, its `lines` top to bottom, its `meters`."""
    SHAPE: ClassVar[str] = "card"
    title: Said
    lines: tuple[Said, ...] = ()
    meters: tuple[Meter, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title.to_data(), "lines": [line.to_data() for line in self.lines],
                "meters": [meter.to_data() for meter in self.meters]}

    @classmethod
    def from_dict(cls, data: dict) -> Card:
        return cls(Said.from_data(data["title"]), tuple(Said.from_data(line) for line in data["lines"]),
                   tuple(Meter.from_data(meter) for meter in data["meters"]))

    def words(self) -> Iterator[Said]:
        """Everything it says (a trace's are checked against the catalogues before they are drawn)."""
        yield self.title
        yield from self.lines
        for meter in self.meters:
            yield meter.said
            yield from (mark.said for mark in meter.marks)


@dataclass(frozen=True)
class PoolMarks:
    """Lines on the pool `pool` (its name: `contract.GPU_POOL` or a declared side pool's), each at a number of its
    units (the pool's gauge of units in use, under its cells)."""
    SHAPE: ClassVar[str] = "pool_marks"
    pool: str
    marks: tuple[Mark, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"pool": self.pool, "marks": [mark.to_data() for mark in self.marks]}

    @classmethod
    def from_dict(cls, data: dict) -> PoolMarks:
        return cls(str(data["pool"]), _marks(data["marks"]))

    def words(self) -> Iterator[Said]:
        return (mark.said for mark in self.marks)


Shape = type[Card] | type[PoolMarks]
SHAPES: dict[str, Shape] = {shape.SHAPE: shape for shape in (Card, PoolMarks)}
