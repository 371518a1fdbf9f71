"""The lockstep stages (player/lockstep.js) in headless Chromium, offline (the export's page: no server), on preset
08's chat workload under four configs. Figures, each against one stage player alone in the same run:
- Play at 20 steps/s for a few seconds: steps shown per second, and the page's animation frames per second
  (requestAnimationFrame callbacks: how smoothly it still paints);
- the browser's CPU time per step shown while playing (every Chromium process, read from /proc): what a step costs
  however busy the machine is, and so the rate one free core could keep up;
- drawing one step: every stage's show() for a step, synchronous and to the next paint (p50/p95), over the run;
- building the lab's stages, in the server (viz.html_export.lockstep_message, then JSON; CPU time of this process)
  and in the browser (JSON.parse and mounting the stages), for the longest named comparison (the generated workload
  under block sizes 4, 16 and 64) and four configs on that workload;
- with --lab: the policy lab itself (the app on the fake model), from the click on "Show the stages" of that
  longest comparison to its stages drawn (the server's build, the message's way and the browser's mount).
Each is measured ROUNDS times, the page sizes in turn, and the best round kept: on a shared machine the others'
load only ever slows a round down.
With --before REV, the same pages are drawn by REV's player/ too (REV's tree, bench/before.py), in the same rounds,
interleaved: before and after under the same load; and the stages are built by REV's viz/frame_payload.py too.
Run: python -m bench.bench_lockstep [--before REV] [--build-only | --lab] [--size WIDTHxHEIGHT]
"""

import json
import os
import sys
import tempfile
import time
import types
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path

from bench import before as before_rev
from bench.browser import chromium
from bench.process_stats import child_pids, cpu_seconds
from bench.stats import p50, p95
from engine.analysis.compare import GENERATED_CONFIG, Variant, compare, generated_workload, variants_for
from engine.inputs.scenario import SCENARIOS_DIR, load_scenario
from i18n import text
from player.assets import PLAYER_FILES, WIRE_SLOT, lockstep_sources
from tools.app_server import ROOT, app_server
from ui.lockstep import LAST_STEP
from viz import html_export
from viz.frame_payload import WIRE
from viz.html_export import animation_html

LONGEST = "block size 4 vs 16 vs 64"  # the named comparison with the most frames (2,546 on the generated workload)
PLAY_S = 6
ROUNDS = 3
SPEED = 20
PLAY_JS = """async ([seconds, speed, lockstep]) => {
  const root = document.querySelector(lockstep ? '[data-testid=lockstep]' : '[data-testid=stage-player]');
  const speedBox = root.querySelector(lockstep ? '.sp-ls-speed' : '.sp-speed');
  speedBox.value = String(speed);
  const step = () => Number(lockstep ? root.dataset.step : root.dataset.frame);
  let paints = 0, counting = true;
  const count = () => { paints += 1; if (counting) requestAnimationFrame(count); };
  requestAnimationFrame(count);
  const first = step(), start = performance.now();
  root.querySelector('[data-action=play]').click();
  await new Promise(resolve => setTimeout(resolve, seconds * 1000));
  const elapsed = (performance.now() - start) / 1000, steps = step() - first;
  counting = false;
  root.querySelector('[data-action=play]').click();
  return {steps_per_s: steps / elapsed, paints_per_s: paints / elapsed};
}"""
MOUNT_JS = """(data) => {
  const element = document.getElementById('stages'), start = performance.now();
  element.innerHTML = '';
  SchedlabLockstep.mountStatic(element, JSON.parse(data));
  element.getBoundingClientRect();
  return performance.now() - start;
}"""
DRAW_JS = """async (lockstep) => {
  const root = document.querySelector(lockstep ? '[data-testid=lockstep]' : '[data-testid=stage-player]');
  const target = root.player || window.lockstep;
  const last = lockstep ? target.last : Number(root.dataset.last), sync = [], painted = [];
  for (let k = 1; k <= last; k++) {
    const t = performance.now();
    target.show(k);
    root.getBoundingClientRect();
    sync.push(performance.now() - t);
    await new Promise(resolve => requestAnimationFrame(() => setTimeout(resolve, 0)));
    painted.push(performance.now() - t);
  }
  return {sync, painted};
}"""


def four_variants(base) -> list[Variant]:
    return [Variant("tail", replace(base, preemption_policy="tail")),
            Variant("smart", replace(base, preemption_policy="smart")),
            Variant("decode-first", replace(base, prefill_first=False)),
            Variant("chunked", replace(base, chunked_prefill=True))]


def four_runs():
    spec = load_scenario(SCENARIOS_DIR / "08_chat_poisson.toml").spec
    runs = compare(four_variants(spec.config), spec.workload, seed=spec.seed, cost=spec.cost)
    return [(run.label, run.frames) for run in runs]


