"""Shareable links: a run as a short, readable query string, and back. No Streamlit.

`?scenario=02_preemption&frame=19` opens a preset at frame 19 (`&variant=1` its variant, `&present=1` in
presentation mode, `&lang=zh` in Chinese);
`?scenario=custom&requests=8&prompts=chat&max_tokens=16&arrivals=poisson&seed=3&frame=7`
a custom setup. Either carries what the first step runs under where it differs from the preset (a custom
setup: from the defaults): `scheduler=vllm` (the vLLM twin; `sglang` the SGLang twin; `article` the article's),
scheduler settings by their key (the shared ones, `max_num_seqs=2`, and a kind's own as it declares them,
`prefill_first=0`, `schedule_policy=fcfs`: scheduler/settings.py), `overlap=1`,
`adaptive=<grow below ms>-<shrink above ms>-<at least>-<at most>` or `adaptive=off`, `temperature`, and a
preset's `seed` when it is not the preset's own. The changes made later in the run, with their frames, travel in
`changes=` (`session/link_changes.py`), each value checked as its own parameter would be and the whole sequence as
the sidebar checks it (`checked_change`); `replay` makes them at their frames.

`parse_link` checks every value: a `LinkError` names the first parameter it cannot use and how to fix it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import NoReturn

from engine.inputs.scenario import Scenario
from engine.run.adaptive import AdaptiveBatch
from engine.run.limits import BOUNDS, within
from engine.run.overlap import check_overlap
from engine.run.recipe import Change, ChangeError, Options, Request, checked_change
from i18n import DEFAULT, LANGUAGES, Message, MessageError, echoed, message_of
from scheduler import SCHEDULER_KINDS, Config, ConfigError
from scheduler.config import MODEL_SETTINGS
from scheduler.factory import DEFAULT_KIND
from scheduler.factory import SETTINGS as EVERY_SETTING
from session.lab import ARRIVALS, CUSTOM, PROMPTS, CustomSetup, Lab, RunInputs
from session.link_changes import pack, unpack

# Every setting by its key, the shared ones and each kind's own as it declares them (scheduler/settings.py), but the
# model's own.
SETTINGS = tuple(key for key in EVERY_SETTING if key not in MODEL_SETTINGS)
RUN_KEYS = ("scenario", *(f.name for f in fields(CustomSetup)), "seed", "variant", "temperature", "scheduler",
            "changes", "frame", "present", "lang")
CLASS_KEYS = ("class", "key", "me")  # a class's code, the lecturer's secret, a student's personal code
# (session/classroom.py, ui/classroom.py): not the run's
KEYS = (*RUN_KEYS, *SETTINGS, *Options._fields, *CLASS_KEYS)
KINDS = {**{key: spec.kind for key, spec in EVERY_SETTING.items()},
         **{f.name: getattr(f.type, "__name__", f.type) for f in fields(CustomSetup)},
         "seed": "int", "frame": "int", "temperature": "float", "variant": "bool", "present": "bool",
         "overlap": "bool", "adaptive": "adaptive", "lang": "str", "scheduler": "str"}
CHOICES = {"prompts": PROMPTS, "arrivals": ARRIVALS, "lang": LANGUAGES, "scheduler": SCHEDULER_KINDS}


class LinkError(MessageError):
    """A link that cannot be opened; the message names the parameter and the fix."""


@dataclass(frozen=True)
class Link:
    scenario: str
    frame: int = 0
    variant: bool = False
    present: bool = False
    custom: CustomSetup | None = None  # the workload of a custom setup (scenario "custom")
    seed: int | None = None  # None: the preset's own
    temperature: float = 0.0
    settings: dict = field(default_factory=dict)  # config fields and options changed for the first step
    lang: str = DEFAULT  # the interface's language (i18n.LANGUAGES)
    scheduler: str | None = None  # None: the preset's own (a custom setup: the factory's default)
    changes: tuple[Change, ...] = ()  # the changes made mid-run (or requests added at frame 0), in the order made

    def params(self) -> dict[str, str]:
        """The query string's parameters, in a readable order."""
        params = {"scenario": self.scenario}
        if self.custom is not None:
            params |= {f.name: str(getattr(self.custom, f.name)) for f in fields(CustomSetup)}
        if self.seed is not None:
            params["seed"] = str(self.seed)
        if self.variant:
            params["variant"] = "1"
        if self.temperature:
            params["temperature"] = f"{self.temperature:g}"
        if self.scheduler is not None:
            params["scheduler"] = self.scheduler
        params |= {key: _text(value) for key, value in self.settings.items()}
        if self.changes:
            params["changes"] = pack([_entry(change) for change in self.changes])
        params["frame"] = str(self.frame)
        if self.present:
            params["present"] = "1"
        if self.lang != DEFAULT:
            params["lang"] = self.lang
        return params


