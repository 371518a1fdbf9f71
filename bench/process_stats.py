"""Memory and CPU time of a process and its children (the model process a server starts), read from /proc."""

import os
from pathlib import Path


def child_pids(pid: int) -> list[int]:
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children += [int(c) for c in (task / "children").read_text().split()]
    return children


def _status_mb(pid: int, field: str) -> float:
    """A memory figure of /proc/PID/status (in kB there) in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mb(pid: int) -> float:
    """Peak resident memory (VmHWM) of one process."""
    return _status_mb(pid, "VmHWM")


def rss_mb(pid: int) -> float:
    """Resident memory (VmRSS) of one process now."""
    return _status_mb(pid, "VmRSS")


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of one process so far, all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def family_cpu_seconds(pid: int) -> float:
    """CPU time of `pid` and of its children now alive."""
    return cpu_seconds(pid) + sum(cpu_seconds(child) for child in child_pids(pid))


def family_peak_rss(pid: int) -> tuple[float, float]:
    """Peak RSS in MB of `pid`, and the sum of its children's (shared memory pages count in each)."""
    return peak_rss_mb(pid), sum(peak_rss_mb(child) for child in child_pids(pid))
