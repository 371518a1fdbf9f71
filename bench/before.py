"""`--before REV` for a bench: the same measurement on REV's tree and on this one, in the same run.

`tree_at(rev)` extracts REV's tracked files (`git archive`, nothing in the repository's worktrees or refs changes)
into a temporary folder and puts this tree's bench/ in place of REV's: what measures is this tree's code, what is
measured (the scheduler, the app) is REV's. `rounds()` orders the sides before, after, after, before, ...: each side
as often first as second, so a drift of the machine's load falls on both alike. `run_in(tree, ...)` runs a bench
module there (REV's packages first on sys.path) and returns its last line of output, for a side measured in a
process of its own.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tools.app_server import ROOT

THIS_TREE = "this tree"


def add_argument(parser: argparse.ArgumentParser):
    parser.add_argument("--before", metavar="REV", help="also measure git revision REV's tree, rounds alternating "
                        "with this one's, and print the ratios after/before")


@contextmanager
def tree_at(rev: str) -> Iterator[Path]:
    """A folder holding REV's files with this tree's bench/; removed after the `with`."""
    commit = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True,
                            text=True)
    if commit.returncode:
        raise SystemExit(f"--before {rev}: not a git revision of {ROOT}")
    with tempfile.TemporaryDirectory(prefix=f"schedlab-{rev}-") as folder:
        archive = subprocess.run(["git", "archive", commit.stdout.strip()], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
        shutil.rmtree(Path(folder) / "bench", ignore_errors=True)
        shutil.copytree(ROOT / "bench", Path(folder) / "bench", ignore=shutil.ignore_patterns("__pycache__"))
        yield Path(folder)


def rounds(sides: dict, count: int) -> Iterator[tuple[int, str, object]]:
    """(round, name, side) for `count` rounds over `sides` ({name: side}), the order reversed every other round."""
    names = list(sides)
    for number in range(count):
        for name in names if number % 2 == 0 else reversed(names):
            yield number, name, sides[name]


def run_in(tree: Path, module: str, *args: str) -> str:
    """`python -m bench.<module> args` with `tree` as the working folder; its last line of standard output."""
    done = subprocess.run([sys.executable, "-m", f"bench.{module}", *args], cwd=tree, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"bench.{module} in {tree} failed: {done.stderr[-2000:]}")
    return done.stdout.strip().splitlines()[-1]


def ratio_line(label: str, after: float, before: float, rev: str, noise: float = 0.15,
               higher_is_better: bool = False) -> str:
    """'label: this tree A / REV B = R (within noise | better | WORSE)'; within noise: within ±`noise` of 1."""
    r = after / before if before else float("nan")
    verdict = "within noise" if abs(r - 1) <= noise else ("better" if (r > 1) == higher_is_better else "WORSE")
    return f"{label}: {THIS_TREE} {after:.3g} / {rev} {before:.3g} = {r:.2f}x ({verdict}, noise ±{noise:.0%})"