def _text(value) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, AdaptiveBatch):
        text = f"{value.low_s * 1000:g}-{value.high_s * 1000:g}-{value.min_seqs}-{value.max_seqs}"
        return text if value.step == 1 else f"{text}-{value.step}"
    return "off" if value is None else str(value)


def _entry(change: Change) -> list:
    """A change as `changes=` writes it (session/link_changes.py)."""
    if change.kind == "config":
        return [change.step, {key: _text(value) for key, value in change.settings.items()}]
    request = change.payload
    entry = [change.step, request.prompt, request.max_tokens, request.priority]
    sampling = {"stop_token_ids": list(request.stop_token_ids)} if request.stop_token_ids else {}
    if request.min_tokens:
        sampling["min_tokens"] = request.min_tokens
    if sampling:  # vLLM's SamplingParams fields, after the temperature
        return entry + [request.temperature, sampling]
    return entry + [request.temperature] if request.temperature else entry


def link_of(lab: Lab, scenarios: Mapping[str, Scenario], present: bool = False, *, lang: str) -> Link:
    """The link that reopens `lab`'s run at the frame shown."""
    inputs = lab.inputs
    if inputs is None:
        return Link("trace", lab.cursor, present=present, lang=lang)
    custom = inputs.custom is not None
    base, base_options = (Config(), Options()) if custom else (inputs.config, inputs.spec.options_at(0))
    config, options = lab.config_in_effect(0), lab.options_in_effect(0)
    settings = {f: config.value(f) for f in SETTINGS if config.value(f) != base.value(f)}
    settings |= {f: v for f, v in options._asdict().items() if v != getattr(base_options, f)}
    scenario = scenarios.get(inputs.scenario_name)
    seed = inputs.spec.seed if custom or scenario is None or inputs.spec.seed != scenario.spec.seed else None
    own = DEFAULT_KIND if custom or scenario is None else scenario.spec_for(variant=inputs.variant).scheduler
    changes = tuple(c for c in lab.shared_run.spec.changes if c.step > 0 or c.kind == "request")  # frame 0's: settings
    return Link(inputs.scenario_name, lab.cursor, inputs.variant, present, inputs.custom, seed, inputs.temperature,
                settings, lang, None if inputs.spec.scheduler == own else inputs.spec.scheduler, changes)


def open_link(link: Link, scenarios: Mapping[str, Scenario], runner: str) -> Lab:
    """A lab at frame 0 of the run `link` names (a link from `parse_link`); the caller runs it to `link.frame`."""
    config = {k: v for k, v in link.settings.items() if k in SETTINGS}
    options = Options()._replace(**{k: v for k, v in link.settings.items() if k in Options._fields})
    if link.custom is not None:
        return Lab(RunInputs.from_custom(link.custom, replace(Config(), **config), runner, link.seed,
                                         link.temperature, options, link.scheduler or DEFAULT_KIND))
    inputs = RunInputs.from_scenario(scenarios[link.scenario], runner, link.temperature, link.seed, link.variant)
    lab = Lab(inputs.with_scheduler(link.scheduler) if link.scheduler else inputs)
    if link.settings:
        lab.act(Change.config(0, link.settings))  # changed at frame 0, like the sidebar does
    return lab


def replay(lab: Lab, link: Link, run_to: Callable[[Lab, int], None]) -> Message | None:
    """Run `lab` (from `open_link`) making the link's changes at their frames, then stand at its frame; `run_to(lab,
    frame)` steps it on. A change the run cannot make (it ended before that frame) is left out with those after it,
    and the message returned says so."""
    for change in link.changes:
        run_to(lab, change.step)
        try:
            if lab.cursor != change.step:
                raise LinkError("link.run_ended", last=lab.last)
            lab.act(change)
        except ValueError as error:  # LinkError, or what the engine still refuses (LabError, ConfigError)
            lab.goto(min(link.frame, lab.last))
            return Message("link.change_left_out", frame=change.step, error=message_of(error))
    run_to(lab, link.frame)
    lab.goto(min(link.frame, lab.last))
    return None


