"""A scheduler of one's own on the command line (engine/learner.py, engine/cli.py): `engine check FILE.py:CLASS`
names the invariant a broken one breaks and its smallest workload, `engine run --scheduler FILE.py:CLASS` runs one as
a kind like the built-in ones and writes a trace naming it; a bad file says what is wrong, and an exception in the
file's code shows that file's frames only."""

import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main
from engine.inputs.scenario import SCENARIOS_DIR
from engine.learner import LearnerError, load
from engine.traces.trace import read_trace
from i18n import CATALOGUES, in_lang
from scheduler.factory import SCHEDULERS
from session.lab import LabError, open_trace
from tests.helpers.real_model import NEEDS_MODEL
from tests.helpers.source import ROOT

SMART = str(ROOT / "starters/smart_victim.py") + ":SmartVictim"
DOUBLE_FREE = str(ROOT / "starters/double_free.py") + ":DoubleFree"
SMART_PRESET = str(SCENARIOS_DIR / "07_smart_preemption.toml")


pytestmark = pytest.mark.usefixtures("kinds_restored")  # each test's kinds loaded from files leave no trace


def own_file(tmp_path: Path, body: str, name: str = "mine.py") -> Path:
    path = tmp_path / name
    path.write_text("from scheduler.article import Scheduler\n\n" + body)
    return path


def test_check_names_the_invariant_a_block_freed_twice_breaks_and_the_smallest_workload(capsys):
    assert main(["check", DOUBLE_FREE, "--examples", "50"]) == 1
    out = capsys.readouterr().out
    assert "invariant broken at step 1: block 0 was freed more times than it was taken" in out
    workload = out.split("smallest failing workload:\n")[1].splitlines()
    assert workload[-1].strip() == "request 0: arrives at step 1, prompt [100], up to 1 tokens"  # shrunk to one
    assert "  num_kvcache_blocks = 1" in workload and not any("schedule_policy" in line for line in workload)


def test_check_of_a_sound_scheduler_says_every_invariant_held(capsys):
    assert main(["check", SMART, "--examples", "40"]) == 0
    assert "all invariants held on 40 workloads" in capsys.readouterr().out


def test_the_checker_catches_what_each_invariant_guards(tmp_path, capsys):
    """A scheduler breaking one rule at a time: each is caught, in the words of the rule it broke."""
    broken = {
        "lost": ("def postprocess(self, seqs, token_ids):\n        events = super().postprocess(seqs, token_ids)\n"
                 "        for seq in list(self.running)[1:]:\n            self.running.remove(seq)\n"
                 "        return events\n", "is in no queue, yet it has not ended"),
        "batch": ("def schedule(self):\n        b = super().schedule()\n"
                  "        return Batch(b.seqs * 2, b.num_scheduled_tokens * 2, b.kind, b.events)\n",
                  "the batch holds 2 requests; max_num_seqs is 1"),
        "starved": ("def schedule(self):\n        return super().schedule() if len(self.waiting) < 2 else "
                    "Batch([], (), 'idle')\n", "the run did not end within 600 steps"),
    }
    for name, (method, words) in broken.items():
        path = own_file(tmp_path, f"from scheduler import Batch\n\n\nclass Broken(Scheduler):\n"
                                  f"    info = Scheduler.info.derive({name!r})\n\n    {method}", f"{name}.py")
        assert main(["check", f"{path}:Broken", "--examples", "60"]) == 1, name
        assert words in capsys.readouterr().out, name


def test_run_of_ones_own_scheduler_writes_a_trace_naming_it_and_its_choice_differs_from_the_articles(tmp_path,
                                                                                                     capsys):
    trace = tmp_path / "mine.json"
    assert main(["run", SMART_PRESET, "--scheduler", SMART, "--json", str(trace)]) == 0
    mine = capsys.readouterr().out
    assert "decided by smart_victim" in mine and "P2>1" in mine  # its victim: least progress
    assert main(["run", SMART_PRESET, "--scheduler", "article"]) == 0
    assert "P4>1" in capsys.readouterr().out  # the article's: the tail
    store, data = read_trace(trace.read_bytes())
    assert data["scheduler"] == "smart_victim" and data["decided_by"]["kind"] == "smart_victim"
    assert store[len(store) - 1].decided_by.kind == "smart_victim" and len(store) == len(data["frames"])
    assert CATALOGUES["zh"]["smart_victim.name"] == "聪明的牺牲者"


