"""The stage player in headless Chromium against the app on 127.0.0.1 (started and stopped here).

Figures, each with the baseline measured in the same run:
- scrub: moving the slider to a random computed frame until it is drawn (p50/p95, synchronous and to the next
  paint), at 256 and 4096 blocks; baseline: a Step past the computed frames, which waits for the server;
- Play on every preset on the fake model at the fastest speed (frames drawn per second over at most 10 s);
- Play on the real model (presets 02 and 08) against the model's own step rate (the engine's wall time per step in
  those frames);
- 20 fast Step clicks: how many new frames they gave (fake and real model);
- server CPU per frame (its /proc utime + stime) over a 200-step Play, against frames asked for one by one;
- payload: bytes per frame delta (mean, p95, max) on every preset with a 256-block pool, and per message (in
  process, the same encoder the app uses).
With --before REV [--rounds N]: only the player's own figures (scrub; Play on the numbered presets both trees hold,
BEFORE_PLAY_S each), for REV's tree (bench/before.py) and this one, each against its own server, in N rounds
alternating (default 2); the ratios this/REV of the scrub's p50 and of the Play rates.
Run: python -m bench.bench_stage [--no-model | --model-only | --payload-only | --before REV [--rounds N]]
"""

import contextlib
import json
import os
import statistics
import sys
import time
from dataclasses import replace

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench import before as before_rev
from bench.browser import chromium
from bench.process_stats import cpu_seconds
from bench.stats import p50, p95
from engine.inputs.scenario import load_scenario, preset_paths
from engine.run.engine import Engine
from player.assets import player_sources
from session.feed import Feed, Request
from session.lab import Lab, RunInputs, real_model_installed
from tools.app_server import app_server
from viz.frame_payload import EMPTY_VIEW, encode, player_views

PLAYER = "[data-testid=stage-player]"
PLAY_WINDOW_S = 10
BEFORE_PLAY_S = 3
LARGE_POOL = ("scenario=custom&requests=200&prompts=chat&max_tokens=64&arrivals=poisson&num_kvcache_blocks=4096"
              "&max_num_seqs=32&max_num_batched_tokens=2048&max_model_len=512")
SCRUB_JS = """async (n) => {
  const root = document.querySelector('[data-testid=stage-player]'), slider = root.querySelector('.sp-slider');
  const last = Number(root.dataset.last), sync = [], painted = [];
  for (let i = 0; i < n; i++) {
    const k = Math.floor(Math.random() * (last + 1)), t = performance.now();
    slider.value = String(k);
    slider.dispatchEvent(new Event('input'));
    root.getBoundingClientRect();  // layout done
    sync.push(performance.now() - t);
    await new Promise(resolve => requestAnimationFrame(() => setTimeout(resolve, 0)));  // painted
    painted.push(performance.now() - t);
  }
  return [sync, painted];
}"""
WATCH_JS = """() => {  // every frame the player shows, with when
  const root = document.querySelector('[data-testid=stage-player]');
  window.shownAt = [[Number(root.dataset.frame), performance.now()]];
  new MutationObserver(() => window.shownAt.push([Number(root.dataset.frame), performance.now()]))
    .observe(root, {attributes: true, attributeFilter: ['data-frame']});
}"""


def open_stage(browser, url: str, timeout_ms: int = 60_000):
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.goto(url)
    page.wait_for_selector(f"{PLAYER}[data-frame]", timeout=timeout_ms)
    page.wait_for_function(f"() => document.querySelector('{PLAYER}').dataset.frame === "
                           f"document.querySelector('{PLAYER}').dataset.last", timeout=timeout_ms)
    return page


def attr(page, name: str) -> int:
    return int(page.get_attribute(PLAYER, f"data-{name}"))


def step_round_trip_ms(page, times: int = 10) -> list[float]:
    """A Step at the end of the computed frames: the player must wait for the server."""
    spent = []
    for _ in range(times):
        target = attr(page, "frame") + 1
        start = time.perf_counter()
        page.get_by_role("button", name="Step", exact=True).click()
        page.wait_for_function(f"() => document.querySelector('{PLAYER}').dataset.frame === '{target}'")
        spent.append(1000 * (time.perf_counter() - start))
    return spent


def scrub(browser, url: str, label: str):
    page = open_stage(browser, url, 180_000)
    sync, painted = page.evaluate(SCRUB_JS, 120)
    page.keyboard.press("End")
    trip = step_round_trip_ms(page)
    blocks = page.evaluate(f"() => document.querySelector('{PLAYER}').player.views[0].blocks.length")
    frames = attr(page, "last") + 1
    print(f"scrub, {blocks} blocks ({label}), over {frames} frames: p50 {p50(sync):.1f} ms"
          f" / p95 {p95(sync):.1f} ms drawn (synchronous), p50 {p50(painted):.1f} / p95 "
          f"{p95(painted):.1f} ms to the next paint; baseline, a Step waiting for the server: p50 "
          f"{p50(trip):.0f} ms, p95 {p95(trip):.0f} ms")
    page.close()
    return sync, painted


