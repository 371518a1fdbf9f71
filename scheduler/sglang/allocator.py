"""SGLang's KV slot allocators (`mem_cache/allocator/token.py`, `paged.py`). Slot 0 (page 0) is the padding slot.

- `TokenToKVPoolAllocator` (page_size 1): slots 1..size, allocated from the front of the free list, freed slots
  appended at its end.
- `PagedTokenToKVPoolAllocator`: pages 1..size // page_size; a request's slots are whole pages (a prefill first
  fills the last page its prefix left part-full, a decode opens a new page at a page boundary). Freed pages go to
  the *front* of the free list, so the pages freed last are reused first; inside a result's free group
  (`free_group_begin` .. `free_group_end`) the group's pages go there together, in the order freed."""

from __future__ import annotations

from collections import deque


class TokenToKVPoolAllocator:
    page_size = 1

    def __init__(self, size: int):
        self.size = size
        self.free_slots: deque[int] = deque(range(1, size + 1))

    def available_size(self) -> int:
        return len(self.free_slots)

    def alloc(self, need_size: int) -> list[int] | None:
        if need_size > len(self.free_slots):
            return None
        return [self.free_slots.popleft() for _ in range(need_size)]

    def alloc_extend(self, spans: list[tuple[int, int, int]]) -> list[list[int]] | None:
        """The new slots of each (prefix_len, seq_len, last slot) span, in one run from the free list."""
        slots = self.alloc(sum(seq_len - prefix_len for prefix_len, seq_len, _ in spans))
        if slots is None:
            return None
        out, start = [], 0
        for prefix_len, seq_len, _ in spans:
            out.append(slots[start:start + seq_len - prefix_len])
            start += seq_len - prefix_len
        return out

    def alloc_decode(self, spans: list[tuple[int, int]]) -> list[int] | None:
        """One slot for each (seq_len, last slot) request."""
        return self.alloc(len(spans))

    def free(self, slots: list[int]):
        self.free_slots.extend(slots)

    def free_group_begin(self):
        pass

    def free_group_end(self):
        pass


class PagedTokenToKVPoolAllocator:
    def __init__(self, size: int, page_size: int):
        self.size, self.page_size = size, page_size
        self.free_pages: deque[int] = deque(range(1, size // page_size + 1))
        self.group: list[int] | None = None

    def available_size(self) -> int:
        return len(self.free_pages) * self.page_size

    def alloc_extend(self, spans: list[tuple[int, int, int]]) -> list[list[int]] | None:
        """The new slots of each (prefix_len, seq_len, last slot) span: the rest of the prefix's last page,
        then new pages, taken in span order."""
        ps = self.page_size
        needed = sum(-(-seq_len // ps) - -(-prefix_len // ps) for prefix_len, seq_len, _ in spans)
        if needed > len(self.free_pages):
            return None
        out = []
        for prefix_len, seq_len, last_loc in spans:
            in_last_page = min(seq_len, -(-prefix_len // ps) * ps) - prefix_len
            slots = [last_loc + 1 + i for i in range(in_last_page)]
            position = prefix_len + in_last_page
            while position < seq_len:
                page = self.free_pages.popleft()
                take = min(ps, seq_len - position)
                slots.extend(page * ps + i for i in range(take))
                position += take
            out.append(slots)
        return out

    def alloc_decode(self, spans: list[tuple[int, int]]) -> list[int] | None:
        """One slot for each (seq_len, last slot) request: a new page's first slot when seq_len is at a page
        boundary, else the slot after its last."""
        ps = self.page_size
        if sum(1 for seq_len, _ in spans if seq_len % ps == 0) > len(self.free_pages):
            return None
        return [self.free_pages.popleft() * ps if seq_len % ps == 0 else last_loc + 1 for seq_len, last_loc in spans]

    def free(self, slots: list[int]):
        """Free the pages of `slots` (a page-aligned run: every page_size-th slot names its page)."""
        pages = [slot // self.page_size for slot in slots[::self.page_size]]
        if self.group is not None:
            self.group.extend(pages)
        else:
            self.free_pages.extendleft(reversed(pages))

    def free_group_begin(self):
        self.group = []

    def free_group_end(self):
        pages, self.group = self.group, None
        self.free_pages.extendleft(reversed(pages))


def make_allocator(size: int, page_size: int):
    return TokenToKVPoolAllocator(size) if page_size == 1 else PagedTokenToKVPoolAllocator(size, page_size)
