"""Text a user gave (a trace's title, a file name), made safe to put inside Markdown: shown as typed, never as
links, images, HTML, colour directives or headings."""

import re

MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&])")


def plain(text: str, most: int = 200) -> str:
    """`text` on one line, at most `most` characters, every Markdown sign backslash-escaped."""
    line = " ".join(str(text).split())
    line = line if len(line) <= most else line[:most - 1] + "…"
    return MARKDOWN_PUNCTUATION.sub(r"\\\1", line)
