"""Text made only of invisible characters is blank in every view and endpoint (one check for all)."""

from __future__ import annotations

import pytest

from sbert_demo.analysis.explanation import explain_pair
from sbert_demo.data.sentences import parse_sentences
from sbert_demo.data.text import check_text, clean_text, is_blank
from sbert_demo.encoding.encoder import encode
from sbert_demo.explore.corpus_map import check_query

INVISIBLE = "\u200b\u200d\u2060 \ufeff\u202e"  # zero-width space/joiner, word joiner, BOM, bidi override


def test_invisible_only_is_blank() -> None:
    assert is_blank(INVISIBLE) and clean_text(INVISIBLE) == (" ", 5)
    assert not is_blank("a\u200b")
    with pytest.raises(ValueError, match="Sentence A is empty \\(or only spaces and invisible characters\\)"):
        check_text(INVISIBLE, "Sentence A")


def test_every_view_refuses_invisible_only_text() -> None:
    with pytest.raises(ValueError, match="Text #2 is empty"):
        encode("glove-6b-50d", ["A cat sleeps.", INVISIBLE])  # the Explore / STS encoder and its API
    with pytest.raises(ValueError, match="Sentence B is empty"):
        explain_pair(["glove-6b-50d"], "A cat sleeps.", INVISIBLE)  # Why naive fails: explain a pair
    with pytest.raises(ValueError, match="Only one sentence"):
        parse_sentences(f"A cat sleeps.\n{INVISIBLE}")  # the sentence box drops the blank line
    assert check_query(INVISIBLE) == ""  # a corpus search for nothing matches nothing


def test_check_text_names_the_problem() -> None:
    with pytest.raises(ValueError, match="Sentence A must be text, not int"):
        check_text(3, "Sentence A")
    with pytest.raises(ValueError, match="unpaired surrogate"):
        check_text("half \ud83d", "Sentence A")
    with pytest.raises(ValueError, match="has 11 characters; the limit here is 10"):
        check_text("x" * 11, "The search", max_chars=10)
    assert check_text("", "The search", allow_blank=True) == ""


def test_emoji_sequences_stay_whole_while_other_invisible_characters_go() -> None:
    from sbert_demo.data.text import clean_text

    family, rainbow, coder = "👨\u200d👩\u200d👧\u200d👦", "🏳️\u200d🌈", "🧑🏽\u200d💻"
    scotland = "🏴\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"
    for emoji in (family, rainbow, coder, scotland):
        assert clean_text(f"A {emoji} here.") == (f"A {emoji} here.", 0)
    assert clean_text("join\u200dno") == ("joinno", 1)  # a joiner between letters is no emoji's
    assert clean_text("👍\u200d") == ("👍", 1)  # nor one that joins nothing
    assert clean_text("tab\there\x07\u200b!") == ("tab here!", 2)
