"""Scenario presets: one TOML file each (format in scenarios/README.md), loaded all or nothing.

Every problem in a file (unknown key, wrong type, impossible config, a request that can never fit) raises
`ScenarioError` naming the file, the key and the fix; loading builds new objects only, so a failed load
changes nothing.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import ClassVar, NoReturn

from engine.inputs.assignment import Assignment, read_assignment
from engine.inputs.key_frames import EXPECTATIONS, KeyFrame
from engine.inputs.notebook import NOTEBOOK, notebook_requests
from engine.inputs.workload import bursty_arrivals, chat_prompts, lengths, poisson_arrivals, random_token_prompts
from engine.run.adaptive import AdaptiveBatch
from engine.run.engine import Engine
from engine.run.limits import BOUNDS, CONFIG_BOUNDS, within
from engine.run.overlap import check_overlap
from engine.run.recipe import CostModel, Request, RunSpec
from engine.run.runner_factory import RUNNER_KINDS
from i18n import DEFAULT, LANGUAGES, Message, MessageError, message_of
from scheduler import SCHEDULER_KINDS, Config, ConfigError
from scheduler.contract import QUEUES
from scheduler.factory import DEFAULT_KIND, OWN_WORKLOADS, SETTINGS, scheduler_info

TRANSLATED = tuple(lang for lang in LANGUAGES if lang != DEFAULT)  # a text field `x` has `x_zh` beside it
SCENARIOS_DIR = Path(__file__).resolve().parents[2] / "scenarios"


class ScenarioError(MessageError):
    """A scenario file that cannot be used: the file, the key (or a Message naming the place) and the problem (a
    Message, or the words of an error raised outside schedlab)."""

    def __init__(self, path, key: str, problem: str):
        self.path, self.key = str(path), key
        super().__init__("error.scenario", path=str(path), key=key, problem=problem)


# -- the scenario --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scenario:
    """A preset: its run's recipe (`spec`), the words shown about it, its key frames and its variant."""
    path: Path
    title: str
    narrative: str
    spec: RunSpec
    key_frames: tuple[KeyFrame, ...]
    variant: dict  # what the comparison run the scenario offers changes: config fields, and `scheduler` when another
    # scheduler decides it ({} when the scenario offers none)
    translations: dict = field(default_factory=dict)  # {language: {"title": ..., "narrative": ...}}
    assignment: Assignment | None = None  # goals the student's run must meet (engine/inputs/assignment.py)

    @property
    def name(self) -> str:
        return self.path.stem

    def title_in(self, lang: str) -> str:
        """The title in `lang`; in English where the file has none in that language (`is_translated` says)."""
        return self.translations.get(lang, {}).get("title", self.title)

    def narrative_in(self, lang: str) -> str:
        return self.translations.get(lang, {}).get("narrative", self.narrative)

    def is_translated(self, lang: str) -> bool:
        return lang == DEFAULT or lang in self.translations

    def spec_for(self, runner: str | None = None, variant: bool = False) -> RunSpec:
        """The recipe of this scenario's run, or of its variant (the same workload with the `variant` config, decided
        by the variant's scheduler where it names one), on `runner` (by default the file's)."""
        spec = self.spec
        if variant:
            changes = dict(self.variant)
            scheduler = changes.pop("scheduler", spec.scheduler)
            spec = replace(spec, config=replace(spec.config, **changes), scheduler=scheduler)
        return replace(spec, runner=runner) if runner else spec

    def engine(self, runner: str | None = None, record: bool = True, variant: bool = False) -> Engine:
        """An engine at frame 0 of this scenario's run, or of its variant's."""
        return Engine(self.spec_for(runner, variant), record)


def preset_paths() -> list[Path]:
    return sorted(SCENARIOS_DIR.glob("*.toml"))


