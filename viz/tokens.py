"""How one token is written inside a small box and in hover text."""

from engine.frame import token_id_text

VISIBLE_WHITESPACE = str.maketrans({" ": "·", "\n": "⏎", "\t": "⇥"})


def token_label(request, index: int, max_chars: int) -> str:
    """The token's text piece (whitespace made visible, cut to `max_chars`), or its id without a tokenizer."""
    pieces = request.pieces
    if pieces is None:
        return token_id_text(request.history.token_ids[index])
    text = pieces[index].translate(VISIBLE_WHITESPACE) or "∅"
    return text if len(text) <= max_chars else text[:max_chars - 1] + "…"


def token_hover(request, index: int) -> str:
    pieces = request.pieces
    token_id = request.history.token_ids[index]
    text = f" {pieces[index]!r}" if pieces is not None else ""
    return f"token {index} (id {token_id}){text}"


def blocks_text(request, block_index: int, block_size: int, max_chars: int = 60) -> str:
    """The text (or token ids) held by block `block_index` of `request`'s block table."""
    start = block_index * block_size
    stop = min(start + block_size, request.num_tokens)
    pieces = request.pieces
    if pieces is None:
        text = " ".join(map(token_id_text, request.history.token_ids[start:stop]))
    else:
        text = repr("".join(pieces[start:stop]))
    return text if len(text) <= max_chars else text[:max_chars - 1] + "…"