def parse_link(params: Mapping[str, str], scenarios: Mapping[str, Scenario]) -> Link:
    """The run a URL's query names; without a scenario, the first preset at frame 0."""
    if unknown := [key for key in params if key not in KEYS]:
        raise LinkError("link.unknown_param", name=echoed(repr(unknown[0])),
                        keys=", ".join((*RUN_KEYS, *Options._fields)))
    name = params.get("scenario", next(iter(scenarios), CUSTOM))
    if name != CUSTOM and name not in scenarios:
        raise LinkError("link.unknown_scenario", name=echoed(f"scenario={name!r}"),
                        names=", ".join([*scenarios, CUSTOM]))
    custom = CustomSetup(**{f.name: _value(params, f.name, f.default) for f in fields(CustomSetup)}) \
        if name == CUSTOM else None
    if custom is None and (extra := [f.name for f in fields(CustomSetup) if f.name in params]):
        _fail(extra[0], params[extra[0]], Message("link.fix.custom_only"))
    variant = _value(params, "variant", False)
    if variant and (custom is not None or not scenarios[name].variant):
        _fail("variant", params["variant"], Message("link.fix.no_variant", name=echoed(repr(name))))
    seed = _value(params, "seed", 0 if custom else None)
    settings = {key: _value(params, key, None) for key in (*SETTINGS, *Options._fields) if key in params}
    base = Config() if custom else scenarios[name].spec_for(variant=variant).config
    try:
        config = replace(base, **{k: v for k, v in settings.items() if k in SETTINGS})
        adaptive = settings.get("adaptive", None if custom else scenarios[name].spec.adaptive)
        if adaptive is not None:  # the engine brings max_num_seqs within the controller's bounds first
            config = replace(config, max_num_seqs=adaptive.clamp(config.max_num_seqs))
        overlap = settings.get("overlap", False if custom else scenarios[name].spec.overlap)
        check_overlap(config, overlap)
    except ConfigError as e:
        raise LinkError("link.incompatible", error=e.message) from None
    return Link(name, _value(params, "frame", 0), variant, _value(params, "present", False), custom, seed,
                _value(params, "temperature", 0.0), settings, _value(params, "lang", DEFAULT),
                _value(params, "scheduler", None), _changes(params, config, Options(overlap, adaptive)))


def parse_link_or_fallback(params: Mapping[str, str],
                           scenarios: Mapping[str, Scenario]) -> tuple[Link, Message | None]:
    """(the link, None), or for a link that cannot be opened (a link, what was wrong and what opened instead): the
    same link without the parameter that failed (a bad `frame=` opens the named scenario at frame 0), else the
    first preset, keeping `present` and `lang`."""
    try:
        return parse_link(params, scenarios), None
    except LinkError as error:
        bad = error.message.values.get("key") if error.message_id == "link.bad_value" else None
        if bad not in (None, "scenario"):
            try:
                link = parse_link({k: v for k, v in params.items() if k != bad}, scenarios)
                return link, Message("state.bad_link_without", error=error.message, key=bad)
            except LinkError:
                pass
        kept = {k: v for k, v in params.items() if k in ("present", "lang")}
        try:
            return parse_link(kept, scenarios), Message("state.bad_link", error=error.message)
        except LinkError:
            return parse_link({}, scenarios), Message("state.bad_link", error=error.message)


def _fail(key: str, text, fix: Message) -> NoReturn:
    raise LinkError("link.bad_value", setting=echoed(f"{key}={text!r}"), fix=fix, key=key)  # key: which to drop


def _value(params: Mapping[str, str], key: str, default):
    """The parameter `key` read as its kind, or `default` when the link does not have it."""
    if key not in params:
        return default
    text, kind = params[key], KINDS[key]
    if kind == "adaptive":
        return _adaptive(text)
    if kind == "bool":
        if text not in ("0", "1", "true", "false"):
            _fail(key, text, Message("link.fix.bool"))
        return text in ("1", "true")
    if kind == "str":
        if key in CHOICES and text not in CHOICES[key]:
            _fail(key, text, Message("config.choice", choices=", ".join(CHOICES[key])))
        return text  # a Config field: Config checks it against its choices
    low, high = BOUNDS[key]
    if not re.fullmatch(r"\d+(\.\d+)?" if kind == "float" else r"\d+", text) or not low <= float(text) <= high:
        _fail(key, text, Message("link.fix.number" if kind == "float" else "link.fix.whole", low=low, high=high))
    return float(text) if kind == "float" else int(text)