@NEEDS_MODEL[0]
@NEEDS_MODEL[1]
def test_ones_own_scheduler_runs_on_the_real_model_too(tmp_path):
    trace = tmp_path / "real.json"
    assert main(["run", SMART_PRESET, "--runner", "model", "--scheduler", SMART, "--json", str(trace)]) == 0
    store, data = read_trace(trace.read_bytes())
    assert (data["runner"], data["scheduler"]) == ("model", "smart_victim")
    assert all(r["output_text"] for r in data["requests"]) and store[len(store) - 1].decided_by.kind == "smart_victim"


def test_a_trace_of_a_kind_this_process_has_not_loaded_says_so(tmp_path):
    trace = tmp_path / "mine.json"
    assert main(["run", SMART_PRESET, "--scheduler", SMART, "--json", str(trace)]) == 0
    del SCHEDULERS["smart_victim"]  # as in the app, which never loaded the file
    with pytest.raises(ValueError, match="'smart_victim' decided this trace, a scheduler this app does not have"):
        read_trace(trace.read_bytes())
    with pytest.raises(LabError) as refused:  # what the app's "Open a trace" says, in either language
        open_trace(trace.read_bytes(), "mine.json")
    assert in_lang("en", refused.value.message).startswith("mine.json cannot be opened here: scheduler: 'smart_victim'")
    assert "本应用没有这个调度器" in in_lang("zh", refused.value.message)


@pytest.mark.parametrize("body, spec, words", [
    ("", "nowhere.py:X", "nowhere.py: no such file"),
    ("", "{path}", "name a scheduler class in a file as path/to/mine.py:MyScheduler"),
    ("class Other(Scheduler):\n    pass\n", "{path}:Mine", "has no Mine; the classes it defines: Other"),
    ("Mine = 3\n", "{path}:Mine", "Mine is a int, not a scheduler class"),
    ("class Mine(Scheduler):\n    pass\n", "{path}:Mine", "Mine declares no `info` of its own"),
    ("class Mine(Scheduler):\n    info = Scheduler.info\n", "{path}:Mine", "which a scheduler of this app has already"),
    ("class Mine(Scheduler):\n    info = Scheduler.info.derive('My Kind')\n", "{path}:Mine", "a kind id is lower-case"),
    ("class Mine:\n    info = Scheduler.info.derive('mine')\n    def add(self, seq):\n        pass\n", "{path}:Mine",
     "Mine is not a scheduler: it lacks pool, waiting_seqs, running_seqs, abort, schedule"),
])
def test_a_file_that_is_not_a_scheduler_says_what_is_wrong(tmp_path, body, spec, words):
    path = own_file(tmp_path, body)
    with pytest.raises(LearnerError, match=words.replace("(", r"\(")):
        load(spec.format(path=path))
    assert set(SCHEDULERS) == {"article", "vllm", "sglang", "vllm_v0"}


def test_an_exception_in_ones_own_code_shows_its_frames_only(tmp_path):
    path = own_file(tmp_path, "class Mine(Scheduler):\n    info = Scheduler.info.derive('mine')\n\n"
                              "    def choose_victim(self, requester):\n        return self.pick()\n\n"
                              "    def pick(self):\n        return 1 / 0\n")
    for command in (["run", SMART_PRESET, "--scheduler", f"{path}:Mine"], ["check", f"{path}:Mine"]):
        done = subprocess.run([sys.executable, "-m", "engine", *command], capture_output=True, text=True, cwd=ROOT)
        shown = done.stderr if command[0] == "run" else done.stdout
        assert done.returncode == (3 if command[0] == "run" else 1), done.stderr
        assert "Traceback (your code only):" in shown and "ZeroDivisionError: division by zero" in shown
        assert f'File "{path}", line 7, in choose_victim' in shown and f'File "{path}", line 10, in pick' in shown
        assert "engine/" not in shown and "scheduler/" not in shown, shown  # none of the app's frames
    broken = own_file(tmp_path, "class Mine(Scheduler:\n", "syntax.py")
    done = subprocess.run([sys.executable, "-m", "engine", "check", f"{broken}:Mine"], capture_output=True,
                          text=True, cwd=ROOT)
    assert done.returncode == 3 and f'File "{broken}", line 3' in done.stderr and "SyntaxError" in done.stderr
    assert "importlib" not in done.stderr


def test_the_starters_are_short_and_documented():
    readme, guide = (ROOT / "README.md").read_text(), (ROOT / "docs/schedulers.md").read_text()
    for starter in ("smart_victim.py", "double_free.py"):
        assert len((ROOT / "starters" / starter).read_text().splitlines()) < 40
        assert f"starters/{starter}" in readme and f"starters/{starter}" in guide
    assert "python -m engine check" in readme and 'derive("' in guide
