"""Is a sentence shown to a Chinese session Chinese? (an English sentence left in it fails)"""

import re

ENGLISH_SENTENCE = re.compile(r"[A-Za-z]{2,}(?: [A-Za-z]{2,}){2,}")
CHINESE = re.compile(r"[\u4e00-\u9fff]")


def chinese_only(shown: str) -> bool:
    return bool(CHINESE.search(shown)) and not ENGLISH_SENTENCE.search(shown)