def _changes(params: Mapping[str, str], config: Config, options: Options) -> tuple[Change, ...]:
    """The `changes=` parameter read back, each change checked as the sidebar checks it from the settings in effect
    (the link's first-step ones, then each change's)."""
    if "changes" not in params:
        return ()
    text = params["changes"]
    shown = text if len(text) <= 24 else text[:24] + "…"
    try:
        entries = unpack(text)
    except ValueError:
        _fail("changes", shown, Message("link.fix.changes"))
    changes = []
    for entry in entries:
        step = entry[0] if isinstance(entry, list) and entry else None
        if type(step) is not int or not within("frame", step) or (changes and step < changes[-1].step):
            _fail("changes", shown, Message("link.fix.changes"))
        try:
            change = _change(step, entry[1:])
            if change.kind == "config":
                config, options = checked_change(config, options, change.settings)
        except LinkError as e:  # a value out of its bounds: name it
            _fail("changes", shown, Message("link.fix.change_value", frame=step, **e.message.values))
        except (ChangeError, ConfigError) as e:
            _fail("changes", shown, Message("link.fix.change_refused", frame=step, error=message_of(e)))
        changes.append(change)
    return tuple(changes)


def _change(step: int, body: list) -> Change:
    """One entry of `changes=` (after its frame) as a Change; LinkError naming a value out of its bounds."""
    if len(body) == 1 and isinstance(body[0], dict):
        if unknown := [key for key in body[0] if key not in (*SETTINGS, *Options._fields)]:
            _fail(unknown[0], body[0][unknown[0]], Message("link.fix.setting"))
        if wrong := [key for key, value in body[0].items() if not isinstance(value, str)]:
            _fail(wrong[0], body[0][wrong[0]], Message("link.fix.changes"))
        return Change.config(step, {key: _value(body[0], key, None) for key in body[0]})
    sampling = body.pop() if len(body) == 5 and isinstance(body[-1], dict) else {}
    if len(body) not in (3, 4) or not isinstance(body[0], str) or not body[0].strip() \
            or len(body[0]) > BOUNDS["prompt_tokens"][1]:
        _fail("prompt", body[0] if body else "", Message("link.fix.prompt", most=BOUNDS["prompt_tokens"][1]))
    for key, value in zip(("max_tokens", "priority", "temperature"), body[1:], strict=False):
        if type(value) is not (float if key == "temperature" else int) or not within(key, value):
            low, high = BOUNDS[key]
            _fail(key, value, Message("link.fix.number" if key == "temperature" else "link.fix.whole", low=low,
                                      high=high))
    return Change.request(step, Request(prompt=body[0].strip(), max_tokens=body[1], priority=body[2],
                                        temperature=body[3] if len(body) == 4 else 0.0, **_sampling(sampling)))


def _sampling(sampling: dict) -> dict:
    """A request entry's vLLM SamplingParams fields (stop_token_ids, min_tokens), checked against the table."""
    if unknown := [key for key in sampling if key not in ("stop_token_ids", "min_tokens")]:
        _fail(unknown[0], sampling[unknown[0]], Message("link.fix.setting"))
    stops, least = sampling.get("stop_token_ids", []), sampling.get("min_tokens", 0)
    if not isinstance(stops, list) or len(stops) > BOUNDS["stop_token_ids"][1] \
            or not all(type(t) is int and within("token_id", t) for t in stops):
        _fail("stop_token_ids", stops, Message("link.fix.changes"))
    if type(least) is not int or not within("min_tokens", least):
        low, high = BOUNDS["min_tokens"]
        _fail("min_tokens", least, Message("link.fix.whole", low=low, high=high))
    return {"stop_token_ids": tuple(stops), "min_tokens": least}


def _adaptive(text: str) -> AdaptiveBatch | None:
    if text == "off":
        return None
    most_ms, most_seqs = BOUNDS["adaptive_s"][1] * 1000, BOUNDS["max_num_seqs"][1]
    fix = Message("link.fix.adaptive", ms=f"{most_ms:g}", seqs=most_seqs)
    parts = text.split("-")
    if len(parts) not in (4, 5) or not all(re.fullmatch(r"\d+(\.\d+)?", p) for p in parts[:2]) \
            or not all(p.isdigit() for p in parts[2:]):
        _fail("adaptive", text, fix)
    (low, high), (least, most, step) = map(float, parts[:2]), [*map(int, parts[2:]), 1][:3]
    if high > most_ms or most > most_seqs:
        _fail("adaptive", text, fix)
    try:
        return AdaptiveBatch(low / 1000, high / 1000, step, least, most)
    except ValueError:
        _fail("adaptive", text, fix)
