"""A scheduler of one's own, from a Python file named as `path/to/mine.py:MyScheduler` on the command line: loaded,
checked to be a scheduler, and registered in the factory's registry (scheduler/factory.py SCHEDULERS) as a kind like
the built-in ones, so that everything after reads it through its declaration (its `info`) and its names. This module
is the one that knows where a kind came from.

The least a file declares: a class fitting `SchedulerProtocol` with its own `info`, most simply a built-in kind's
declaration derived (`info = Scheduler.info.derive("mine")`, scheduler/contract.py); optionally `names`, its name
per language ({"en": ..., "zh": ...}; its kind id where none is given). A file runs with its author's rights: this is
the command line on their machine, not the shared server. A bad path, a missing class or one that is not a scheduler
is a `LearnerError` in a sentence; an exception raised in the file's code is shown by `their_traceback`, the file's
own frames only."""

from __future__ import annotations

import importlib.util
import inspect
import linecache
import re
import sys
import traceback
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from i18n import CATALOGUES, MessageError
from scheduler.contract import SchedulerInfo, SchedulerProtocol
from scheduler.factory import DECLARED, SCHEDULERS

KIND_ID = re.compile(r"[a-z][a-z0-9_]{0,39}")  # written in traces and links (a trace keeps 40 characters)
# What a scheduler offers the engine (the protocol's calls and queues; `num_preemptions` may be set in __init__)
MEMBERS = tuple(name for name, value in vars(SchedulerProtocol).items()
                if not name.startswith("_") and (callable(value) or isinstance(value, property))
                and name != "num_preemptions")


class LearnerError(MessageError):
    """A scheduler file that cannot be used, and why (a message id under "learner.")."""


@dataclass(frozen=True)
class Loaded:
    kind: str
    path: Path  # the file, resolved: the frames of a traceback that are its author's


def is_file_spec(text: str) -> bool:
    """Whether a --scheduler value names a file's class (`mine.py:MyScheduler`) rather than a kind."""
    return ":" in text or text.endswith(".py")


def load(spec: str) -> Loaded:
    """The class `spec` names, registered as a kind; an exception the file's own code raises propagates."""
    where, _, name = spec.rpartition(":")
    if not where or not name.isidentifier():
        raise LearnerError("learner.spec", spec=spec)
    path = Path(where).expanduser().resolve()
    if not path.is_file():
        raise LearnerError("learner.no_file", path=where)
    module_name = f"schedlab_own.{path.stem}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise LearnerError("learner.not_python", path=where)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module  # dataclasses in the file look their module up
    module_spec.loader.exec_module(module)
    return Loaded(register(_class_in(module, name, where), name), path)


def load_source(source: str, name: str, path: Path) -> Loaded:
    """The class `name` of a file's `source` text (given as the file at `path`, which need not exist: its frames
    in a traceback and its lines, for `their_traceback`), registered as a kind; as `load`, for the sandbox's worker
    (sandbox/worker.py), which gets the source and no file."""
    module_name = f"schedlab_own.{path.stem}"
    module = types.ModuleType(module_name)
    module.__file__ = str(path)
    linecache.cache[str(path)] = (len(source), None, source.splitlines(keepends=True), str(path))
    sys.modules[module_name] = module
    exec(compile(source, str(path), "exec"), vars(module))  # the learner's code, in the sandbox only
    return Loaded(register(_class_in(module, name, path.name), name), path)


def _class_in(module, name: str, where: str):
    cls = getattr(module, name, None)
    if cls is None:
        found = [n for n, v in vars(module).items() if inspect.isclass(v) and v.__module__ == module.__name__]
        raise LearnerError("learner.no_class", name=name, path=where, found=", ".join(found) or "-")
    return cls


def register(cls: Any, name: str, registry: dict | None = None) -> str:
    """`cls` in the factory's registry (or `registry`: the declared kinds, for the sandbox) under its declared kind,
    and its names in the catalogues; its kind id."""
    if not inspect.isclass(cls):
        raise LearnerError("learner.not_class", name=name, what=type(cls).__name__)
    info = vars(cls).get("info")
    if not isinstance(info, SchedulerInfo):
        raise LearnerError("learner.no_info", name=name)
    if not KIND_ID.fullmatch(info.kind):
        raise LearnerError("learner.kind_id", name=name, kind=info.kind)
    taken = SCHEDULERS.get(info.kind) or DECLARED.get(info.kind) or cls
    if taken.__module__ != cls.__module__:  # the same file loaded again may replace it
        raise LearnerError("learner.kind_taken", name=name, kind=info.kind)
    missing = [member for member in MEMBERS if not hasattr(cls, member)]
    if missing:
        raise LearnerError("learner.not_scheduler", name=name, missing=", ".join(missing))
    (SCHEDULERS if registry is None else registry)[info.kind] = cast("type[SchedulerProtocol]", cls)  # as checked
    names = getattr(cls, "names", None) or {}
    for lang, catalogue in CATALOGUES.items():
        for key in (info.name, info.run_name):
            catalogue[key] = names.get(lang) or names.get("en") or info.kind
    return info.kind


def their_traceback(error: BaseException, path: Path) -> str | None:
    """The traceback of `error` through the file at `path` only (its frames, then the error), or None where none
    of its frames is the file's (an error of the app's own, to be raised as it is)."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename).resolve() == path]
    in_their_syntax = isinstance(error, SyntaxError) and error.filename and Path(error.filename).resolve() == path
    if not frames and not in_their_syntax:
        return None
    return "".join(["Traceback (your code only):\n", *traceback.format_list(frames),
                    *traceback.format_exception_only(type(error), error)])
