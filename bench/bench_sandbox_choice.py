"""The sandbox for a learner's scheduler chosen by measurement (issue 44 point 4): bubblewrap (an OS jail) against
Pyodide under node (CPython compiled to WebAssembly, from the npm registry), side by side on this machine, in one run.

Both run the same program (RUN): the article's scheduler on a 50-request workload with the fake model (prompts of
16..200 tokens, half sharing a 64-token prefix, 16..96 outputs each), stepped to its end through the engine, as a
sandbox's worker does.
- bubblewrap: the sandbox's own jail (sandbox/jail.py: namespaces, read-only binds of the interpreter and of the
  app's files its worker needs, jail.APP, its seccomp filters, rlimits, niced) around this interpreter, which does
  what the sandbox's worker does before a learner's code (its path, the filter that refuses exec) and then the run.
- Pyodide: node runs bench/bench_sandbox_pyodide.mjs, which starts Pyodide from the npm package (installed by this
  bench into .bench-cache/pyodide with `npm install --prefix`; skipped, saying so, where npm cannot reach the
  registry), writes the same files (jail.APP) into its in-memory file system (nothing of the host's is mounted) and
  runs the program. The npm package ships neither numpy nor xxhash (Pyodide's own wheels of them come from its
  release, which only the registry's files reach here): bench/pyodide_shims/ stands for them (a pure-Python XXH64,
  digest for digest; numpy imported, never called), so the run decides exactly as the native one (digest checked).
- Pyodide under node's permission model (`--experimental-permission`, reading only Pyodide's folder and the driver):
  what would close node's own doors (files, child processes) from inside node.
- control: this interpreter, no jail, with the same shims: the share of the pure-Python XXH64 in Pyodide's step.

Figures per candidate, the median of --rounds runs (the candidates in turn, the order reversed every other round): cold
start (the process started until the program's first step is read back), the run's time per step (timed in the program),
the CPU seconds of the whole run (start, import and run: the interpreter's own process_time() in the jail and the
control, node's from wait4), peak RSS (the largest process of its tree, from wait4). Every candidate runs at the jail's
niceness (sandbox/jail.py NICE), so that a loaded machine slows them alike. Then the hostile acts (PROBES), each tried
in each candidate, and what held it: refused (and by what), done but only inside (no effect on the host), stopped by a
limit, or ESCAPED (seen on the host: a file written, a connection accepted, the host's /etc/passwd read). Then what a
browser would download to run Pyodide in the learner's page, and a verdict line.

Run: python -m bench.bench_sandbox_choice [--rounds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from bench.stats import p50
from sandbox import jail
from sandbox.limits import Limits
from sandbox.seccomp import exec_filter, jail_filter

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".bench-cache"
PYODIDE_VERSION = "314.0.8"
PYODIDE_DIR = CACHE / "pyodide" / "node_modules" / "pyodide"
DRIVER = Path(__file__).with_name("bench_sandbox_pyodide.mjs")
SHIMS = Path(__file__).with_name("pyodide_shims")
BROWSER_FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
FIRST_STEP = "first step done"
RUN_DEADLINE_S, PROBE_DEADLINE_S, OUTPUT_CAP = 120.0, 30.0, 1 << 20
JAIL_LIMITS = Limits(cpu_s=3, memory_mb=1024)  # the jail's rlimits (CPU seconds: SIGXCPU, then SIGKILL a second on)
JAIL_BOOT = ("import sys; sys.path[:0] = ['/app', '/site']; from sandbox.seccomp_load import install; "
             f"install(bytes.fromhex({jail.filter_program(exec_filter).hex()!r})); exec(sys.stdin.read())")
JAIL, WASM, WASM_CLOSED, CONTROL = ("bubblewrap", "Pyodide under node", "Pyodide, node's permission model",
                                    "control: CPython, no jail, the shims")
NAME_WIDTH = 38
NICE = ("nice", "-n", str(jail.NICE))  # every candidate at the jail's niceness: their times compare under load
ESCAPED_FILE = CACHE / "escaped"  # a probe that reaches the host's files writes it
SIGNALS = {signal.SIGXCPU: "CPU limit (SIGXCPU)", signal.SIGKILL: "SIGKILL", signal.SIGSYS: "seccomp (SIGSYS)",
           signal.SIGSEGV: "SIGSEGV"}

RUN = f"""
import hashlib, json, random, time
started = time.perf_counter()
from engine.inputs.workload import random_workload
from engine.run.engine import Engine
from engine.run.recipe import RunSpec
from engine.traces.trace import request_summaries
from scheduler import Config

