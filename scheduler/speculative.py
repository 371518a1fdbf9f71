"""N-gram prompt lookup: draft tokens for speculative decoding without a second model (vLLM's `ngram`), and
the rule every runner verifies them by."""


class NgramIndex:
    """Where each n-gram of a sequence first occurs, for n in [min_n, max_n], kept up to date as tokens are
    appended, so a draft costs a few dictionary look-ups instead of a scan of the whole sequence.

    `propose` matches the last n tokens (longest n first) against the sequence's earlier text and proposes
    the up to `k` tokens that followed their earliest occurrence (the one with the longest continuation);
    empty when nothing matches. Tokens already indexed must never change (they are append-only)."""

    __slots__ = ("min_n", "max_n", "_first", "_indexed")

    def __init__(self, min_n: int, max_n: int):
        self.min_n, self.max_n = min_n, max_n
        self._first: dict[int, dict[tuple[int, ...], int]] = {n: {} for n in range(min_n, max_n + 1)}
        self._indexed = 0  # tokens covered: every n-gram ending before this position is in `_first`

    def _extend(self, token_ids: list[int]):
        for end in range(self._indexed + 1, len(token_ids) + 1):
            for n, first in self._first.items():
                if n <= end:
                    first.setdefault(tuple(token_ids[end - n:end]), end - n)
        self._indexed = len(token_ids)

    def propose(self, token_ids: list[int], k: int) -> list[int]:
        if k <= 0:
            return []
        self._extend(token_ids)
        length = len(token_ids)
        for n in range(min(self.max_n, length - 1), self.min_n - 1, -1):
            start = self._first[n][tuple(token_ids[length - n:])]  # the tail itself is indexed, so it is found
            if start < length - n:
                return token_ids[start + n:start + n + k]
        return []


def accept_drafts(drafts: list[int], model_tokens: list[int]) -> list[int]:
    """The drafts the model agrees with, then its own next token. `model_tokens[j]` is the model's token
    where `drafts[j]` stands, so the result is exactly what decoding without drafts would write."""
    accepted = 0
    while accepted < len(drafts) and drafts[accepted] == model_tokens[accepted]:
        accepted += 1
    return model_tokens[:accepted + 1]
