"""The jail a worker runs in: bubblewrap (Debian `bubblewrap`) in new user, pid, network, ipc, uts and cgroup
namespaces, with all capabilities dropped, as nobody; its own empty loopback; a fresh /dev and a small tmpfs /tmp;
read-only the system's /usr, the interpreter, the app's packages the worker needs (scheduler/, engine/, i18n/, the
fake runner, sandbox/) and the few libraries they import, and nothing else: no /home, /root, /etc, no session/ or
ui/, no secrets, no class store. The seccomp filter of sandbox/seccomp.py is installed before the interpreter runs;
rlimits (prlimit) bound CPU seconds, address space, file size and open files, and no core is dumped; the worker
runs at the lowest priority (SCHED_IDLE, nice 19, and so does its autogroup), so a class's stepping keeps the CPU
first."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from sandbox.limits import Limits
from sandbox.seccomp import jail_filter

ROOT = Path(__file__).resolve().parents[1]
APP = ("scheduler", "engine", "i18n", "sandbox", "runner/__init__.py", "runner/fake.py", "runner/kv_pools.py",
       "runner/step_thread.py")
# What the worker's modules import beside the stdlib, as site-packages holds them (numpy bundles its libraries)
LIBRARIES = ("numpy", "numpy.libs", "xxhash")
BOOT = "import sys; sys.path[:0] = ['/app', '/site']; from sandbox.worker import main; main()"
TMP_BYTES = 16 * 2**20
NICE = 19  # the lowest priority: the worker's, and its autogroup's (see `start`)
# Whether workers yield the CPU to everything else (SCHED_IDLE, NICE): on a server, always; the test suite runs them
# as its peers (tests/helpers/sandboxed.py), or a machine busy with other tests would starve them past their deadlines
YIELDING = True
NOBODY = 65534


def available() -> bool:
    """Whether this machine can jail a worker: bubblewrap and prlimit installed (`make install` installs them)."""
    return all(shutil.which(program) for program in ("bwrap", "prlimit", "nice"))


@cache
def filter_program(make) -> bytes:
    """The seccomp filter `make` (sandbox/seccomp.py) makes, as a BPF program."""
    with tempfile.TemporaryFile() as program:
        make().export_bpf(program)
        program.seek(0)
        return program.read()


def library_paths() -> list[Path]:
    """The site-packages entries of LIBRARIES: a package's folder, a module's file, numpy's bundled libraries."""
    site = Path(importlib.util.find_spec("numpy").origin).parents[1]  # type: ignore[union-attr, arg-type]
    return [site / name for name in LIBRARIES if (site / name).exists()]


def command(limits: Limits, seccomp_fd: int) -> list[str]:
    """The command line that starts a worker: prlimit, nice, bubblewrap, the interpreter."""
    python = Path(os.path.realpath(sys.executable))
    prefix = Path(sys.base_prefix)
    binds = ["--ro-bind", "/usr", "/usr"]
    if not prefix.is_relative_to("/usr"):
        binds += ["--ro-bind", str(prefix), str(prefix)]
    for part in APP:
        binds += ["--ro-bind", str(ROOT / part), f"/app/{part}"]
    for path in library_paths():
        binds += ["--ro-bind", str(path), f"/site/{path.name}"]
    memory = limits.memory_mb * 2**20
    return ["prlimit", f"--cpu={limits.cpu_s}:{limits.cpu_s + 1}", f"--as={memory}:{memory}",
            f"--fsize={TMP_BYTES}:{TMP_BYTES}", "--nofile=64:64", "--core=0:0", "--",
            *(["chrt", "--idle", "0", "nice", "-n", str(NICE)] if YIELDING else []),
            "bwrap", "--unshare-all", "--die-with-parent", "--clearenv", "--cap-drop", "ALL",
            "--uid", str(NOBODY), "--gid", str(NOBODY), "--hostname", "sandbox",
            *binds, "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
            "--dev", "/dev", "--size", str(TMP_BYTES), "--tmpfs", "/tmp", "--chdir", "/tmp",
            "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONHASHSEED", "0",
            "--setenv", "OPENBLAS_NUM_THREADS", "1", "--setenv", "PYTHONIOENCODING", "utf-8",
            "--seccomp", str(seccomp_fd),
            str(python), "-I", "-S", "-B", "-c", BOOT]


def start(limits: Limits) -> subprocess.Popen:
    """A worker started in the jail, in a session of its own (no terminal: its fds are pipes, and what it could do
    with one, `--new-session` would guard), its stdin, stdout and stderr pipes to us. A new session is a new
    scheduling autogroup, which the kernel weighs against the server's whole session as an equal, whatever the
    worker's nice: the autogroup gets NICE too, so a class's stepping keeps the CPU first."""
    read, write = os.pipe()
    try:
        os.write(write, filter_program(jail_filter))  # a few hundred bytes: within the pipe's buffer
        os.close(write)
        process = subprocess.Popen(command(limits, read), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, pass_fds=(read,), start_new_session=True,
                                   env={"PATH": "/usr/bin:/bin"})
    finally:
        os.close(read)
    with contextlib.suppress(OSError):  # no autogroups on this kernel, or the worker has ended already
        Path(f"/proc/{process.pid}/autogroup").write_text(str(NICE if YIELDING else 0))
    return process