def play(page, speed: str = "20", window_s: float = PLAY_WINDOW_S) -> tuple[float, int]:
    """(frames drawn per second, frames drawn) from frame 0 until the run ends or `window_s` passes."""
    page.keyboard.press("Home")
    page.select_option(".sp-speed", speed)
    page.evaluate(WATCH_JS)
    page.get_by_role("button", name="Play", exact=True).click()
    deadline = time.time() + window_s
    while time.time() < deadline and page.get_by_role("button", name="Pause", exact=True).count():
        time.sleep(0.2)
    shown = page.evaluate("() => window.shownAt")
    pause = page.get_by_role("button", name="Pause", exact=True)
    if pause.count():
        with contextlib.suppress(PlaywrightTimeout):  # the run ended meanwhile: it paused by itself
            pause.click(timeout=2000)
    moves = [(f, t) for f, t in shown if f > 0]
    if len(moves) < 2:
        return 0.0, 0
    (f0, t0), (f1, t1) = moves[0], moves[-1]
    return (f1 - f0) / ((t1 - t0) / 1000), f1 - f0


def fast_clicks(browser, url: str, clicks: int = 20, settle_s: float = 120) -> tuple[int, int]:
    """(new frames shown, new frames computed) after `clicks` fast Step clicks from a fresh run."""
    page = open_stage(browser, url, 180_000)
    first = attr(page, "frame")
    for _ in range(clicks):
        page.get_by_role("button", name="Step", exact=True).click()
    deadline = time.time() + settle_s
    while time.time() < deadline and attr(page, "frame") < first + clicks:
        time.sleep(0.2)
    time.sleep(1.5)  # anything more would show up now
    result = attr(page, "frame") - first, attr(page, "last") - first
    page.close()
    return result


def fake_model_figures(browser):
    with app_server("fake") as (url, server):
        scrub(browser, f"{url}/?scenario=08_chat_poisson&frame=150", "preset 08")
        scrub(browser, f"{url}/?{LARGE_POOL}&frame=150", "200 chat requests")
        print(f"Play at 20 steps/s on the fake model, frames drawn per second (frames): {play_figures(browser, url)}")
        shown, computed = fast_clicks(browser, f"{url}/?scenario=08_chat_poisson")
        print(f"20 fast Step clicks, fake model: {shown} new frames shown, {computed} computed")

        page = open_stage(browser, f"{url}/?scenario=08_chat_poisson")
        before = cpu_seconds(server.pid)
        trip = step_round_trip_ms(page, 20)
        one_by_one = 1000 * (cpu_seconds(server.pid) - before) / 20
        page.close()
        page = open_stage(browser, f"{url}/?scenario=08_chat_poisson")
        before = cpu_seconds(server.pid)
        _, frames = play(page, window_s=60)
        played = 1000 * (cpu_seconds(server.pid) - before) / max(1, frames)
        page.close()
        print(f"server CPU per frame, fake model: {played:.1f} ms over a {frames}-step Play; baseline, frames asked "
              f"one by one (20 Steps, {p50(trip):.0f} ms each): {one_by_one:.1f} ms")


def real_model_figures(browser, presets=("02_preemption", "08_chat_poisson")):
    with app_server("model", start_timeout_s=180) as (url, _server):
        for preset in presets:
            page = open_stage(browser, f"{url}/?scenario={preset}", 300_000)
            page.get_by_role("button", name="Step", exact=True).click()  # warm up
            page.wait_for_function(f"() => document.querySelector('{PLAYER}').dataset.frame === '1'",
                                   timeout=120_000)
            rate, frames = play(page, window_s=40)
            walls = page.evaluate(f"() => document.querySelector('{PLAYER}').player.views.slice(2)"
                                  ".map(v => v.wall_ms).filter(x => x !== null)")
            own = 1000 / statistics.mean(walls) if walls else float("nan")
            page.close()
            print(f"Play on the real model (preset {preset}): {rate:.2f} frames/s over {frames} frames; the model's "
                  f"own rate in those steps {own:.2f} steps/s; ratio {rate / own:.2f} (load average "
                  f"{os.getloadavg()[0]:.1f})")
        preset = presets[0]
        shown, computed = fast_clicks(browser, f"{url}/?scenario={preset}", settle_s=300)
        print(f"20 fast Step clicks, real model (preset {preset}): {shown} new frames shown, {computed} computed")


