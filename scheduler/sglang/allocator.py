"""SGLang's token-slot allocator (`mem_cache/allocator/token.py`, page_size 1): slots 1..size (slot 0 is the
padding slot), allocated from the front of the free list, freed slots appended at its end."""

from __future__ import annotations

from collections import deque


class TokenToKVPoolAllocator:
    def __init__(self, size: int):
        self.size = size
        self.free_slots: deque[int] = deque(range(1, size + 1))

    def available_size(self) -> int:
        return len(self.free_slots)

    def alloc(self, need_size: int) -> list[int] | None:
        if need_size > len(self.free_slots):
            return None
        return [self.free_slots.popleft() for _ in range(need_size)]

    def free(self, slots: list[int]):
        self.free_slots.extend(slots)
