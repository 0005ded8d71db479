"""Example sets (sbert_demo.data.examples) and sentence parsing (sbert_demo.data.sentences)."""

from __future__ import annotations

import pytest

from sbert_demo.data import sentences
from sbert_demo.data.examples import EXAMPLE_SETS, get_example
from sbert_demo.data.sentences import UNGROUPED, ParsedSentences, parse_sentences, read_sentence_file

REQUIRED = ["paraphrase-questions", "near-duplicates", "bag-of-words-traps", "multi-topic",
            "naive-bert-alike"]


@pytest.mark.parametrize("key", sorted(EXAMPLE_SETS))
def test_every_example_set_parses_cleanly_with_groups(key):
    example = EXAMPLE_SETS[key]
    parsed = parse_sentences(example.text)
    assert example.key == key and example.title and example.description
    assert parsed.notes == []  # no blank lines, duplicates or stray characters in our own sets
    assert parsed.groups is not None and UNGROUPED not in parsed.groups
    assert len(set(parsed.groups)) >= 2
    assert all(count >= 2 for count in map(parsed.groups.count, set(parsed.groups)))


@pytest.mark.parametrize(
    ("key", "min_sentences", "min_groups", "min_per_group"),
    [
        ("paraphrase-questions", 15, 5, 3),
        ("near-duplicates", 12, 4, 3),
        ("bag-of-words-traps", 8, 4, 2),
        ("multi-topic", 40, 6, 5),
        ("naive-bert-alike", 10, 5, 2),
    ],
)
def test_required_example_sets_are_big_enough(key, min_sentences, min_groups, min_per_group):
    parsed = parse_sentences(EXAMPLE_SETS[key].text)
    counts = {g: parsed.groups.count(g) for g in parsed.groups}
    assert len(parsed.sentences) >= min_sentences
    assert len(counts) >= min_groups
    assert min(counts.values()) >= min_per_group


def test_near_duplicates_has_dup_and_topic_groups():
    groups = set(parse_sentences(EXAMPLE_SETS["near-duplicates"].text).groups)
    assert {"dup-A", "topic-A"} <= groups


def test_bag_of_words_traps_contains_the_classic_pairs():
    sentences = parse_sentences(EXAMPLE_SETS["bag-of-words-traps"].text).sentences
    assert {"The movie was good.", "The movie was not good."} <= set(sentences)
    assert {"A man bites a dog.", "A dog bites a man."} <= set(sentences)


def test_get_example_names_valid_keys_for_unknown_key():
    assert get_example("multi-topic").key == "multi-topic"
    assert set(REQUIRED) <= set(EXAMPLE_SETS)
    with pytest.raises(ValueError, match="paraphrase-questions"):
        get_example("nope")


def test_groups_blank_lines_and_whitespace():
    parsed = parse_sentences("a | x\n\n b|y")
    assert parsed.sentences == ["x", "y"]
    assert parsed.groups == ["a", "b"]
    assert parsed.notes == ["Skipped 1 blank line."]


def test_no_groups_gives_none_and_trailing_newline_is_not_a_blank_line():
    parsed = parse_sentences("First sentence.\r\nSecond sentence.\n")
    assert parsed == ParsedSentences(["First sentence.", "Second sentence."], None, [], [1, 2])  # line numbers


def test_only_first_bar_splits_and_long_prefix_is_not_a_group():
    long_prefix = "x" * 41
    parsed = parse_sentences(f"g | a | b\n{long_prefix} | tail")
    assert parsed.sentences == ["a | b", f"{long_prefix} | tail"]
    assert parsed.groups == ["g", UNGROUPED]
    assert "1 line had no group label; it was put in group 'ungrouped'." in parsed.notes
    assert any("Line 2 has a '|' after more than 40 characters" in n for n in parsed.notes)


def test_empty_group_label_goes_to_ungrouped_with_a_note():
    parsed = parse_sentences("| x\na | y\nb | \nc | z")
    assert parsed.sentences == ["x", "y", "z"]
    assert parsed.groups == [UNGROUPED, "a", "c"]
    assert "Line 1 had an empty group label; it was put in group 'ungrouped'." in parsed.notes
    assert "Line 3 has a group label but no sentence and was skipped." in parsed.notes


def test_invisible_and_control_characters_are_removed_and_spaces_normalised():
    parsed = parse_sentences("a\u200bb\x07c\nd\u00a0e\tf\ufeff")
    assert parsed.sentences == ["abc", "d e f"]
    assert parsed.notes == ["Removed 3 invisible or control characters."]