def payload_figures(blocks: int = 256, max_steps: int = 400):
    """Bytes per frame delta on every preset with its KV pool set to `blocks` blocks (the encoder the app uses)."""
    worst = 0
    for path in preset_paths():
        scenario = load_scenario(path, "fake")
        spec = scenario.spec
        engine = Engine(replace(spec, config=replace(spec.config, num_kvcache_blocks=blocks)))
        engine.run(max_steps)
        previous, sizes = EMPTY_VIEW, []
        for view in player_views(list(engine.frames), lang="en"):
            sizes.append(len(json.dumps(encode(previous, view), separators=(",", ":"))))
            previous = view
        worst = max(worst, max(sizes))
        print(f"payload at {blocks} blocks, {path.stem} ({len(sizes)} frames): mean {statistics.mean(sizes):.0f} B, "
              f"p95 {p95(sizes):.0f} B, max {max(sizes)} B per frame delta")
    path = next(p for p in preset_paths() if p.stem == "08_chat_poisson")
    lab, feed = Lab(RunInputs.from_scenario(load_scenario(path, "fake"), "fake")), Feed(lang="en")
    first = feed.message(lab, {})
    feed.serve(lab, Request(first["run"], 0, 200, 1), budget_s=60)
    message = feed.message(lab, {})
    js, css = player_sources()
    print(f"payload: the largest frame delta of every preset at {blocks} blocks {worst} B (at most 5,000 B); "
          f"preset 08's 200-frame message {len(json.dumps(message))} B; baseline, a full frame: "
          f"{len(json.dumps(lab.frames[100].to_dict()))} B; the player's code, sent with each rerun: "
          f"{len(js) + len(css)} B")


def play_rates(browser, url: str, presets: list[str], window_s: float = PLAY_WINDOW_S) -> dict:
    """{preset: (frames drawn per second, frames drawn)} at 20 steps/s, each preset played from frame 0."""
    rates = {}
    for preset in presets:
        page = open_stage(browser, f"{url}/?scenario={preset}")
        rates[preset] = play(page, window_s=window_s)
        page.close()
    return rates


def play_figures(browser, url: str, presets: list[str] | None = None, window_s: float = PLAY_WINDOW_S) -> str:
    rates = play_rates(browser, url, presets or [path.stem for path in preset_paths()], window_s)
    return (", ".join(f"{name} {rate:.1f} ({n})" for name, (rate, n) in rates.items()) +
            f"; slowest {min(r for r, _ in rates.values()):.1f}")


SCRUBS = {"preset 08": "scenario=08_chat_poisson&frame=150", "200 chat requests": f"{LARGE_POOL}&frame=150"}


def player_before_after(browser, rev: str, count: int):
    """The player's figures for REV's tree and this one, each against its own server, in `count` rounds
    alternating; then the ratios this/REV (the scrub's p50 over every round, each preset's best Play rate)."""
    with before_rev.tree_at(rev) as old, app_server("fake", root=old) as (then, _), app_server("fake") as (now, _):
        trees = {rev: then, before_rev.THIS_TREE: now}
        presets = [p.stem for p in preset_paths() if p.stem[0].isdigit() and (old / "scenarios" / p.name).is_file()]
        scrubs = {(name, label): [] for name in trees for label in SCRUBS}
        rates = {name: {} for name in trees}
        for number, name, url in before_rev.rounds(trees, count):
            for label, query in SCRUBS.items():
                print(f"[round {number + 1}, {name}] ", end="")
                scrubs[name, label] += scrub(browser, f"{url}/?{query}", label)[0]
            played = play_rates(browser, url, presets, BEFORE_PLAY_S)
            print(f"[round {number + 1}, {name}] Play at 20 steps/s for {BEFORE_PLAY_S} s, frames drawn per second: "
                  + ", ".join(f"{preset} {rate:.1f}" for preset, (rate, _) in played.items()))
            for preset, (rate, _) in played.items():
                rates[name][preset] = max(rate, rates[name].get(preset, 0.0))
    print(f"this tree against {rev}, {count} rounds (load average {os.getloadavg()[0]:.1f}):")
    for label in SCRUBS:
        print("  " + before_rev.ratio_line(f"scrub p50 drawn (synchronous, ms), {label}",
                                       p50(scrubs[before_rev.THIS_TREE, label]), p50(scrubs[rev, label]), rev))
    slowest = {name: min(rates[name].values()) for name in trees}
    mean = {name: statistics.mean(rates[name].values()) for name in trees}
    print("  " + before_rev.ratio_line(f"Play rate on {len(presets)} presets, slowest (frames/s)",
                                   slowest[before_rev.THIS_TREE], slowest[rev], rev, higher_is_better=True))
    print("  " + before_rev.ratio_line(f"Play rate on {len(presets)} presets, mean (frames/s)",
                                   mean[before_rev.THIS_TREE], mean[rev], rev, higher_is_better=True))


def main():
    print("load average (1, 5, 15 min) at the start: " + ", ".join(f"{x:.1f}" for x in os.getloadavg()))
    with chromium() as browser:
        if "--before" in sys.argv:
            count = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 2
            player_before_after(browser, sys.argv[sys.argv.index("--before") + 1], count)
            return
        if "--model-only" not in sys.argv:
            payload_figures()
            if "--payload-only" in sys.argv:
                return
            fake_model_figures(browser)
        if "--no-model" in sys.argv or not real_model_installed():
            print("real model: skipped")
        else:
            real_model_figures(browser)


if __name__ == "__main__":
    main()