def load_scenario(path: str | Path, runner: str | None = None) -> Scenario:
    """Read and check a scenario file; `runner` overrides the file's runner ("fake" keeps tests fast)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ScenarioError(path, "file", Message("scenario.no_file")) from None
    except UnicodeDecodeError as e:
        raise ScenarioError(path, "file", Message("scenario.not_utf8", byte=e.start)) from None
    except OSError as e:
        raise ScenarioError(path, "file", Message("scenario.unreadable", detail=e.strerror or e)) from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(path, "syntax", not_toml(e)) from None
    return _Loader(path, is_preset=path.resolve().parent == SCENARIOS_DIR).scenario(data, runner)


def not_toml(error: tomllib.TOMLDecodeError) -> Message:
    """Where the TOML parser stopped (its own words are English only)."""
    if at := re.search(r"at line (\d+), column (\d+)", str(error)):
        return Message("scenario.not_toml", line=int(at[1]), column=int(at[2]))
    return Message("scenario.not_toml_end")


# The range (a key of engine.run.limits.BOUNDS) each numeric key of a scenario file must lie in, wherever it appears.
FIELD_BOUNDS = {**{name: name for name in CONFIG_BOUNDS}, "seed": "seed", "max_steps": "max_steps",
                "arrival": "arrival", "max_tokens": "max_tokens", "priority": "priority", "min_tokens": "min_tokens",
                "temperature": "temperature", "count": "workload_requests", "burst_size": "workload_requests",
                "every": "arrival", "rate": "rate", "scale": "scale", "step": "arrival",
                **{k: "prompt_tokens" for k in ("min_len", "max_len", "low", "high", "output_low", "output_high")},
                **{k: "max_num_seqs" for k in ("min_seqs", "max_seqs")},
                "low_s": "adaptive_s", "high_s": "adaptive_s", **{f.name: "cost_s" for f in fields(CostModel)}}

_TYPE_NAMES = {str: "str", int: "int", float: "float", bool: "bool", list: "list", dict: "table"}  # type.<name>


class _Loader:
    def __init__(self, path: Path, is_preset: bool = False):
        self.path = path
        self.is_preset = is_preset  # a shipped preset: its texts must be in every language

    def fail(self, key: str, problem: str, **values) -> NoReturn:
        """Refuse the file at `key`: the message `problem` filled from `values`."""
        raise ScenarioError(self.path, key, Message(problem, **values))

    def fail_with(self, key: str, error: Exception) -> NoReturn:
        """Refuse the file at `key` with an error raised while building it (its Message when it has one)."""
        raise ScenarioError(self.path, key, message_of(error))

    def table(self, data, where: str, spec: dict[str, type], required: tuple[str, ...] = ()) -> dict:
        """Check a table's keys and value types against `spec` ({key: type})."""
        if not isinstance(data, dict):
            self.fail(where, "scenario.must_be_table")
        for key, value in data.items():
            name = f"{where}.{key}" if where else key
            if key not in spec:
                self.fail(name, "scenario.unknown_key", keys=", ".join(sorted(spec)))
            wanted = spec[key]
            ok = isinstance(value, wanted) and not (wanted in (int, float) and isinstance(value, bool))
            if wanted is float and isinstance(value, int) and not isinstance(value, bool):
                ok = True
            if not ok:
                self.fail(name, "scenario.wrong_type", value=repr(value),
                          kind=Message(f"type.{_TYPE_NAMES[wanted]}"))
            if wanted in (int, float) and key in FIELD_BOUNDS and not within(FIELD_BOUNDS[key], value):
                low, high = BOUNDS[FIELD_BOUNDS[key]]
                self.fail(name, "scenario.out_of_range", value=repr(value), low=low, high=high)
        for key in required:
            if key not in data:
                self.fail(f"{where}.{key}" if where else key, "scenario.missing")
        return data

    def scenario(self, data: dict, runner: str | None) -> Scenario:
        self.table(data, "", {"title": str, "narrative": str, "runner": str, "seed": int, "max_steps": int,
                              "config": dict, "variant": dict, "cost": dict, "adaptive": dict, "overlap": bool,
                              "scheduler": str, "workload": dict, "key_frames": list, "assignment": dict,
                              **{f"{key}_{lang}": str for key in ("title", "narrative") for lang in TRANSLATED}},
                   required=("title", "narrative", "config", "workload"))
        runner = runner or data.get("runner", "fake")
        if runner not in RUNNER_KINDS:
            self.fail("runner", "scenario.no_runner", runner=repr(runner), kinds=", ".join(RUNNER_KINDS))
        scheduler = self.scheduler(data.get("scheduler", DEFAULT_KIND), "scheduler")
        config = self.config(data["config"])
        variant = dict(data.get("variant", {}))
        variant_scheduler = self.scheduler(variant.get("scheduler", scheduler), "variant.scheduler")
        variant_config = self.config({**data["config"], **{k: v for k, v in variant.items() if k != "scheduler"}},
                                     where="variant")
        overlap = data.get("overlap", False)
        for checked, where in ((config, "config"), (variant_config, "variant")):
            try:
                check_overlap(checked, overlap)
            except ConfigError as e:
                self.fail(f"{where}.{e.field}", "error.value_fix", value=repr(e.value), fix=e.fix)
        cost = CostModel(**self.table(data.get("cost", {}), "cost", {f.name: float for f in fields(CostModel)}))
        adaptive = self.adaptive(data["adaptive"]) if "adaptive" in data else None
        seed = data.get("seed", 0)
        workload = self.workload(data["workload"], seed)
        self.check_fits(workload, config, scheduler)
        if variant:
            self.check_fits(workload, variant_config, variant_scheduler)
        max_steps = data.get("max_steps", 10_000)
        if late := [i for i, r in enumerate(workload) if r.arrival >= max_steps]:
            self.fail(Message("scenario.request_n", i=late[0]), "scenario.arrives_late",
                      arrival=workload[late[0]].arrival, max_steps=max_steps)
        key_frames = tuple(self.key_frame(kf, i, variant_scheduler if kf.get("variant") else scheduler)
                           for i, kf in enumerate(data.get("key_frames", [])))
        assignment = read_assignment(self, data["assignment"], len(workload)) if "assignment" in data else None
        texts = [("title", data), ("narrative", data), *((f"key_frames[{i}].note", kf)
                                                         for i, kf in enumerate(data.get("key_frames", [])))]
        translated = self.translated(texts)
        translations = {lang: {"title": data[f"title_{lang}"], "narrative": data[f"narrative_{lang}"].strip()}
                        for lang in translated}
        spec = RunSpec(config, tuple(workload), runner, seed, cost, adaptive, overlap, scheduler, max_steps=max_steps)
        return Scenario(self.path, data["title"], data["narrative"].strip(), spec, key_frames, variant,
                        translations, assignment)

    def translated(self, texts: list[tuple[str, dict]]) -> list[str]:
        """The languages besides English the file's texts (each `(name, table holding it)`) are in: each text
        in it or none (a message in one language only is refused). A shipped preset must have them all; a
        user's file may have none (the app then shows its English text)."""
        languages = []
        for lang in TRANSLATED:
            has = {name: f"{name.rsplit('.', 1)[-1]}_{lang}" in table for name, table in texts}
            missing = [name for name, present in has.items() if not present]
            if missing and (self.is_preset or len(missing) < len(has)):
                why = (Message("scenario.why_preset") if self.is_preset else
                       Message("scenario.why_partial", language=LANGUAGES[lang]))
                self.fail(f"{missing[0]}_{lang}", "scenario.untranslated", name=missing[0], lang=lang,
                          language=LANGUAGES[lang], why=why)
            if not missing:
                languages.append(lang)
        return languages

    def scheduler(self, kind, key: str) -> str:
        """`kind`, the file's value at `key`, if it names a scheduler."""
        if kind not in SCHEDULER_KINDS:
            self.fail(key, "scenario.no_scheduler", scheduler=repr(kind), kinds=", ".join(SCHEDULER_KINDS))
        return kind

    def adaptive(self, table: dict) -> AdaptiveBatch:
        self.table(table, "adaptive", {"low_s": float, "high_s": float, "step": int, "min_seqs": int,
                                       "max_seqs": int})
        try:
            return AdaptiveBatch(**table)
        except ValueError as e:
            self.fail_with("adaptive", e)

    def config(self, table: dict, where: str = "config") -> Config:
        spec = {key: {"int": int, "bool": bool, "str": str, "float": float}[setting.kind]
                for key, setting in SETTINGS.items()}
        self.table(table, where, spec)
        try:
            return Config(**table)
        except ConfigError as e:
            self.fail(f"{where}.{e.field}", "error.value_fix", value=repr(e.value), fix=e.fix)

    def workload(self, table: dict, seed: int) -> list[Request]:
        self.table(table, "workload", {"requests": list, "generate": list})
        requests = [self.request(r, f"workload.requests[{i}]") for i, r in enumerate(table.get("requests", []))]
        for i, gen in enumerate(table.get("generate", [])):
            requests += self.generate(gen, f"workload.generate[{i}]", seed)
        if not requests:
            self.fail("workload", "scenario.no_requests")
        if len(requests) > (most := BOUNDS["workload_requests"][1]):
            self.fail("workload", "scenario.too_many_requests", n=len(requests), most=most)
        return requests

    REQUEST_KEYS = {"arrival": int, "prompt": str, "prompt_token_ids": list, "max_tokens": int, "ignore_eos": bool,
                    "priority": int, "temperature": float, "chat": bool, "stop_token_ids": list, "min_tokens": int}

    def request(self, table: dict, where: str) -> Request:
        self.table(table, where, self.REQUEST_KEYS)
        for key, most in (("prompt_token_ids", "prompt_tokens"), ("stop_token_ids", "stop_token_ids")):
            tokens = table.get(key)
            if tokens is not None and (not within(most, len(tokens))
                                       or not all(type(t) is int and within("token_id", t) for t in tokens)):
                low, high = BOUNDS["token_id"]
                self.fail(f"{where}.{key}", "scenario.token_ids", most=BOUNDS[most][1], low=low, high=high)
        try:
            return Request(**table)
        except (ValueError, TypeError) as e:
            self.fail_with(where, e)

    GENERATORS: ClassVar[dict[str, dict[str, type]]] = {
        "random_tokens": {"min_len": int, "max_len": int},
        "chat": {"system_only": bool, "names": list},
        "lengths": {"input": str, "output": str, "low": int, "high": int, "output_low": int, "output_high": int,
                    "scale": float},
        NOTEBOOK: {"demo": int},
    }
    COMMON: ClassVar[dict[str, type]] = {
        "kind": str, "count": int, "seed": int, "arrival": int, "arrivals": str, "rate": float, "burst_size": int,
        "every": int, "max_tokens": int, "ignore_eos": bool, "priority": int, "temperature": float}

    def generate(self, table: dict, where: str, seed: int) -> list[Request]:
        kind = table.get("kind")
        kind = OWN_WORKLOADS.get(kind, kind) if isinstance(kind, str) else kind  # a kind's own, by the kind's id
        if kind not in self.GENERATORS:
            self.fail(f"{where}.kind", "scenario.unknown_generator", kind=repr(kind),
                      kinds=", ".join(self.GENERATORS))
        if kind == NOTEBOOK:
            return self.notebook_demo(table, where)
        self.table(table, where, {**self.COMMON, **self.GENERATORS[kind]}, required=("count",))
        n, seed = table["count"], table.get("seed", seed)
        if n < 1:
            self.fail(f"{where}.count", "config.at_least_1")
        try:
            arrivals = self.arrivals(table, n, seed)
            common = {k: table[k] for k in ("ignore_eos", "priority", "temperature") if k in table}
            max_tokens = [table.get("max_tokens", 16)] * n
            if kind == "random_tokens":
                prompts = random_token_prompts(n, seed, table.get("min_len", 1), table.get("max_len", 10))
                return [Request(arrival=a, prompt_token_ids=tuple(p), max_tokens=m, **common)
                        for a, p, m in zip(arrivals, prompts, max_tokens, strict=True)]
            if kind == "chat":
                texts = self.chat_texts(table, where)
                return [Request(arrival=a, prompt=texts[i % len(texts)], max_tokens=m, **common)
                        for i, (a, m) in enumerate(zip(arrivals, max_tokens, strict=True))]
            scale = table.get("scale", 1.0)
            inputs = lengths(n, table.get("input", "uniform"), seed, table.get("low", 1), table.get("high"),
                             scale=scale)
            outputs = lengths(n, table.get("output", "uniform"), seed + 1, table.get("output_low", 1),
                              table.get("output_high"), scale=scale)
            prompts = [p * (length // len(p) + 1) for p, length in
                       zip(random_token_prompts(n, seed, 10, 10), inputs, strict=True)]
            return [Request(arrival=a, prompt_token_ids=tuple(p[:length]), max_tokens=m, **common)
                    for a, p, length, m in zip(arrivals, prompts, inputs, outputs, strict=True)]
        except ScenarioError:
            raise
        except ValueError as e:
            self.fail_with(where, e)

    def notebook_demo(self, table: dict, where: str) -> list[Request]:
        """The InfraTech notebook's own requests for one of its demos (engine/inputs/notebook.py): it fixes their
        count, prompts, arrivals and lengths, so nothing else may be set."""
        self.table(table, where, {"kind": str, **self.GENERATORS[NOTEBOOK]}, required=("demo",))
        try:
            return notebook_requests(table["demo"])
        except ValueError as e:
            self.fail_with(f"{where}.demo", e)

    def arrivals(self, table: dict, n: int, seed: int) -> list[int]:
        start, how = table.get("arrival", 0), table.get("arrivals", "at_once")
        if how == "at_once":
            return [start] * n
        if how == "poisson":
            return poisson_arrivals(n, table.get("rate", 1.0), seed, start)
        if how == "bursty":
            return bursty_arrivals(n, table.get("burst_size", 4), table.get("every", 10), start)
        raise MessageError("scenario.arrivals", how=repr(how))

    def chat_texts(self, table: dict, where: str) -> list[str]:
        prompts = chat_prompts()
        if table.get("system_only"):
            prompts = [p for p in prompts if p["system"]]
        if "names" in table:
            by_name = {p["name"]: p for p in prompts}
            unknown = [n for n in table["names"] if n not in by_name]
            if unknown:
                self.fail(f"{where}.names", "scenario.unknown_prompts", names=", ".join(map(repr, unknown)),
                          builtin=", ".join(by_name))
            prompts = [by_name[n] for n in table["names"]]
        return [p["text"] for p in prompts]

    def check_fits(self, workload: list[Request], config: Config, scheduler: str):
        """Token prompts that could never run under `config` (text prompts are measured by the runner). Under a
        scheduler that queues a prompt larger than the pool (the vLLM twin, as vLLM's scheduler does) it is a lesson,
        not an error: it waits for good."""
        capacity = config.num_kvcache_blocks * config.kvcache_block_size
        queued = scheduler_info(scheduler).queues_oversized_prompt
        for i, r in enumerate(workload):
            if r.prompt_token_ids is None:
                continue
            n = len(r.prompt_token_ids)
            if n >= config.max_model_len or n > capacity and not queued:
                self.fail(Message("scenario.request_n", i=i), "scenario.never_fits", n=n,
                          max_model_len=config.max_model_len, capacity=capacity)

    def key_frame(self, table: dict, i: int, scheduler: str) -> KeyFrame:
        """Key frame `i`, observed in a run of `scheduler` (the variant's where it says `variant`)."""
        where = f"key_frames[{i}]"
        self.table(table, where, {"step": int, "note": str, "expect": dict, "needs_model": bool, "variant": bool,
                                  **{f"note_{lang}": str for lang in TRANSLATED}},
                   required=("step", "note", "expect"))
        self.table(table["expect"], f"{where}.expect", {k: t for k, (t, _) in EXPECTATIONS.items()})
        info = scheduler_info(scheduler)
        declared = {"queues": [q for q in info.queues if q not in QUEUES],
                    "side_pools": [pool.name for pool in info.side_pools]}
        for key, names in declared.items():
            for name in table["expect"].get(key, {}):
                if name not in names:
                    self.fail(f"{where}.expect.{key}.{name}", "scenario.not_declared", name=repr(name),
                              scheduler=scheduler, names=", ".join(names) or "-")
        return KeyFrame(table["step"], table["note"], dict(table["expect"]), table.get("needs_model", False),
                        table.get("variant", False),
                        {lang: table[f"note_{lang}"] for lang in TRANSLATED if f"note_{lang}" in table})