rng = random.Random(0)
workload = random_workload(50, seed=0, prompt_lengths=[rng.randint(16, 200) for _ in range(50)],
                           max_tokens=[rng.randint(16, 96) for _ in range(50)], shared_prefix_len=64,
                           shared_fraction=0.5, ignore_eos=True)
engine = Engine(RunSpec(Config(max_num_seqs=8, num_kvcache_blocks=256, max_model_len=512), tuple(workload),
                        scheduler="article"))
imported = time.perf_counter()
engine.step()
print({FIRST_STEP!r}, flush=True)
first = time.perf_counter()
while not engine.is_finished:
    engine.step()
summaries = json.dumps(request_summaries(engine), sort_keys=True, default=repr).encode()
print(json.dumps({{"import_s": imported - started, "steps": engine.step_count, "cpu_s": time.process_time(),
                  "step_s": (time.perf_counter() - first) / (engine.step_count - 1),
                  "digest": hashlib.sha256(summaries).hexdigest()[:12]}}))
"""


@dataclass
class Ran:
    """One process's run: its output lines, when the first step was read back, its peak RSS, and how it ended."""
    lines: list[str] = field(default_factory=list)
    errors: str = ""
    first_step_s: float | None = None
    wall_s: float = 0.0
    peak_rss_mb: float = 0.0
    cpu_s: float = 0.0  # user + system of the whole process tree (wait4; see Candidate.cpu_inside)
    stopped: str = ""  # "" (it ended by itself), or what stopped it: the deadline, the output cap, a signal
    output_bytes: int = 0

    def result(self) -> dict:
        return json.loads(self.lines[-1])


@dataclass
class Candidate:
    name: str
    command: object  # () -> (its command line, the descriptors it inherits), made anew for each process
    stdin: object  # program -> the bytes the process reads on its standard input
    env: dict = field(default_factory=dict)
    # Whose CPU seconds the program's own process_time() tells: bubblewrap's wait4 never sees the interpreter's (the
    # jail's pid 1 is not reaped by the bubblewrap we wait for), and Pyodide's process_time() is wall time
    cpu_inside: bool = False

    def run(self, program: str, deadline_s: float) -> Ran:
        return run_process(*self.command(), self.stdin(program), deadline_s, self.env)


def run_process(command: list[str], fds: tuple[int, ...], stdin: bytes, deadline_s: float, env: dict) -> Ran:
    """Start `command` (a session of its own, inheriting `fds`, closed here then), feed it `stdin`, read its output
    (at most OUTPUT_CAP bytes), kill its group at the deadline or the cap; the peak RSS of its tree from wait4."""
    ran, start = Ran(), time.perf_counter()
    try:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   start_new_session=True, pass_fds=fds, env={**os.environ, **env})
    finally:
        for fd in fds:
            os.close(fd)

    def feed():
        try:
            process.stdin.write(stdin)
            process.stdin.close()
        except OSError:  # it ended (or was stopped) before reading everything
            pass

    def read_out():
        for line in process.stdout:
            ran.output_bytes += len(line)
            if ran.output_bytes > OUTPUT_CAP:
                ran.stopped = ran.stopped or f"output cap {OUTPUT_CAP >> 20} MB"
                stop(process)
                return
            text = line.decode(errors="replace").rstrip("\n")
            if text == FIRST_STEP and ran.first_step_s is None:
                ran.first_step_s = time.perf_counter() - start
            ran.lines.append(text)

    def read_errors():
        ran.errors = process.stderr.read(OUTPUT_CAP).decode(errors="replace")

    threads = [threading.Thread(target=work, daemon=True) for work in (feed, read_out, read_errors)]
    for thread in threads:
        thread.start()
    timer = threading.Timer(deadline_s, lambda: (setattr(ran, "stopped", ran.stopped or "the bench's deadline"),
                                                  stop(process)))
    timer.start()
    _, status, usage = os.wait4(process.pid, 0)
    timer.cancel()
    ran.wall_s = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    for thread in threads:
        thread.join(5)
    ran.peak_rss_mb, ran.cpu_s = usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
    killed = -process.returncode if process.returncode < 0 else process.returncode - 128  # bwrap's: 128 + signal
    if killed in SIGNALS and not ran.stopped:
        ran.stopped = SIGNALS[killed]
    return ran