def test_long_sentences_are_truncated_with_a_note():
    parsed = parse_sentences("abcdefgh\nxy", max_chars=5)
    assert parsed.sentences == ["abcde", "xy"]
    assert parsed.notes == ["Sentence 1 was longer than 5 characters and cut to that length."]


def test_duplicates_are_kept_and_noted():
    parsed = parse_sentences("x\ny\nx\nz\nx")
    assert parsed.sentences == ["x", "y", "x", "z", "x"]
    assert parsed.notes == ["Sentences 1, 3 and 5 are identical."]


def test_many_duplicates_are_summarised():
    parsed = parse_sentences("\n".join(["a", "b", "c", "d"] * 2))
    assert len(parsed.notes) == 1
    assert parsed.notes[0].startswith("4 sentences repeat earlier ones (for example, sentences 1 and 5")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Enter at least two sentences, one per line."),
        ("  \n\t\n\u200b", "Enter at least two sentences, one per line."),
        ("group |", "Enter at least two sentences"),
        ("Only this one.", "Only one sentence"),
    ],
)
def test_too_few_sentences_raise(text, message):
    with pytest.raises(ValueError, match=message):
        parse_sentences(text)


@pytest.mark.parametrize("value", [None, 42, b"a\nb", ["a", "b"]])
def test_non_text_input_raises(value):
    with pytest.raises(ValueError, match="must be given as text"):
        parse_sentences(value)


def test_too_many_sentences_raise_with_both_counts():
    with pytest.raises(ValueError, match="2,345 sentences; the limit is 2,000"):
        parse_sentences("\n".join(f"s{i}" for i in range(2345)))


# --- files -------------------------------------------------------------------------------------


def test_txt_file_uses_text_box_format(tmp_path):
    path = tmp_path / "s.txt"
    path.write_text("pets | A cat.\npets | A dog.\n", encoding="utf-8")
    parsed = read_sentence_file(path)
    assert (parsed.sentences, parsed.groups) == (["A cat.", "A dog."], ["pets", "pets"])


@pytest.mark.parametrize(
    ("name", "content", "groups"),
    [
        ("s.csv", "Text,Label\nA cat | sleeps.,pets\n\"A dog, barking.\",pets\n", ["pets", "pets"]),
        ("s.tsv", "id\tsentence\ttopic\n1\tA cat | sleeps.\tpets\n2\tA dog, barking.\t\n",
         ["pets", UNGROUPED]),
        ("s.csv", "\ufeffquery\nA cat | sleeps.\n\"A dog, barking.\"\n", None),
    ],
)
def test_table_files(tmp_path, name, content, groups):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    parsed = read_sentence_file(path)
    assert parsed.sentences == ["A cat | sleeps.", "A dog, barking."]  # '|' is not a group here
    assert parsed.groups == groups


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("e.txt", b"", "is empty"),
        ("e.csv", b"  \n", "is empty"),
        ("b.txt", b"abc\x00def\nxyz", "is not UTF-8 text"),
        ("l.csv", "sentence\ncaf\u00e9\nna\u00efve\n".encode("latin-1"), "is not UTF-8 text"),
        ("m.csv", b"foo,bar\n1,2\n", "no sentence column.*'sentence', 'text', 'sentences' or 'query'"),
        ("o.csv", b"sentence\nonly one\n", "contains only one sentence"),
        ("d.docx", b"hello", "not a .txt, .csv or .tsv file"),
    ],
)
def test_bad_files_raise(tmp_path, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ValueError, match=message):
        read_sentence_file(path)


def test_missing_and_oversized_files_raise(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="was not found"):
        read_sentence_file(tmp_path / "absent.txt")
    monkeypatch.setattr(sentences, "MAX_FILE_BYTES", 10)
    path = tmp_path / "big.txt"
    path.write_text("a sentence\nanother sentence\n")
    with pytest.raises(ValueError, match="files up to 0 MB|Upload a smaller file"):
        read_sentence_file(path)


def test_file_limits_are_passed_on(tmp_path):
    path = tmp_path / "s.txt"
    path.write_text("a\nb\nc\n")
    with pytest.raises(ValueError, match="s.txt has 3 sentences; the limit is 2"):
        read_sentence_file(path, max_sentences=2)
