"""A scheduler setting, declared once where it is defined: the shared `Config`'s fields (scheduler/config.py) and
each kind's own settings (`KindSettings`, a frozen dataclass beside its scheduler: scheduler/<its package>/settings.py,
the article's, the vLLM V1 twin's, the SGLang twin's and the V0 twin's).

A field is declared with `setting(default, ...)`: its type is its annotation, its default is the mirrored system's
where it has one, and the declaration adds its range (`bounds`, for a number) or its `choices`, its name in the
system's own command line (`flag`), whether the sidebar shows it, whether the real model can run with it on
(`real_model_fix`), and whether every trace writes it (`always_written`: the settings traces held from their start;
a later one is written only when set away from its default, so an older trace reads byte for byte as it was). Its
message ids are `<messages>.<field>.label` and `.help`, under the prefix its class names (the kind's own prefix in
i18n). Its key (the name links, scenario files and traces write it under, and `Config(key=...)` takes) is its field
name, or the `key` its declaration names where another kind has that name already: one across all kinds (checked
when a class is defined, and by `scheduler/factory.py`). `declared(cls)` reads the declarations back
as `SettingSpec`s: what the sidebar, links, scenario files, traces, the policy lab and handouts render and check.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from i18n import Message, MessageError

_DECLARED = "setting"  # the metadata key of a field's declaration


class ConfigError(MessageError):
    """A configuration that can never work. The message names the field, the value and what would work: the
    message `fix` (an id under "config.", filled from `values`)."""

    def __init__(self, field: str, value, fix: str, **values):
        self.field, self.value, self.fix = field, value, Message(fix, **values)
        super().__init__("error.config", field=field, value=repr(value), fix=self.fix)


@dataclass(frozen=True)
class Declared:
    """What a field declares beside its type and default (see the module docstring)."""
    bounds: tuple[float, float] | None = None
    choices: tuple = ()
    flag: str = ""  # its name in the mirrored system's command line ("--watermark"); "" where it has none
    step: float | None = None  # a fractional number's step in the sidebar
    sidebar: bool = True  # False: fixed for a run, set by its scenario file (the notebook's bug, a lesson): neither
    # the sidebar nor a change mid-run sets it
    always_written: bool = False
    real_model_fix: str = ""  # set: the real model cannot run with it on, and this message id (under config.) says why
    key: str = ""  # its key in links, scenario files and traces, where not its field name (one across all kinds)


def setting(default, *, bounds: tuple[float, float] | None = None, choices: tuple = (), flag: str = "",
            step: float | None = None, sidebar: bool = True, always_written: bool = False,
            real_model_fix: str = "", key: str = "") -> Any:
    """A dataclass field declared as a setting (see `Declared`)."""
    return field(default=default, metadata={_DECLARED: Declared(bounds, tuple(choices), flag, step, sidebar,
                                                                always_written, real_model_fix, key)})


def key_of(name: str, declaration: Any) -> str:
    """The key of the field `name` whose dataclass field (or default) is `declaration`."""
    metadata = getattr(declaration, "metadata", {})
    return metadata[_DECLARED].key or name if _DECLARED in metadata else name


@dataclass(frozen=True)
class SettingSpec:
    """One declared setting as its readers see it: `key` its key (links, scenario files, traces, the sidebar's
    widgets, `Config(key=...)` and `config.value(key)`), `name` its field in its class (the key but where the
    declaration names another), `kind` "int", "float", "bool" or "str", `owner` the class that declares it
    (`Config` or a kind's `KindSettings`), and its message ids."""
    key: str
    name: str
    kind: str
    default: Any
    declared: Declared
    owner: type
    messages: str  # the prefix of its message ids: `<messages>.<key>.label` and `.help`

    @property
    def label_id(self) -> str:
        return f"{self.messages}.{self.name}.label"

    @property
    def help_id(self) -> str:
        return f"{self.messages}.{self.name}.help"

    def value_id(self, value) -> str | None:
        """The message id of a two-way choice's value (a bool shown as a choice: `<messages>.<key>.on` / `.off`),
        None for any other setting (its value is said as a number, on/off or itself)."""
        return f"{self.messages}.{self.name}.{'on' if value else 'off'}" if self.kind == "bool" and self.choices \
            else None

    @property
    def bounds(self) -> tuple[float, float] | None:
        return self.declared.bounds

    @property
    def choices(self) -> tuple:
        return self.declared.choices

    @property
    def flag(self) -> str:
        return self.declared.flag

    def written(self, value) -> bool:
        """Whether a trace writes this setting at `value` (a shared one always)."""
        return self.declared.always_written or not issubclass(self.owner, KindSettings) or value != self.default


def declared(cls: type) -> tuple[SettingSpec, ...]:
    """The settings `cls` declares (`setting` fields), in its order."""
    messages = cls.messages  # type: ignore[attr-defined]
    return tuple(SettingSpec(f.metadata[_DECLARED].key or f.name, f.name,
                             f.type if isinstance(f.type, str) else f.type.__name__, f.default,
                             f.metadata[_DECLARED], cls, messages)
                 for f in fields(cls) if _DECLARED in f.metadata and f.default is not MISSING)


def check_types(obj) -> None:
    """Refuse a declared field whose value is not of its type (a float may be given as an int: 0 and 0.0 are one
    setting, kept as a float)."""
    for spec in declared(type(obj)):
        value = getattr(obj, spec.name)
        if spec.kind == "float":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(spec.key, value, "config.number")
            object.__setattr__(obj, spec.name, float(value))
        elif spec.kind == "int" and type(value) is not int:
            raise ConfigError(spec.key, value, "config.integer")
        elif spec.kind == "bool" and type(value) is not bool:
            raise ConfigError(spec.key, value, "config.bool")
        elif spec.choices and value not in spec.choices:
            raise ConfigError(spec.key, value, "config.choice", choices=", ".join(map(str, spec.choices)))


@dataclass(frozen=True)
class Sweep:
    """A comparison a kind offers in the policy lab (engine/analysis/compare.py): `name` (what the lab's choice of
    comparison keeps) runs the workload with its setting `key` at each value, labelled by its message; `title` is
    the message id of its title, under the kind's own prefix (`<kind>.sweep.<key>`)."""
    name: str
    key: str
    values: tuple[tuple[Message, Any], ...]  # (label, value)
    title: str


_SECTIONS: dict[str, tuple[type[KindSettings], str]] = {}  # a kind's setting's key -> its class and field


@dataclass(frozen=True)
class KindSettings:
    """The base of a kind's own settings: a frozen dataclass of `setting` fields, which `Config` carries as one of
    its sections (`Config.of`). `messages` is the prefix of their message ids, under the kind's own prefix in i18n
    ("vllm.setting"); `check(config)` refuses a value that cannot work with the shared settings. Each subclass
    registers its keys when it is defined, so that a `Config` built from keys (a trace's, a link's) puts each
    value in its kind's section; a key two kinds declare is refused there and then. `sweeps`: the comparisons of
    its own settings it offers in the policy lab."""
    messages: ClassVar[str]
    sweeps: ClassVar[tuple[Sweep, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        keys = {key_of(name, cls.__dict__.get(name)): name for name, annotation in cls.__annotations__.items()
                if "ClassVar" not in str(annotation)}
        for key in keys:
            if key in _SECTIONS and _SECTIONS[key][0].__qualname__ != cls.__qualname__:
                raise TypeError(f"{cls.__qualname__}.{keys[key]}: {_SECTIONS[key][0].__qualname__} declares the key "
                                f"{key!r} already (a setting's key is one across kinds: declare its own, key=)")
        _SECTIONS.update({key: (cls, name) for key, name in keys.items()})

    def __post_init__(self):
        check_types(self)

    def check(self, config) -> None:
        """Refuse (ConfigError) what cannot work with `config`'s shared settings; nothing by default."""


_DEFAULTS: dict[type, Any] = {}
S = TypeVar("S", bound=KindSettings)


def defaults(kind: type[S]) -> S:
    """A kind's settings at their defaults (made once: a scheduler reads them every step)."""
    if kind not in _DEFAULTS:
        _DEFAULTS[kind] = kind()
    return _DEFAULTS[kind]


def section_of(key: str) -> tuple[type[KindSettings], str] | None:
    """The kind's settings class that declares `key`, and the field it is there; None for none."""
    return _SECTIONS.get(key)