def stop(process: subprocess.Popen):
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def in_jail() -> tuple[list[str], tuple[int, ...]]:
    """The sandbox's own jail (sandbox/jail.py: bubblewrap, its seccomp filter on a pipe, prlimit, nice) around the
    interpreter, which then does what the sandbox's worker does before a learner's code (its path, the filter that
    refuses exec) and runs the program read from standard input."""
    read, write = os.pipe()
    os.write(write, jail.filter_program(jail_filter))
    os.close(write)
    command = jail.command(JAIL_LIMITS, read)
    assert command[-2:] == ["-c", jail.BOOT], "sandbox/jail.py's command no longer ends with its boot line"
    return [*command[:-1], JAIL_BOOT], (read,)


def app_files() -> dict[str, str]:
    """What Pyodide's file system gets: the Python files the jail binds (jail.APP), and the shims, under /app."""
    paths = [path for part in jail.APP for path in ((ROOT / part).rglob("*.py") if (ROOT / part).is_dir()
                                                    else [ROOT / part])]
    files = {f"/app/{path.relative_to(ROOT)}": path.read_text() for path in sorted(paths)}
    return files | {f"/app/{path.name}": path.read_text() for path in sorted(SHIMS.glob("*.py"))}


def pyodide_ready() -> tuple[bool, str]:
    """Pyodide's npm package in .bench-cache (installed there when missing); (ready, why not)."""
    if (PYODIDE_DIR / "pyodide.mjs").exists():
        return True, ""
    if not shutil.which("npm") or not shutil.which("node"):
        return False, "node or npm is not installed"
    done = subprocess.run(["npm", "install", "--prefix", str(CACHE / "pyodide"), f"pyodide@{PYODIDE_VERSION}",
                           "--no-audit", "--no-fund"], capture_output=True, text=True, timeout=600)
    if done.returncode:
        return False, f"npm could not install pyodide@{PYODIDE_VERSION}: {done.stderr.strip()[-300:]}"
    return True, ""


def candidates() -> tuple[list[Candidate], list[str]]:
    """The candidates this machine has, and a line for each one it has not."""
    found, missing = [], []
    if shutil.which("bwrap"):
        found.append(Candidate(JAIL, in_jail, str.encode, cpu_inside=True))
    else:
        missing.append(f"{JAIL}: skipped, bwrap is not installed (Debian's bubblewrap: make install)")
    ready, why = pyodide_ready()
    if ready:
        files = app_files()
        stdin = lambda program: json.dumps({"files": files, "program": program}).encode()  # noqa: E731
        found.append(Candidate(WASM, lambda: ([*NICE, "node", str(DRIVER), str(PYODIDE_DIR)], ()), stdin))
        found.append(Candidate(WASM_CLOSED, lambda: ([*NICE, "node", "--experimental-permission", f"--allow-fs-read="
                                                      f"{PYODIDE_DIR}/*", f"--allow-fs-read={DRIVER}", str(DRIVER),
                                                      str(PYODIDE_DIR)], ()), stdin))
    else:
        missing.append(f"{WASM}: skipped, {why}")
    found.append(Candidate(CONTROL, lambda: ([*NICE, sys.executable, "-"], ()), str.encode,
                           env={"PYTHONPATH": os.pathsep.join((str(SHIMS), str(ROOT)))}, cpu_inside=True))
    return found, missing


def measure(found: list[Candidate], rounds: int) -> tuple[dict[str, list[Ran]], dict[str, str]]:
    """Each candidate's runs, and why each that could not run did not (then not tried again)."""
    runs: dict[str, list[Ran]] = {c.name: [] for c in found}
    failed: dict[str, str] = {}
    for number in range(rounds):
        for candidate in found if number % 2 == 0 else reversed(found):
            if candidate.name in failed:
                continue
            ran = candidate.run(RUN, RUN_DEADLINE_S)
            if ran.stopped or not ran.lines or ran.first_step_s is None:
                lines = ran.errors.strip().splitlines() or ["no output"]
                failed[candidate.name] = ran.stopped or next((x for x in lines if "Error" in x), lines[-1])[:100]
                runs.pop(candidate.name)
            else:
                if candidate.cpu_inside:
                    ran.cpu_s = ran.result()["cpu_s"]
                runs[candidate.name].append(ran)
    return runs, failed


