"""One check for text that comes from people: every view and endpoint asks it.

Text that is only spaces and invisible characters is blank everywhere: in the sentence box, a pair to
explain, a search, an API call. Invisible means drawing nothing: control and format characters
(zero-width spaces, bidi marks), Unicode's default-ignorable characters (variation selectors, the
Hangul fillers, the Khmer inherent vowels ...), the blank Braille pattern, and combining marks with
nothing to combine with. A sentence needs one letter, digit, punctuation mark or symbol.

Example::

    >>> check_text("A cat sleeps.", "Sentence A")
    'A cat sleeps.'
    >>> check_text("\\u200b \\u200b", "Sentence A")
    Traceback (most recent call last):
    ...
    ValueError: Sentence A is empty (or only spaces and invisible characters); write a sentence.
    >>> clean_text("a\\u200bb\\tc")
    ('ab c', 1)
"""

from __future__ import annotations

import unicodedata


ZWJ = "\u200d"
TAGS = range(0xE0020, 0xE0080)  # an emoji flag's tag letters and its cancel tag (🏴 + tags + cancel: Scotland's flag)


def _pictographic(char: str) -> bool:
    """An emoji's base or part (Unicode's Extended_Pictographic, near enough: symbols "So" and the emoji blocks)."""
    code = ord(char)
    return unicodedata.category(char) == "So" or 0x1F000 <= code <= 0x1FAFF or 0x2600 <= code <= 0x27BF


def clean_text(text: str) -> tuple[str, int]:
    """Remove invisible and control characters; tabs, line breaks and odd spaces become normal spaces. Returns the
    text and how many characters were removed. An emoji sequence stays whole: a zero-width joiner between
    two emoji (👨‍👩‍👧 is one family, not three faces) and a flag's tag letters are kept.

    >>> clean_text("👨\u200d👩\u200d👧 a\u200bb\x07")
    ('👨\u200d👩\u200d👧 ab', 2)
    """
    if text.isprintable():  # fast path: no control, format or non-ASCII space characters
        return text, 0
    kept: list[str] = []
    removed = 0
    for i, char in enumerate(text):
        category = unicodedata.category(char)
        if char.isspace() or category in ("Zs", "Zl", "Zp"):  # a tab, a line break in a cell: a space
            kept.append(" ")
        elif category[0] != "C":
            kept.append(char)
        elif _in_emoji(text, i, kept):
            kept.append(char)
        else:  # Cc control, Cf zero-width/format, Cs, Co, Cn
            removed += 1
    return "".join(kept), removed


def _in_emoji(text: str, i: int, kept: list[str]) -> bool:
    """Whether the format character at ``text[i]`` is part of an emoji sequence: a joiner between two emoji
    (a variation selector may follow the first), or a tag letter after a black flag."""
    char = text[i]
    if char == ZWJ:
        before = next((c for c in reversed(kept) if c not in "\ufe0e\ufe0f" and not 0x1F3FB <= ord(c) <= 0x1F3FF), "")
        return bool(before) and _pictographic(before) and i + 1 < len(text) and _pictographic(text[i + 1])
    if ord(char) in TAGS:
        return bool(kept) and (kept[-1] == "\U0001F3F4" or ord(kept[-1]) in TAGS)
    return False


# Unicode's Default_Ignorable_Code_Point characters outside the C* categories (DerivedCoreProperties.txt)
# and the blank Braille pattern: fonts draw nothing for them, yet they are letters or marks to Python.
DRAW_NOTHING = frozenset(chr(c) for first, last in (
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x2800, 0x2800), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0x1BCA0, 0x1BCA3), (0xE0100, 0xE01EF)) for c in range(first, last + 1))


def is_blank(text: str) -> bool:
    """Whether nothing visible is left once invisible characters are removed: no letter, digit,
    punctuation mark or symbol that draws something.

    >>> is_blank("\u3164\u2800 \u115f"), is_blank("\u0301\u0301"), is_blank("é"), is_blank("?")
    (True, True, False, False)
    """
    return not any(unicodedata.category(char)[0] in "LNPS" and char not in DRAW_NOTHING
                   for char in clean_text(text)[0])


def check_text(value: object, name: str, *, max_chars: int | None = None, blank_hint: str = "write a sentence",
               allow_blank: bool = False) -> str:
    """``value`` as it is, or a ValueError naming ``name`` (e.g. "Sentence A", "Text #3") and the problem:
    not text, blank (unless ``allow_blank``), not valid Unicode, or longer than ``max_chars``."""
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text, not {type(value).__name__}.")
    if not allow_blank and is_blank(value):
        raise ValueError(f"{name} is empty (or only spaces and invisible characters); {blank_hint}.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # tokenizers cannot take it (a TypeError deep inside them)
        raise ValueError(f"{name} contains an unpaired surrogate, which is not valid Unicode text; remove "
                         "that character.") from None
    if max_chars is not None and len(value) > max_chars:
        raise ValueError(f"{name} has {len(value):,} characters; the limit here is {max_chars:,}. Shorten it.")
    return value
