"""N-gram prompt lookup: draft tokens for speculative decoding without a second model (vLLM's `ngram`), and
the rule every runner verifies them by."""


def propose_ngram(token_ids: list[int], k: int, min_n: int, max_n: int) -> list[int]:
    """Match the last n tokens (longest n first) against the sequence's earlier text and propose the up to
    `k` tokens that followed their earliest occurrence (the one with the longest continuation). Empty when
    nothing matches."""
    if k <= 0:
        return []
    length = len(token_ids)
    for n in range(min(max_n, length - 1), min_n - 1, -1):
        tail = token_ids[length - n:]
        for start in range(length - n):
            if token_ids[start:start + n] == tail:
                return token_ids[start + n:start + n + k]
    return []


def accept_drafts(drafts: list[int], model_tokens: list[int]) -> list[int]:
    """The drafts the model agrees with, then its own next token. `model_tokens[j]` is the model's token
    where `drafts[j]` stands, so the result is exactly what decoding without drafts would write."""
    accepted = 0
    while accepted < len(drafts) and drafts[accepted] == model_tokens[accepted]:
        accepted += 1
    return model_tokens[:accepted + 1]
