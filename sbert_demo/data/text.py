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


def clean_text(text: str) -> tuple[str, int]:
    """Remove invisible and control characters; tabs and odd spaces become normal spaces. Returns the
    text and how many characters were removed."""
    if text.isprintable():  # fast path: no control, format or non-ASCII space characters
        return text, 0
    kept: list[str] = []
    removed = 0
    for char in text:
        category = unicodedata.category(char)
        if char == "\t" or category in ("Zs", "Zl", "Zp"):
            kept.append(" ")
        elif category[0] == "C":  # Cc control, Cf zero-width/format, Cs, Co, Cn
            removed += 1
        else:
            kept.append(char)
    return "".join(kept), removed


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