def payload_at(tree: Path):
    """viz/frame_payload.py of another version's tree, as a module."""
    module = types.ModuleType(f"frame_payload_at_{tree.name}")
    exec((tree / "viz" / "frame_payload.py").read_text(), module.__dict__)
    return module


def build_figures(browser, before: tuple[str, Path] | None):
    """CPU time to build the stages' message and its JSON here, and to mount them in the browser."""
    comparisons = {"the longest named comparison, block size 4 vs 16 vs 64 (generated workload)":
                   variants_for(LONGEST, GENERATED_CONFIG, "en"),
                   "4 configs on the generated workload": four_variants(GENERATED_CONFIG)}
    versions = [(f"{before[0]}'s viz/frame_payload.py", payload_at(before[1]))] if before else []
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.set_content("<section id='stages'></section>")
    page.add_script_tag(content=lockstep_sources()[0])
    page.add_style_tag(content=lockstep_sources()[1])
    print("\nBuilding the lab's stages (CPU time of the server's build; the browser's parse and mount, best of 2):")
    for title, variants in comparisons.items():
        runs = [(run.label, run.frames) for run in compare(variants, generated_workload())]
        frames = sum(min(len(f), LAST_STEP + 1) for _, f in runs)
        print(f"  {title}: {len(runs)} stages, {frames:,} frames")
        for name, module in versions + [("this tree", None)]:
            with swapped_payload(module):
                start = time.process_time()
                data = json.dumps(html_export.lockstep_message(runs, lang="en", last_step=LAST_STEP))
                spent = time.process_time() - start
            mount = min(page.evaluate(MOUNT_JS, data) for _ in range(2))
            print(f"    {name:36} server {spent:5.2f} s ({len(data) / 1e6:.1f} MB of JSON); browser "
                  f"{mount / 1000:4.2f} s")
    page.close()


def lab_seconds(browser, url: str) -> float:
    """From the click on "Show the stages" of the longest named comparison to every stage drawn, in the lab."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{url}/Policy_lab?lang=en")
    boxes = page.locator("[data-testid=stSelectbox]")
    for box, option in ((boxes.first, text("en", "lab.generated")), (boxes.nth(1), LONGEST)):
        box.click()
        page.get_by_role("option", name=option).click()
        page.wait_for_timeout(1500)  # the page reruns
    page.get_by_role("button", name=text("en", "lab.run")).click()
    show = page.get_by_role("button", name=text("en", "lab.lockstep_show", frames="")[:15])
    show.wait_for(timeout=180_000)
    start = time.perf_counter()
    show.click()
    page.wait_for_function("() => document.querySelectorAll('[data-testid=lockstep] [data-frame=\"0\"]').length === 3",
                           timeout=180_000)
    page.evaluate("() => new Promise(resolve => requestAnimationFrame(() => setTimeout(resolve, 0)))")  # painted
    spent = time.perf_counter() - start
    page.close()
    return spent


def lab_figures(browser, before: tuple[str, Path] | None):
    """lab_seconds on this tree's app and, given `before` (a revision and its tree), on that one's, in two rounds
    alternating."""
    trees = {**dict([before] if before else []), before_rev.THIS_TREE: ROOT}
    print("\nThe lab's stages of the longest named comparison, from the click to every stage drawn (1280x720):")
    for _, name, root in before_rev.rounds(trees, 2):
        with app_server("fake", root=root) as (url, _):
            print(f"  {name:12} {lab_seconds(browser, url):5.2f} s")


@contextmanager
def swapped_payload(module):
    """viz.html_export building its messages with `module`'s frame payload (None: its own)."""
    if module is None:
        yield
        return
    own = html_export.EMPTY_VIEW, html_export.encode, html_export.player_views
    html_export.EMPTY_VIEW, html_export.encode, html_export.player_views = \
        module.EMPTY_VIEW, module.encode, module.player_views
    try:
        yield
    finally:
        html_export.EMPTY_VIEW, html_export.encode, html_export.player_views = own


def sources_at(tree: Path) -> tuple[str, str]:
    """lockstep_sources() of another version's tree (its player files of PLAYER_FILES: one, player.js, before the
    player was split by job)."""
    def show(name: str) -> str:
        return (tree / "player" / name).read_text()

    player = "\n".join(show(name) for name in PLAYER_FILES if (tree / "player" / name).is_file())
    return (player.replace(WIRE_SLOT, json.dumps(WIRE)) + "\n" + show("lockstep.js"),
            show("player.css") + "\n" + show("lockstep.css"))


