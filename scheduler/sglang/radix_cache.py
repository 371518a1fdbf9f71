"""SGLang's radix tree over KV slots (`mem_cache/unified_radix_cache.py` with its Python TreeCore,
`unified_cache/unified_tree_core.py`): nodes keyed by token runs, split at the first differing token (the first
differing page when page_size > 1: keys are whole pages, a node's children are keyed by their first page), a lock
count per node held by the requests using its prefix, least-recently-used unlocked leaves evicted first.

Recency is SGLang's counter (`get_and_increase_time_counter`): every node creation takes two ticks, an insert
touches the root and each node it walks, a split re-touches the suffix, and a match stamps its last node with a
fresh tick and each ancestor 0.00001 older. The twin keeps the same ticks, so LRU ties never depend on a clock."""

from __future__ import annotations

import heapq


class TreeNode:
    __slots__ = ("children", "parent", "key", "value", "lock_ref", "last_access_time")

    def __init__(self, cache: RadixCache, parent: TreeNode | None, key: list[int], value: list[int]):
        self.children: dict[int, TreeNode] = {}
        self.parent, self.key, self.value, self.lock_ref = parent, key, value, 0  # parent: None for the root alone
        self.last_access_time = cache.tick()
        cache.tick()  # SGLang's creation_time takes a tick too

    def __lt__(self, other: TreeNode) -> bool:
        return self.last_access_time < other.last_access_time


def _common_prefix(a: list[int], b: list[int], offset: int, end: int, page_size: int) -> int:
    """Tokens of `a` equal to `b[offset:end]` from the start, in whole pages."""
    n = min(len(a), end - offset)
    i = 0
    while i < n and a[i] == b[offset + i]:
        i += 1
    return i // page_size * page_size


