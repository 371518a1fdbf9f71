"""Install a seccomp BPF program (made on the server by sandbox/seccomp.py) on the calling process, with the stdlib
only: libseccomp's Python binding finds its library by running ldconfig, a process the jail does not allow."""

from __future__ import annotations

import ctypes

PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
INSTRUCTION = 8  # bytes of one `struct sock_filter`


class _Program(ctypes.Structure):  # struct sock_fprog
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def install(program: bytes):
    """Add the filter `program` to this process (no_new_privs is set: bubblewrap set it); OSError if refused."""
    libc = ctypes.CDLL(None, use_errno=True)
    fprog = _Program(len(program) // INSTRUCTION, program)
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp filter refused")