def pages_of(runs, folder: Path, before: tuple[str, Path] | None) -> dict:
    """(name, the page's path) for 1, 2 and 4 stages, drawn by this tree's player/ and, given `before`, by that
    revision's: the same page with its scripts and styles swapped."""
    pages, js, css = {}, *lockstep_sources()
    old = sources_at(before[1]) if before else None
    for n in (1, 2, 4):
        page = animation_html(runs[:n], f"{n} stages", lang="en")
        name = "one player alone" if n == 1 else f"{n} stages in lockstep"
        for version, (new_js, new_css) in ([("before", old)] if old else []) + [("now" if old else "", (js, css))]:
            path = folder / f"stages_{n}_{version}.html"
            path.write_text(page.replace(js, new_js).replace(css, new_css))
            pages[(f"{name}, {version}" if version else name, n)] = path
    return pages


def browser_cpu_seconds() -> float:
    """CPU time so far of every process under this one: Playwright's driver and the browser it started."""
    total, pending = 0.0, child_pids(os.getpid())
    while pending:
        pid = pending.pop()
        try:
            total += cpu_seconds(pid)
            pending += child_pids(pid)
        except (FileNotFoundError, ProcessLookupError):  # a process that ended meanwhile
            pass
    return total


def measure(page, path: Path, lockstep: bool) -> dict:
    page.goto(path.as_uri())
    if lockstep:  # the page keeps no handle on its lockstep: mount it again where the bench can reach it
        page.evaluate("() => { const element = document.getElementById('stages'); element.innerHTML = '';"
                      " window.lockstep = SchedlabLockstep.mountStatic(element, {runs: RUNS, ...MARKS}); }")
    cpu = browser_cpu_seconds()
    play = page.evaluate(PLAY_JS, [PLAY_S, SPEED, lockstep])
    play["cpu_ms_per_step"] = (browser_cpu_seconds() - cpu) * 1000 / (play["steps_per_s"] * PLAY_S)
    draw = page.evaluate(DRAW_JS, lockstep)
    return play | {name: (p50(values), p95(values))
                   for name, values in draw.items()}


def main():
    rev = sys.argv[sys.argv.index("--before") + 1] if "--before" in sys.argv else None
    print("load average at the start " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    with ExitStack() as stack:
        folder, browser = stack.enter_context(tempfile.TemporaryDirectory()), stack.enter_context(chromium())
        before = (rev, stack.enter_context(before_rev.tree_at(rev))) if rev else None
        if "--lab" in sys.argv:
            lab_figures(browser, before)
            return
        build_figures(browser, before)
        if "--build-only" in sys.argv:
            return
        runs = four_runs()
        print(f"\npreset 08 under 4 configs: {[len(frames) - 1 for _, frames in runs]} steps")
        pages = pages_of(runs, Path(folder), before)
        sizes = [tuple(map(int, sys.argv[sys.argv.index("--size") + 1].split("x")))] if "--size" in sys.argv \
            else [(1280, 720), (1600, 1000)]
        for width, height in sizes:
            page = browser.new_page(viewport={"width": width, "height": height})
            print(f"\n{width}x{height}, Play at {SPEED} steps/s for {PLAY_S} s, then every step drawn once "
                  f"(best of {ROUNDS} rounds):")
            rounds = {key: [] for key in pages}
            for _ in range(ROUNDS):
                for (name, n), path in pages.items():
                    rounds[name, n].append(measure(page, path, lockstep=n > 1))
            base = None
            for name, n in pages:
                figures = min(rounds[name, n], key=lambda r: r["sync"][0]) | {
                    rate: max(r[rate] for r in rounds[name, n]) for rate in ("steps_per_s", "paints_per_s")} | {
                    "cpu_ms_per_step": min(r["cpu_ms_per_step"] for r in rounds[name, n])}
                base = base or figures
                name = f"{name} (baseline)" if figures is base else name
                print(f"  {name:36} {figures['steps_per_s']:5.1f} steps/s, {figures['paints_per_s']:5.1f} "
                      f"paints/s, browser CPU {figures['cpu_ms_per_step']:5.1f} ms per step "
                      f"({figures['cpu_ms_per_step'] / base['cpu_ms_per_step']:.1f}x; one free core keeps "
                      f"{1000 / figures['cpu_ms_per_step']:.0f} steps/s); a step drawn in "
                      f"{figures['sync'][0]:5.1f} ms p50, {figures['sync'][1]:5.1f} ms p95 (to the next paint "
                      f"{figures['painted'][0]:5.1f} / {figures['painted'][1]:5.1f} ms), "
                      f"{figures['sync'][0] / base['sync'][0]:.1f}x the baseline's p50")
            page.close()


if __name__ == "__main__":
    main()
