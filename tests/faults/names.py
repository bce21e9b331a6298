"""Hostile but valid names: every punctuation character a name may contain
(letters, digits and ``_ - . : / @ = + , # ~ |``)."""

PUNCTUATION = "_-.:/@=+,#~|"
HOSTILE = "h|o,s:t/i@l=e+#~._-"
HOSTILE_QUEUE = "q|u,e:u/e@=+#~._-"
assert set(PUNCTUATION) <= set(HOSTILE) and set(PUNCTUATION) <= set(HOSTILE_QUEUE)


def hostile(suffix: str) -> str:
    """A name with every allowed punctuation character, made unique by ``suffix``."""
    return f"{HOSTILE}|{suffix}"