def report_runs(runs: dict[str, list[Ran]], failed: dict[str, str]) -> dict[str, dict]:
    print(f"{'candidate':{NAME_WIDTH}} {'cold start':>11} {'per step':>10} {'CPU, all':>9} {'peak RSS':>9}  "
          "run digest")
    figures = {}
    for name, each in runs.items():
        results = [ran.result() for ran in each]
        figure = {"cold_s": p50(r.first_step_s for r in each), "step_ms": p50(r["step_s"] * 1e3 for r in results),
                  "rss_mb": p50(r.peak_rss_mb for r in each), "cpu_s": p50(r.cpu_s for r in each),
                  "digests": {r["digest"] for r in results},
                  "steps": results[0]["steps"]}
        figures[name] = figure
        print(f"{name:{NAME_WIDTH}} {figure['cold_s'] * 1e3:>8.0f} ms {figure['step_ms']:>7.3f} ms "
              f"{figure['cpu_s']:>7.2f} s {figure['rss_mb']:>6.0f} MB  {', '.join(sorted(figure['digests']))} "
              f"({figure['steps']} steps)")
    for name, why in failed.items():
        print(f"{name:{NAME_WIDTH}} does not run: {why}")
    digests = set().union(*(f["digests"] for f in figures.values()))
    print("    the same run everywhere: " + ("yes, one digest of every request's tokens and steps" if len(digests) == 1
                                             else f"NO, {len(digests)} digests"))
    return figures


# -- the hostile acts -------------------------------------------------------------------------------------------------
#
# Each probe's act runs in the candidate inside `try`; the program prints "done" (the act went through, wherever it
# landed) or "refused: <error>". What the host saw decides ESCAPED: `escaped(ran, probe_port)` below.

HOST_PASSWD = Path("/etc/passwd").read_text().splitlines()[0]
PROBES = {
    "read the host's /etc/passwd": "print('leak:', open('/etc/passwd').read().splitlines()[0])",
    "write a file on the host": f"import os; os.makedirs({str(CACHE)!r}, exist_ok=True); "
                                f"open({str(ESCAPED_FILE)!r}, 'w').write('x')",
    "a socket to 127.0.0.1": "import socket; socket.create_connection(('127.0.0.1', PORT), timeout=2).close()",
    "start a process (subprocess)": "import subprocess; subprocess.run(['true'], check=True)",
    "ctypes: call libc": "import ctypes; ctypes.CDLL(None).getpid()",
    "import the app's session package": "import session",
    "the JS bridge: node's child_process": "import js; js.process.getBuiltinModule('child_process')"
                                           f".execSync('touch {ESCAPED_FILE}')",
    "allocate 10 GB": "block = bytearray(10 << 30)",
    "a fork bomb": "import os\n    while True: os.fork()",
    "an infinite loop": "while True: pass",
    "50 MB of output": "print('x' * (50 << 20))",
}
PROBE = """
PORT = {port}
try:
    {act}
except BaseException as error:
    print('refused:', type(error).__name__, str(error)[:80].replace(chr(10), ' '))
else:
    print('done')
"""


class Listener:
    """A socket on 127.0.0.1 that counts the connections a probe got through to."""

    def __init__(self):
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port, self.accepted = self.socket.getsockname()[1], 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.accepted += 1
            connection.close()


