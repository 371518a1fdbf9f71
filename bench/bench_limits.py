"""Issue 13's figures: what one session can cost the server, each against its budget and a baseline measured in
the same run:

    python -m bench.bench_limits [--skip-browser]

- the policy lab's JSON export of four configs of the generated workload (block size 4, max_num_seqs 1):
  time, size and peak memory growth (budget 10 s, 100 MB, 1 GB), against the version 1 writer (every block of
  every frame) on the first frames of one run, scaled to the whole export;
- a trace of 600 steps at 4096 blocks on disk (budget 20 MB), against one full frame times 600;
- a 100,000-frame run with the charts view open: RSS growth and the time of a rerun (budget 500 MB, 1 s);
- the worst single URL in a real `streamlit run`: server CPU released after the tab closes (budget 2 s).
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from dataclasses import replace
from pathlib import Path

from bench.browser import chromium
from bench.process_stats import cpu_seconds
from engine.analysis.compare import GENERATED_CONFIG, Variant, compare, generated_workload, same_capacity
from engine.analysis.export import comparison_json
from engine.inputs.workload import random_workload
from engine.run.engine import Engine
from engine.run.recipe import RunSpec
from engine.traces.trace import trace_json
from scheduler import Config
from tools.app_server import free_port

MB = 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize() / MB


def verdict(value: float, budget: float) -> str:
    return "met" if value <= budget else "NOT MET"


def export_figures():
    base = replace(same_capacity(GENERATED_CONFIG, 4), max_num_seqs=1)
    variants = [Variant("prefill-first", base), Variant("decode-first", replace(base, prefill_first=False)),
                Variant("chunked prefill", replace(base, chunked_prefill=True)),
                Variant("smart preemption", replace(base, preemption_policy="smart"))]
    runs = compare(variants, generated_workload())
    frames = sum(len(run.frames) for run in runs)
    peak_before, start = peak_rss_mb(), time.perf_counter()
    text = comparison_json(runs, "generated")
    seconds, size, growth = time.perf_counter() - start, len(text) / MB, peak_rss_mb() - peak_before
    sample = runs[0].engine.frames
    start = time.perf_counter()
    old = sum(len(json.dumps(sample[k].to_dict(tokens=False))) for k in range(500))
    old_seconds = (time.perf_counter() - start) * frames / 500
    print(f"policy lab JSON export, 4 configs x generated workload (block size 4, max_num_seqs 1), {frames} frames:")
    print(f"  {seconds:.2f} s ({verdict(seconds, 10)}: <= 10 s), {size:.1f} MB ({verdict(size, 100)}: <= 100 MB), "
          f"peak memory growth {growth:.0f} MB ({verdict(growth, 1024)}: <= 1 GB)")
    print(f"  baseline, version 1 writer (every block of every frame), scaled from 500 frames: "
          f"{old_seconds:.1f} s, {old * frames / 500 / MB:.0f} MB")


def trace_figures():
    config = Config(max_num_seqs=8, max_num_batched_tokens=512, max_model_len=512, num_kvcache_blocks=4096,
                    kvcache_block_size=4)
    engine = Engine(RunSpec(config, random_workload(200, 0, arrivals=list(range(0, 400, 2)), max_tokens=64)))
    engine.run(600)
    size = len(trace_json(engine)) / MB
    full = len(json.dumps(engine.frames[300].to_dict(tokens=False))) * len(engine.frames) / MB
    print(f"trace of {len(engine.frames) - 1} steps at 4096 blocks: {size:.2f} MB on disk "
          f"({verdict(size, 20)}: <= 20 MB); baseline, full frames: {full:.0f} MB")


LONG_LINK = {"scenario": "custom", "requests": "200", "prompts": "random", "max_tokens": "2048", "arrivals": "all",
             "seed": "0", "max_num_seqs": "1", "max_model_len": "4096", "max_num_batched_tokens": "4096",
             "num_kvcache_blocks": "4096"}


def charts_figures(frames: int):
    """The app in-process (Streamlit's AppTest runs the page as the server does): a link to frame `frames`, then
    the charts view, then a rerun; RSS growth against the process before the session, rerun time against a rerun
    of the same session at frame 10 (the baseline)."""
    from streamlit.testing.v1 import AppTest

    os.environ["SCHEDLAB_RUNNER"] = "fake"
    app_path = str(Path(__file__).resolve().parents[1] / "app.py")

    def session(frame: int) -> AppTest:
        app = AppTest.from_file(app_path, default_timeout=900)
        app.query_params.update({**LONG_LINK, "frame": str(frame)})
        app.run()
        app.session_state["lower_view"] = "charts"
        app.run()
        return app

    def rerun_s(app: AppTest) -> float:
        start = time.perf_counter()
        app.run()
        return time.perf_counter() - start

    small = session(10)
    rerun_s(small)
    small_rerun = min(rerun_s(small) for _ in range(3))
    before, start = rss_mb(), time.perf_counter()
    app = session(frames)
    opened, growth = time.perf_counter() - start, rss_mb() - before
    assert not app.exception and app.session_state["lab"].cursor == frames, "the long link did not open"
    rerun = min(rerun_s(app) for _ in range(3))
    print(f"{frames:,}-frame run, charts view open: RSS growth {growth:.0f} MB ({verdict(growth, 500)}: <= 500 MB), "
          f"rerun {rerun:.2f} s ({verdict(rerun, 1)}: <= 1 s); opening the link took {opened:.0f} s; baseline "
          f"rerun at frame 10: {small_rerun:.2f} s")


def url_cpu_figure():
    """A real `streamlit run` on 127.0.0.1, the worst single link (speculation, 100,000 frames) opened in headless
    Chromium, the tab closed after 5 s: how long the server keeps burning CPU, against its rate while running."""

    port, root = free_port(), Path(__file__).resolve().parents[1]
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                               "--server.port", str(port), "--server.address", "127.0.0.1"], cwd=root,
                              env={**os.environ, "SCHEDLAB_RUNNER": "fake"}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(150):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.2)
        query = urllib.parse.urlencode({**LONG_LINK, "num_speculative_tokens": "4", "frame": "100000"})
        with chromium() as browser:
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{port}/?{query}")
            time.sleep(5)
            busy_from = cpu_seconds(server.pid)
            time.sleep(1)
            busy_rate = cpu_seconds(server.pid) - busy_from
            page.close()
        closed, samples = time.monotonic(), []
        while time.monotonic() - closed < 15:
            samples.append((time.monotonic() - closed, cpu_seconds(server.pid)))
            time.sleep(0.1)
    finally:
        server.terminate()
        server.wait(10)
    # released: the first moment after which the server used under 10% of a core for a whole second
    released = next((t for i, (t, cpu) in enumerate(samples) for later, cpu_later in samples[i:]
                     if later - t >= 1 and cpu_later - cpu < 0.1), None)
    shown = "never within 15 s" if released is None else f"{released:.1f} s"
    print(f"worst single link (speculation, frame=100000) in a real server: CPU released {shown} after the tab "
          f"closed ({verdict(released if released is not None else 99, 2)}: <= 2 s); while running it used "
          f"{busy_rate:.2f} s of CPU per second")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-browser", action="store_true", help="leave out the streamlit + Chromium figure")
    parser.add_argument("--frames", type=int, default=100_000, help="frames of the long run (charts figure)")
    args = parser.parse_args()
    export_figures()
    trace_figures()
    charts_figures(args.frames)
    if not args.skip_browser:
        url_cpu_figure()


if __name__ == "__main__":
    main()
