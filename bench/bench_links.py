"""Full-state links: every preset, on the fake model, gets five mid-run changes (max_num_seqs at frame 2, a request
added by hand at 4, a KV pool rebuild at 5, overlapped scheduling at 7 (prefill order instead where speculative
decoding forbids overlap), max_num_seqs and prefill order at 8), runs to its end or frame 60, and is shared as a
link at frame 9; the link is opened in another run cache (a fresh session that shares nothing with the first) and
run as far, and every frame is compared (what it shows; wall times left out, they are measured). Prints the share
of frames reproduced and the link's length.
Run: python -m bench.bench_links
"""



from engine.inputs.scenario import load_scenario, preset_paths
from session.lab import Lab, RunInputs
from session.links import link_of, open_link, parse_link, replay
from session.run_cache import RunCache

LAST = 60


def shown(lab: Lab) -> list[dict]:
    frames = [lab.frames[k].to_dict() for k in range(lab.last + 1)]
    return [{k: v for k, v in f.items() if not k.startswith("wall_")} for f in frames]


def changed(lab: Lab) -> Lab:
    lab.run(2)
    lab.set_config(max_num_seqs=max(1, lab.config_in_effect().max_num_seqs - 1))
    lab.run(2)
    lab.add_request("Explain the KV cache in one sentence.", 6, priority=2)
    lab.run(1)
    lab.set_config(num_kvcache_blocks=lab.config_in_effect().num_kvcache_blocks + 8)
    lab.run(2)
    if lab.config_in_effect().num_speculative_tokens:
        lab.set_config(prefill_first=not lab.config_in_effect().value("prefill_first"))
    else:
        lab.set_options(overlap=True)
    lab.run(1)
    lab.set_config(max_num_seqs=lab.config_in_effect().max_num_seqs + 2, prefill_first=True)
    lab.run(LAST)
    lab.goto(9)
    return lab


def main():
    scenarios = {path.stem: load_scenario(path) for path in preset_paths()}
    same = total = longest = 0
    for name, scenario in scenarios.items():
        lab = changed(Lab(RunInputs.from_scenario(scenario, "fake"), cache=RunCache(2**31)))
        params = link_of(lab, scenarios, lang="en").params()
        link = parse_link(params, scenarios)
        again = open_link(link, scenarios, "fake")  # the process's shared cache: not the first one
        replay(again, link, lambda at, frame: at.run(frame - at.cursor))
        again.run(lab.last - again.last)
        a, b = shown(lab), shown(again)
        equal = sum(x == y for x, y in zip(a, b, strict=False))
        same, total = same + equal, total + max(len(a), len(b))
        longest = max(longest, len(params["changes"]))
        print(f"{name:28} {len(link.changes)} changes, frames {equal}/{max(len(a), len(b))} identical, "
              f"changes= {len(params['changes'])} characters")
    print(f"A full-state link with 5 mid-run changes reproduces {100 * same / total:.0f}% of frames "
          f"({same}/{total} frames, {len(scenarios)} presets; longest changes= {longest} characters)")


if __name__ == "__main__":
    main()
