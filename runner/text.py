"""Text around the token ids: chat prompts in, per-token text pieces out."""

REPLACEMENT_CHAR = "\ufffd"  # what a decoder prints for a UTF-8 character still missing bytes
CONTEXT_TOKENS = 4  # earlier tokens decoded along, so merges and leading spaces come out as in the full text


def encode_prompt(tokenizer, text: str, chat: bool = True) -> list[int]:
    """Token ids of `text`, wrapped as one user turn of the model's chat template when `chat` is true."""
    if chat and tokenizer.chat_template:
        return list(tokenizer.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                                  tokenize=True, return_dict=False))
    return tokenizer.encode(text, add_special_tokens=False)


def token_pieces(tokenizer, token_ids: list[int]) -> list[str]:
    """The text each token adds, decoded incrementally; the pieces concatenate to the decoded text.

    A token that ends mid-character gets an empty piece and the character goes to the token completing it.
    """
    decode = tokenizer.decode
    pieces, emitted_upto = [], 0  # tokens [0, emitted_upto) have their text in `pieces`
    for end in range(1, len(token_ids) + 1):
        start = max(0, emitted_upto - CONTEXT_TOKENS)
        before = decode(token_ids[start:emitted_upto])
        text = decode(token_ids[start:end])
        if text.endswith(REPLACEMENT_CHAR) or not text.startswith(before):
            pieces.append("")
            continue
        pieces.append(text[len(before):])
        emitted_upto = end
    full, joined = decode(token_ids), "".join(pieces)
    if pieces and full.startswith(joined):
        pieces[-1] += full[len(joined):]  # what is still pending, e.g. an unfinished character at the end
    return pieces