class RadixCache:
    """The tree, its evictable and protected sizes, and the set of evictable leaves (unlocked, no child)."""

    def __init__(self, allocator, page_size: int = 1):
        self.allocator, self.page_size = allocator, page_size
        self._clock = 1.0
        self.root_node = TreeNode(self, None, [], [])
        self.root_node.lock_ref = 1
        self.evictable_size_ = self.protected_size_ = 0
        self.evictable_leaves: set[TreeNode] = set()

    def child_key(self, key: list[int], offset: int = 0):
        return key[offset] if self.page_size == 1 else tuple(key[offset:offset + self.page_size])

    def tick(self) -> float:
        now = self._clock
        self._clock += 1.0
        return now

    def evictable_size(self) -> int:
        return self.evictable_size_

    def protected_size(self) -> int:
        return self.protected_size_

    def match_prefix(self, key: list[int], limit: int | None = None) -> tuple[int, TreeNode]:
        """(matched length, last node) of `key[:limit]` in whole pages; a match ending inside a node splits it."""
        n = len(key) if limit is None else min(limit, len(key))
        n = n // self.page_size * self.page_size
        if n == 0:
            return 0, self.root_node
        node, offset = self.root_node, 0
        while offset < n and self.child_key(key, offset) in node.children:
            child = node.children[self.child_key(key, offset)]
            matched = _common_prefix(child.key, key, offset, n, self.page_size)
            offset += matched
            if matched < len(child.key):
                node = self._split_node(child, matched)
                break
            node = child
        now = self.tick()
        stamp: TreeNode | None = node
        while stamp is not None:
            stamp.last_access_time = now
            now -= 0.00001
            stamp = stamp.parent
        return offset, node

    def insert(self, key: list[int], value: list[int], prev_prefix_len: int) -> tuple[int, TreeNode]:
        """Insert `key` -> `value` slots (cut to whole pages); (length already cached, last node). The request's
        own slots for the part already cached, past `prev_prefix_len` (what its row already shares with the
        tree), are freed."""
        self.root_node.last_access_time = self.tick()
        n = len(key) // self.page_size * self.page_size
        if n == 0:
            return 0, self.root_node
        key = key[:n]
        node, offset = self.root_node, 0
        while offset < n and self.child_key(key, offset) in node.children:
            child = node.children[self.child_key(key, offset)]
            child.last_access_time = self.tick()
            matched = _common_prefix(child.key, key, offset, n, self.page_size)
            if matched < len(child.key):
                child = self._split_node(child, matched)
            dup_start = max(0, prev_prefix_len - offset)
            if dup_start < matched:
                self.allocator.free(value[offset + dup_start:offset + matched])
            node, offset = child, offset + matched
        if offset < n:
            leaf = TreeNode(self, node, key[offset:], value[offset:n])
            node.children[self.child_key(key, offset)] = leaf
            self.evictable_size_ += len(leaf.key)
            self._update_leaf(leaf)
            self._update_leaf(node)
            node = leaf
        return offset, node

    def _split_node(self, child: TreeNode, split_len: int) -> TreeNode:
        """Cut `child` after `split_len` tokens; the new node (the head) takes its place under the parent."""
        parent = child.parent
        assert parent is not None  # a node split is a child, never the root
        head = TreeNode(self, parent, child.key[:split_len], child.value[:split_len])
        head.lock_ref = child.lock_ref
        head.children = {self.child_key(child.key, split_len): child}
        parent.children[self.child_key(child.key)] = head
        child.parent, child.key, child.value = head, child.key[split_len:], child.value[split_len:]
        child.last_access_time = self.tick()
        self._update_leaf(head)
        self._update_leaf(child)
        return head

    def path_slots(self, node: TreeNode) -> list[int]:
        pieces = []
        while node.parent is not None:  # up to the root
            pieces.append(node.value)
            node = node.parent
        return [slot for piece in reversed(pieces) for slot in piece]

    def inc_lock_ref(self, node: TreeNode):
        while node.parent is not None:  # up to the root
            if node.lock_ref == 0:
                self.evictable_size_ -= len(node.key)
                self.protected_size_ += len(node.key)
            node.lock_ref += 1
            self._update_leaf(node)
            node = node.parent

    def dec_lock_ref(self, node: TreeNode):
        while node.parent is not None:  # up to the root
            if node.lock_ref == 1:
                self.evictable_size_ += len(node.key)
                self.protected_size_ -= len(node.key)
            node.lock_ref -= 1
            self._update_leaf(node)
            node = node.parent

    def evict(self, num_tokens: int) -> list[tuple[list[int], list[int]]]:
        """Free at least `num_tokens` slots (or all there are) by deleting unlocked leaves, least recent first;
        a parent left a leaf joins the candidates. Returns (key, slots) of each leaf evicted, in order."""
        heap = [(leaf.last_access_time, leaf) for leaf in self.evictable_leaves]
        heapq.heapify(heap)
        evicted, leaves = 0, []
        while evicted < num_tokens and heap:
            _, leaf = heapq.heappop(heap)
            if leaf not in self.evictable_leaves:
                continue
            self.allocator.free(leaf.value)
            leaves.append((leaf.key, leaf.value))
            evicted += len(leaf.value)
            parent = leaf.parent
            assert parent is not None  # an evictable leaf is never the root
            del parent.children[self.child_key(leaf.key)]
            self.evictable_size_ -= len(leaf.key)
            self.evictable_leaves.discard(leaf)
            self._update_leaf(parent)
            if parent in self.evictable_leaves:
                heapq.heappush(heap, (parent.last_access_time, parent))
        return leaves

    def evict_to_free(self, num_tokens: int) -> list[tuple[list[int], list[int]]]:
        """Evict what `num_tokens` free slots still lack (SGLang's `evict_to_free_tokens`); the leaves evicted."""
        shortfall = num_tokens - self.allocator.available_size()
        return self.evict(shortfall) if shortfall > 0 else []

    def _update_leaf(self, node: TreeNode):
        if node is not self.root_node and node.lock_ref == 0 and not node.children:
            self.evictable_leaves.add(node)
        else:
            self.evictable_leaves.discard(node)

    def dfs_weight_order(self, last_nodes: list[TreeNode]) -> list[int]:
        """Indices of `last_nodes` in depth-first order, heavier subtrees (more requests ending in them) first."""
        ending: dict[TreeNode, list[int]] = {}
        for index, node in enumerate(last_nodes):
            ending.setdefault(node, []).append(index)
        weight: dict[TreeNode, int] = {}

        def weigh(node: TreeNode) -> int:
            total = len(ending.get(node, ()))
            for child in node.children.values():
                total += weigh(child)
            weight[node] = total
            return total
        weigh(self.root_node)
        order: list[int] = []

        def visit(node: TreeNode):
            for child in sorted(node.children.values(), key=lambda c: -weight[c]):
                visit(child)
            order.extend(ending.get(node, ()))
        visit(self.root_node)
        return order

    def snapshot(self) -> list:
        """[depth, tokens, slots, lock count] per node, depth-first, children by first token."""
        out = []

        def walk(node: TreeNode, depth: int):
            for first in sorted(node.children):
                child = node.children[first]
                out.append([depth, list(child.key), list(child.value), child.lock_ref])
                walk(child, depth + 1)
        walk(self.root_node, 0)
        return out
