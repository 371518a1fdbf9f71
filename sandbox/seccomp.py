"""The sandbox's seccomp filters, made with libseccomp (PyPI `pyseccomp` over Debian's libseccomp2: libseccomp
resolves each name to this machine's syscall number, adds the architecture check that refuses the 32-bit and x32
entry points, and orders the rules; a hand-written BPF program would have to get all of that right itself).

Two filters stack. `jail_filter`, made by the server and handed to bubblewrap (`--seccomp FD`), binds the worker
from its first instruction: no new process (fork, vfork, clone without CLONE_THREAD; clone3, whose flags a filter
cannot read, answers ENOSYS so that glibc falls back to clone), no socket but AF_UNIX, no ptrace, mounts,
namespaces, keyrings, bpf, perf events, io_uring, module loading, kexec or reboot. A forbidden call kills the
worker (SIGSYS), which the server reports as a forbidden act. bubblewrap must still exec the interpreter under it,
so `exec_filter`, which the worker loads itself (sandbox/seccomp_load.py) once its own modules are imported and
before the learner's code is read, refuses execve and execveat from then on."""

from __future__ import annotations

import errno

import pyseccomp as sc

CLONE_THREAD = 0x00010000
AF_UNIX = 1
FORBIDDEN = ("fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "pivot_root",
             "chroot", "unshare", "setns", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
             "io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load", "reboot",
             "init_module", "finit_module", "delete_module", "swapon", "swapoff", "acct", "quotactl", "syslog",
             "userfaultfd", "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm", "settimeofday",
             "clock_settime", "clock_adjtime", "adjtimex", "mknod", "mknodat", "fsopen", "fsmount", "fsconfig",
             "move_mount", "open_tree", "fspick", "mount_setattr", "personality", "lookup_dcookie")


def jail_filter() -> sc.SyscallFilter:
    """The filter bubblewrap installs before it runs the worker."""
    f = sc.SyscallFilter(sc.ALLOW)
    kill = sc.KILL_PROCESS
    for name in FORBIDDEN:
        f.add_rule(kill, name)
    f.add_rule(kill, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_THREAD, 0))  # a process, not a thread
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    for call in ("socket", "socketpair"):
        f.add_rule(kill, call, sc.Arg(0, sc.NE, AF_UNIX))
    return f


def exec_filter() -> sc.SyscallFilter:
    """The filter the worker adds to itself before it reads the learner's code."""
    f = sc.SyscallFilter(sc.ALLOW)
    for name in ("execve", "execveat"):
        f.add_rule(sc.KILL_PROCESS, name)
    return f