def probe(candidate: Candidate, act: str, listener: Listener) -> str:
    """What held the act in `candidate`, in a few words."""
    ESCAPED_FILE.unlink(missing_ok=True)
    accepted = listener.accepted
    ran = candidate.run(PROBE.format(port=listener.port, act=act), PROBE_DEADLINE_S)
    said = next((line for line in ran.lines if line.startswith(("done", "refused:", "leak:"))), "")
    if ESCAPED_FILE.exists() or listener.accepted > accepted or said == f"leak: {HOST_PASSWD}":
        seen = ("file written" if ESCAPED_FILE.exists() else "connection accepted"
                if listener.accepted > accepted else "host's file read")
        ESCAPED_FILE.unlink(missing_ok=True)
        return f"ESCAPED: {seen}"
    if ran.stopped:
        return f"stopped, {ran.wall_s:.1f} s: {ran.stopped}"
    if said.startswith("refused:"):
        return " ".join(said.split(" ", 2)[:2])
    if said:
        return "done, inside only"
    last = (ran.errors.strip().splitlines() or ["no output"])[-1]
    return f"failed: {last[:60]}"


def report_probes(found: list[Candidate], ran: dict) -> dict[str, list[str]]:
    """Each probe in each candidate that ran (not the control: it has no jail); the escapes per candidate."""
    jailed = [c for c in found if c.name in ran and c.name != CONTROL]
    listener, escapes = Listener(), {c.name: [] for c in jailed}
    width = max(map(len, PROBES)) + 2
    print("\nhostile acts, each tried in each candidate (ESCAPED: seen on the host):")
    print(f"    {'act':{width}}" + "".join(f"{c.name:{NAME_WIDTH}}" for c in jailed))
    for name, act in PROBES.items():
        outcomes = [probe(c, act, listener) for c in jailed]
        for candidate, outcome in zip(jailed, outcomes, strict=True):
            if outcome.startswith("ESCAPED"):
                escapes[candidate.name].append(name)
        print(f"    {name:{width}}" + "".join(f"{outcome:{NAME_WIDTH}}" for outcome in outcomes))
    listener.socket.close()
    return escapes


def browser_download() -> str:
    """What a browser fetches to run Pyodide in the learner's page: the npm package's runtime files and the app's
    packages (as one zip), raw and gzip-compressed as a web server would send them."""
    sizes = {name: (PYODIDE_DIR / name).read_bytes() for name in BROWSER_FILES}
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, text in app_files().items():
            archive.writestr(path.removeprefix("/app/"), text)
    sizes["the app's packages (zip)"] = packed.getvalue()
    raw = sum(len(data) for data in sizes.values())
    zipped = sum(len(gzip.compress(data, 6)) for data in sizes.values())
    parts = ", ".join(f"{name} {len(data) / 2**20:.1f} MB" for name, data in sizes.items())
    return (f"the in-browser option downloads {raw / 2**20:.1f} MB ({zipped / 2**20:.1f} MB gzip-compressed) before "
            f"its first step: {parts}; plus Pyodide's numpy and xxhash wheels (from its release, not the npm package)")


def verdict(figures: dict[str, dict], escapes: dict[str, list[str]]) -> str:
    """The candidate that let fewer acts reach the host (then the sooner to start), and by how much each figure
    differs; Pyodide's step against the control's: WebAssembly's own cost, the shims' left out."""
    if JAIL not in figures or WASM not in figures:
        return "verdict: not measured, a candidate is missing (above)"
    jail, wasm, control = figures[JAIL], figures[WASM], figures[CONTROL]
    choice = min((JAIL, WASM), key=lambda name: (len(escapes[name]), figures[name]["cold_s"]))
    times = lambda key, other=jail: f"{wasm[key] / other[key]:.1f}x"  # noqa: E731
    return (f"verdict: {choice}. Pyodide under node against bubblewrap: cold start {times('cold_s')}, time per step "
            f"{times('step_ms')} ({times('step_ms', control)} the same code with the same shims natively), CPU for the "
            f"whole run {times('cpu_s')}, peak RSS {times('rss_mb')}; acts "
            f"seen on the host: bubblewrap {len(escapes[JAIL])}, Pyodide under node {len(escapes[WASM])} "
            f"({'; '.join(escapes[WASM]) or 'none'})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    found, missing = candidates()
    for line in missing:
        print(line)
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs; {args.rounds} runs each; the run: the "
          f"article's scheduler, 50 requests, fake model")
    runs, failed = measure(found, args.rounds)
    figures = report_runs(runs, failed)
    escapes = report_probes(found, runs)
    if PYODIDE_DIR.exists():
        print("\n" + browser_download())
    print(verdict(figures, escapes))


if __name__ == "__main__":
    main()
