"""What the stage draws of the SGLang twin after a step (its scheduler view): the radix tree node by node, what
changed in it this step, the waiting queue in the policy's order with each request's cached prefix, and the
PrefillAdder's budgets as the prefill pass left them. Plain JSON data, read without changing the twin (no match,
no tick, no split).

A node is [id, parent id (0: the root), token ids, KV slots, lock count, evict rank]: ids are given the first time
a snapshot sees a node and kept (a split's head is the new node, the old one keeps its id below it); evict rank is
the order `evict` would take the evictable leaves in (1: the next), None for a node that is not one. A node with
lock count 0 is evictable (its slots count in `evictable_size`), one with a lock protected.

Changes since the previous snapshot: `inserted` (new leaves), `split` ([head, the node cut below it]), `evicted`
([id, parent, tokens, slots] of each node gone) and `matched` ([request, matched tokens, node ids on its path]) of
each request admitted this step (again after a retraction)."""

from __future__ import annotations

import heapq

from scheduler.sglang.radix_cache import RadixCache, TreeNode

ROOT_ID = 0
VIEW_KIND = "radix_tree"  # what the stage's panel for it looks for (player/tree_view.js)


def prefill_budget(adder, max_prefill_tokens: int, chunked_prefill_size: int | None) -> dict:
    """PrefillAdder's budgets at the end of its pass, under SGLang's names: `available_and_evictable` (free slots
    plus the tree's evictable ones), `reserve` (the running requests' future tokens x new_token_ratio, less those
    of the requests a priority preemption released), `admitted_offset` (what this pass charged for the requests it
    admitted: their new tokens, a page each and their max_new_tokens), `total_offset` (the two together),
    `rem_total_tokens`, `rem_input_tokens` of
    `max_prefill_tokens`, `rem_chunk_tokens` of `chunked_prefill_size` (None: no chunking) and `new_token_ratio`."""
    available = adder.tree.allocator.available_size() + adder.tree.evictable_size()
    return {"available_and_evictable": available, "reserve": round(adder.running_reserve, 2),
            "admitted_offset": round(adder.total_offset - adder.running_reserve, 2),
            "total_offset": round(adder.total_offset, 2), "rem_total_tokens": round(available - adder.total_offset, 2),
            "rem_input_tokens": adder.rem_input_tokens, "max_prefill_tokens": max_prefill_tokens,
            "rem_chunk_tokens": adder.rem_chunk_tokens, "chunked_prefill_size": chunked_prefill_size,
            "new_token_ratio": round(adder.new_token_ratio, 4), "admitted": [r.rid for r in adder.can_run_list]}


def cached_prefix(tree: RadixCache, token_ids: list[int]) -> tuple[int, list[TreeNode]]:
    """(tokens of `token_ids` the tree holds from the start, in whole pages; the nodes covering them), read-only."""
    node, offset, path, page = tree.root_node, 0, [], tree.page_size
    n = len(token_ids) // page * page
    while offset < n and (child := node.children.get(tree.child_key(token_ids, offset))) is not None:
        common = 0
        limit = min(len(child.key), n - offset)
        while common < limit and child.key[common] == token_ids[offset + common]:
            common += 1
        common = common // page * page
        if common == 0:
            break
        path.append(child)
        offset += common
        if common < len(child.key):
            break
        node = child
    return offset, path


class TreeView:
    """A twin's snapshots, one per step, each with the changes since the one before (the reader is the engine's
    recorder, through the scheduler's `panels`)."""

    def __init__(self):
        self._ids: dict[TreeNode, int] = {}  # every node in the tree at the last snapshot
        self._rows: dict[int, list] = {}  # node id -> its row then (what an eviction reports)
        self._next_id = ROOT_ID + 1
        self._lit: set[int] = set()  # requests whose admission was shown (cleared by a retraction)

    def snapshot(self, twin) -> dict:
        """The view of `twin` (scheduler/sglang/scheduler.py `Scheduler`) after its step."""
        tree = twin.tree_cache
        nodes, fresh, seen = [], [], {}
        ranks = {leaf: rank for rank, leaf in enumerate(heapq.nsmallest(len(tree.evictable_leaves),
                                                                         tree.evictable_leaves), 1)}
        stack = [(child, ROOT_ID) for _, child in sorted(tree.root_node.children.items(), reverse=True)]
        while stack:
            node, parent_id = stack.pop()
            node_id, new = self._new_or_known(node)
            seen[node] = node_id
            if new:
                fresh.append(node)
            nodes.append([node_id, parent_id, list(node.key), list(node.value), node.lock_ref, ranks.get(node)])
            stack.extend((child, node_id) for _, child in sorted(node.children.items(), reverse=True))
        changes = self._changes(seen, fresh)
        changes["matched"] = self._matched(twin, tree, seen)
        self._ids, self._rows = seen, {row[0]: row for row in nodes}
        return {"kind": VIEW_KIND, "page_size": tree.page_size, "size": twin.max_total_num_tokens, "nodes": nodes,
                **changes,
                "evictable_size": tree.evictable_size(), "protected_size": tree.protected_size(),
                "available_size": twin.allocator.available_size(),
                "waiting": [[r.rid, cached_prefix(tree, r.origin_input_ids + r.output_ids)[0]]
                            for r in twin.waiting_queue],
                "policy": twin.policy.policy, "retracted": [r.rid for r in twin.retracted],
                "budget": twin.prefill_budget, "new_token_ratio": round(twin.new_token_ratio_tracker.current, 4)}

    def _new_or_known(self, node: TreeNode) -> tuple[int, bool]:
        if node in self._ids:
            return self._ids[node], False
        node_id, self._next_id = self._next_id, self._next_id + 1
        return node_id, True

    def _changes(self, seen: dict[TreeNode, int], fresh: list[TreeNode]) -> dict:
        known = set(self._ids)
        split = [[seen[node], seen[child]] for node in fresh for child in node.children.values() if child in known]
        heads = {head for head, _ in split}
        evicted = [self._rows[node_id][:4] for node, node_id in self._ids.items() if node not in seen]
        return {"inserted": [seen[node] for node in fresh if seen[node] not in heads], "split": split,
                "evicted": evicted}

    def _matched(self, twin, tree: RadixCache, seen: dict[TreeNode, int]) -> list:
        for req in twin.retracted:
            self._lit.discard(req.rid)
        batch = twin.last_batch
        if batch is None or batch.forward_mode != "extend":
            return []
        out = []
        for req in batch.reqs:
            if req.rid in self._lit:
                continue
            self._lit.add(req.rid)
            matched = req.num_matched_prefix_tokens
            _, path = cached_prefix(tree, (req.origin_input_ids + req.output_ids)[:matched])
            out.append([req.rid, matched, [seen[node] for node in path if node in seen]])
        return out
