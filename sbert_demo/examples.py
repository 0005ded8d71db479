"""Built-in example sentence sets, and parsing of the sentence text box and uploaded files.

The text box holds one sentence per line, optionally prefixed by a group label:
``group | sentence``. Groups let the app measure within-group versus between-group similarity.

Example::

    >>> parsed = parse_sentences("pets | A cat sleeps.\\npets | A dog barks.\\nThe bus is late.")
    >>> parsed.groups
    ['pets', 'pets', 'ungrouped']
"""

from __future__ import annotations

import csv
import io
import logging
import unicodedata
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

UNGROUPED = "ungrouped"
MAX_GROUP_CHARS = 40
MAX_FILE_BYTES = 5 * 1024 * 1024
SENTENCE_COLUMNS = ("sentence", "text", "sentences", "query")
GROUP_COLUMNS = ("group", "label", "topic", "category", "cluster")
_MAX_LISTED = 5  # notes list at most this many items before summarising


@dataclass(frozen=True)
class ExampleSet:
    key: str
    title: str
    description: str
    text: str  # text-box content: one sentence per line, optionally "group | sentence"


@dataclass(frozen=True)
class ParsedSentences:
    sentences: list[str]
    groups: list[str] | None
    notes: list[str]  # remarks for the user, e.g. "Skipped 3 blank lines."


def _example(key: str, title: str, description: str, text: str) -> ExampleSet:
    lines = [line.strip() for line in text.strip().splitlines()]
    return ExampleSet(key, title, description, "\n".join(line for line in lines if line))


_PARAPHRASE_QUESTIONS = """
passport | How do I renew my passport?
passport | What's the process for getting a new passport when mine expires?
passport | My passport runs out next month; how can I get it renewed?
passport | What do I need to do to replace an expired passport?
password | How can I reset my password?
password | I forgot my password. How do I change it?
password | How do I get back into my account if I can't remember the password?
password | Where do I go to set a new login password?
weather | Will it rain tomorrow?
weather | What's the weather forecast for tomorrow?
weather | Should I bring an umbrella tomorrow?
weather | Is tomorrow going to be wet or dry?
pasta | How long should I boil spaghetti?
pasta | How many minutes does pasta need to cook?
pasta | What's the right cooking time for dried pasta?
pasta | How can I tell when boiled pasta is done?
cancel-order | How do I cancel my order?
cancel-order | Can I still stop an order I placed yesterday?
cancel-order | Is there a way to call off a purchase before it ships?
cancel-order | I want to cancel something I bought online. What should I do?
sleep | How can I fall asleep faster?
sleep | What helps with getting to sleep quickly at night?
sleep | Any tips for people who lie awake for hours before falling asleep?
sleep | How do I stop tossing and turning when I go to bed?
"""

_NEAR_DUPLICATES = """
dup-A | The city council approved the new bike lane on Main Street on Tuesday.
dup-A | On Tuesday, the city council approved a new bike lane on Main Street.
dup-A | The new Main Street bike lane was approved by the city council on Tuesday.
topic-A | Cyclists have complained about the traffic on Main Street for years.
topic-A | The city council will debate its transport budget next month.
topic-A | Several shop owners worry that a bike lane will take away parking spaces.
dup-B | The company's quarterly profit rose 12 percent, beating analysts' expectations.
dup-B | Quarterly profit at the company climbed 12%, ahead of what analysts expected.
dup-B | The firm beat analyst forecasts as its profit for the quarter grew by 12 percent.
topic-B | Analysts expect the company to announce job cuts later this year.
topic-B | The company's shares have been volatile since the new CEO took over.
topic-B | Its main competitor reported weaker sales in the same quarter.
dup-C | Scientists discovered a new species of frog in the Peruvian rainforest.
dup-C | A previously unknown frog species has been found by researchers in Peru's rainforest.
dup-C | Researchers have identified a new kind of frog living in the rainforest of Peru.
topic-C | Deforestation threatens many amphibians in South America.
topic-C | Frogs absorb water and oxygen through their skin.
topic-C | The expedition spent six weeks collecting insects and plants in the Amazon basin.
"""

_BAG_OF_WORDS_TRAPS = """
negation-1 | The movie was good.
negation-1 | The movie was not good.
negation-2 | I would recommend this hotel to my friends.
negation-2 | I would never recommend this hotel to my friends.
roles-1 | A man bites a dog.
roles-1 | A dog bites a man.
roles-2 | The teacher thanked the student.
roles-2 | The student thanked the teacher.
roles-3 | The bank lent money to the startup.
roles-3 | The startup lent money to the bank.
word-order | She only told him that she loved him.
word-order | She told him that she only loved him.
word-sense | Time flies like an arrow.
word-sense | Fruit flies like a banana.
same-meaning | The film was great.
same-meaning | I really enjoyed that movie.
"""

_MULTI_TOPIC = """
sports | The striker scored twice in the second half to win the match.
sports | Our basketball team lost in overtime last night.
sports | She has been training every morning for the marathon.
sports | The referee showed a red card after a dangerous tackle.
sports | Tennis players need quick footwork and a strong serve.
sports | The cycling race ended with a sprint up the final hill.
cooking | Fry the onions slowly until they turn golden brown.
cooking | This soup tastes better if you add fresh basil at the end.
cooking | Knead the dough for ten minutes before letting it rise.
cooking | He roasted the vegetables with olive oil and garlic.
cooking | Season the steak with salt just before it goes on the grill.
cooking | Whisk the eggs and sugar until the mixture is pale and fluffy.
finance | The central bank raised interest rates by a quarter point.
finance | Index funds are a cheap way to invest in the stock market.
finance | Mortgage payments went up after the rate change.
finance | She moved her savings into a high-interest account.
finance | The company's shares fell sharply after the earnings report.
finance | Inflation reduces what your money can buy over time.
space | The telescope captured images of a galaxy billions of light-years away.
space | Astronauts on the space station grow lettuce in microgravity.
space | The rover drilled into a rock on the surface of Mars.
space | A solar eclipse happens when the Moon passes between the Earth and the Sun.
space | The rocket's booster landed back on the launch pad.
space | Jupiter has dozens of moons, including four large ones.
health | Drinking enough water helps prevent headaches.
health | Regular exercise lowers the risk of heart disease.
health | The doctor ordered a blood test to check my iron levels.
health | Seven to eight hours of sleep a night supports the immune system.
health | Wash your hands often during flu season.
health | The vaccine is given in two doses a month apart.
programming | The function returns None when the list is empty.
programming | I fixed the crash by adding a missing null check.
programming | Python dictionaries keep their keys in insertion order.
programming | Write unit tests before you refactor the parser.
programming | The build fails because a dependency version is pinned too low.
programming | Use a hash map to look up values in constant time.
travel | Our flight to Lisbon was delayed by three hours.
travel | We booked a small guesthouse near the old town.
travel | Don't forget to check whether you need a visa.
travel | The night train through the Alps has amazing views.
travel | She packed only a carry-on bag for the two-week trip.
travel | The museum is a short walk from the central station.
music | The orchestra tuned their instruments before the concert.
music | He learned to play the guitar by watching online videos.
music | The band's new album mixes jazz with electronic beats.
music | She sang the chorus an octave higher than usual.
music | The drummer kept a steady rhythm throughout the song.
music | Tickets for the festival sold out in minutes.
"""

_NAIVE_BERT_ALIKE = """
pets | The cat is asleep on the sofa.
pets | My dog loves chasing the ball.
weather | It is raining again today.
weather | The sun is finally out.
food | I had soup for lunch.
food | This bread is still warm.
work | The meeting starts at nine.
work | I sent the report this morning.
transport | The bus is late again.
transport | My bike has a flat tyre.
gadgets | My phone battery is almost dead.
gadgets | The printer is out of ink.
family | My sister is visiting next week.
family | Grandpa turns eighty on Sunday.
shopping | The shop closes at six.
shopping | These shoes were on sale.
"""

_STSB_SAMPLE = """
pair-1 (gold 5.0) | A man is playing a guitar.
pair-1 (gold 5.0) | A man plays the guitar.
pair-2 (gold 3.8) | A woman is slicing an onion.
pair-2 (gold 3.8) | A woman is cutting up vegetables.
pair-3 (gold 3.0) | Two men are playing chess.
pair-3 (gold 3.0) | Two men are watching a game of chess.
pair-4 (gold 2.2) | A dog is running through the grass.
pair-4 (gold 2.2) | A dog is lying on the grass.
pair-5 (gold 1.0) | A man is riding a horse.
pair-5 (gold 1.0) | A woman is riding a bicycle.
pair-6 (gold 0.0) | A child is swimming in a pool.
pair-6 (gold 0.0) | Stock markets fell sharply on Monday.
"""

EXAMPLE_SETS: dict[str, ExampleSet] = {
    example.key: example
    for example in (
        _example(
            "paraphrase-questions",
            "Paraphrased questions",
            "Six groups of four questions that ask the same thing in different words. A good "
            "model gives high cosine within a group and low cosine between groups.",
            _PARAPHRASE_QUESTIONS,
        ),
        _example(
            "near-duplicates",
            "Near-duplicates vs. same topic",
            "Groups dup-A/B/C hold rewordings of one statement; topic-A/B/C hold sentences on the "
            "same subject that say something else. Duplicates should score clearly higher than "
            "sentences that merely share a topic.",
            _NEAR_DUPLICATES,
        ),
        _example(
            "bag-of-words-traps",
            "Bag-of-words traps",
            "Pairs that share (almost) all their words but differ in meaning: negation, swapped "
            "roles, word order, word sense, plus one pair with different words and the same "
            "meaning. Averaged word vectors rate swapped roles as identical.",
            _BAG_OF_WORDS_TRAPS,
        ),
        _example(
            "multi-topic",
            "Eight topics (for clustering)",
            "48 sentences from eight topics: sports, cooking, finance, space, health, "
            "programming, travel and music. Use it for the 2-D map and the clustering.",
            _MULTI_TOPIC,
        ),
        _example(
            "naive-bert-alike",
            "Short everyday sentences",
            "Short sentences about unrelated things, in pairs by topic. Naive BERT embeddings "
            "(CLS or mean pooling) rate almost every pair as similar; siamese models spread them "
            "out and keep each topic pair closer.",
            _NAIVE_BERT_ALIKE,
        ),
        _example(
            "stsb-sample",
            "STSb-style pairs",
            "Six pairs in the style of the STS benchmark, from equivalent to unrelated. The gold "
            "scores in the labels are our own rough ratings on the 0-5 STSb scale.",
            _STSB_SAMPLE,
        ),
    )
}
DEFAULT_EXAMPLE = "paraphrase-questions"


def get_example(key: str) -> ExampleSet:
    """Return the example set called ``key``."""
    try:
        return EXAMPLE_SETS[key]
    except KeyError:
        raise ValueError(
            f"Unknown example set {key!r}; choose one of {', '.join(EXAMPLE_SETS)}."
        ) from None


# --- parsing ---------------------------------------------------------------------------------

# One input record before cleaning: (line number in the source, group label or None, sentence).
_Record = tuple[int, "str | None", str]


def parse_sentences(
    text: str, max_sentences: int = 2000, max_chars: int = 20000
) -> ParsedSentences:
    """Parse the text box: one sentence per line, optionally ``group | sentence``.

    Example::

        >>> parse_sentences("a | x\\n\\n b|y").sentences
        ['x', 'y']
    """
    if not isinstance(text, str):
        raise ValueError(f"Sentences must be given as text, not as {type(text).__name__}.")
    return _parse_text(text, None, max_sentences, max_chars)


def read_sentence_file(
    path: str | Path, max_sentences: int = 2000, max_chars: int = 20000
) -> ParsedSentences:
    """Read sentences from a .txt file (text-box format) or a .csv/.tsv file with a header.

    CSV/TSV files need a sentence column (one of ``SENTENCE_COLUMNS``) and may have a group column
    (one of ``GROUP_COLUMNS``). The limits are those of :func:`parse_sentences`.
    """
    path = Path(path)
    name = path.name
    if not path.is_file():
        raise ValueError(f"The file {name} was not found; upload it again.")
    suffix = path.suffix.lower()
    if suffix not in (".txt", ".csv", ".tsv"):
        raise ValueError(f"{name} is not a .txt, .csv or .tsv file; upload one of those.")
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ValueError(
            f"{name} is {size / 1024**2:.1f} MB; files up to {MAX_FILE_BYTES // 1024**2} MB are "
            "accepted. Upload a smaller file."
        )
    data = path.read_bytes()
    if not data.strip():
        raise ValueError(f"{name} is empty; it needs at least two sentences.")
    text = _decode(data, name)
    if suffix == ".txt":
        return _parse_text(text, name, max_sentences, max_chars)
    records = _table_records(text, "\t" if suffix == ".tsv" else ",", name)
    return _finish(records, "Row", name, max_sentences, max_chars)


def _parse_text(
    text: str, source: str | None, max_sentences: int, max_chars: int
) -> ParsedSentences:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[-1] == "":  # a final newline ends the last line; it is not a blank line
        lines.pop()
    records: list[_Record] = []
    long_labels: list[int] = []
    for number, line in enumerate(lines, start=1):
        group, sentence = _split_group(line)
        if group is None and "|" in line:
            long_labels.append(number)
        records.append((number, group, sentence))
    parsed = _finish(records, "Line", source, max_sentences, max_chars)
    if long_labels and parsed.groups is not None:
        parsed.notes.append(
            f"{_numbered('Line', long_labels)} {_verb(long_labels, 'has', 'have')} a '|' after "
            f"more than {MAX_GROUP_CHARS} characters, so the whole line was read as the sentence."
        )
    return parsed


def _split_group(line: str) -> tuple[str | None, str]:
    head, sep, tail = line.partition("|")
    if sep and len(head.strip()) <= MAX_GROUP_CHARS:
        return head.strip(), tail
    return None, line


def _decode(data: bytes, name: str) -> str:
    message = f"{name} is not UTF-8 text; save it as UTF-8 plain text or CSV and upload it again."
    if b"\x00" in data:
        raise ValueError(message)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(message) from None


def _table_records(text: str, delimiter: str, name: str) -> list[_Record]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next((row for row in reader if any(cell.strip() for cell in row)), None)
        columns = [cell.strip().lower() for cell in header or []]
        sentence_col = _find_column(columns, SENTENCE_COLUMNS)
        if sentence_col is None:
            found = ", ".join(repr(c) for c in columns[:10]) or "none"
            raise ValueError(
                f"{name} has no sentence column. Name one header column "
                f"{_alternatives(SENTENCE_COLUMNS)}, and optionally one "
                f"{_alternatives(GROUP_COLUMNS)} (columns found: {found})."
            )
        group_col = _find_column(columns, GROUP_COLUMNS)
        records: list[_Record] = []
        for row in reader:
            sentence = row[sentence_col] if sentence_col < len(row) else ""
            group = None
            if group_col is not None:
                group = (row[group_col] if group_col < len(row) else "").strip()
            records.append((reader.line_num, group, sentence))
    except csv.Error as exc:
        message = f"{name} could not be read as a table ({exc}); check its format."
        raise ValueError(message) from None
    return records


def _find_column(columns: list[str], aliases: tuple[str, ...]) -> int | None:
    for alias in aliases:
        if alias in columns:
            return columns.index(alias)
    return None


def _alternatives(names: tuple[str, ...]) -> str:
    quoted = [f"'{n}'" for n in names]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _clean(text: str) -> tuple[str, int]:
    """Remove invisible and control characters; tabs and odd spaces become normal spaces."""
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


def _finish(
    records: list[_Record], unit: str, source: str | None, max_sentences: int, max_chars: int
) -> ParsedSentences:
    """Clean the records, check the count and describe every change in a note."""
    sentences: list[str] = []
    labels: list[str | None] = []
    blank = removed = 0
    label_only: list[int] = []
    empty_label: list[int] = []
    for number, group, sentence in records:
        sentence, removed_here = _clean(sentence)
        sentence = sentence.strip()
        if group is not None:
            group, removed_group = _clean(group)
            group = group.strip()
            removed_here += removed_group
        removed += removed_here
        if not sentence:
            if group:
                label_only.append(number)
            else:
                blank += 1
            continue
        if group == "":
            empty_label.append(number)
        sentences.append(sentence)
        labels.append(group)
    _check_count(len(sentences), source, max_sentences)

    notes: list[str] = []
    unit_plural = unit.lower() + "s"
    if blank:
        notes.append(f"Skipped {blank} blank {unit_plural if blank > 1 else unit.lower()}.")
    if label_only:
        notes.append(
            f"{_numbered(unit, label_only)} {_verb(label_only, 'has', 'have')} a group label but "
            "no sentence and was skipped."
        )
    if removed:
        notes.append(f"Removed {removed} invisible or control character{'s' * (removed > 1)}.")
    notes.extend(_truncate(sentences, max_chars))
    groups = _fill_groups(labels, unit, empty_label, notes)
    notes.extend(_duplicate_notes(sentences))
    for note in notes:
        logger.debug("parse note: %s", note)
    return ParsedSentences(sentences, groups, notes)


def _check_count(count: int, source: str | None, max_sentences: int) -> None:
    if count == 0:
        if source is None:
            raise ValueError("Enter at least two sentences, one per line.")
        raise ValueError(f"{source} contains no sentences; it needs at least two.")
    if count == 1:
        if source is None:
            raise ValueError("Only one sentence was found. Enter at least two, one per line.")
        raise ValueError(f"{source} contains only one sentence; it needs at least two.")
    if count > max_sentences:
        where = "The text" if source is None else source
        raise ValueError(
            f"{where} has {count:,} sentences; the limit is {max_sentences:,}. "
            "Remove some sentences and try again."
        )


def _truncate(sentences: list[str], max_chars: int) -> list[str]:
    """Cut over-long sentences in place; return the note about it, if any."""
    cut = [i for i, sentence in enumerate(sentences) if len(sentence) > max_chars]
    for i in cut:
        sentences[i] = sentences[i][:max_chars].rstrip()
    if not cut:
        return []
    numbers = [i + 1 for i in cut]
    return [
        f"{_numbered('Sentence', numbers)} {_verb(numbers, 'was', 'were')} longer than "
        f"{max_chars:,} characters and cut to that length."
    ]


def _fill_groups(
    labels: list[str | None], unit: str, empty_label: list[int], notes: list[str]
) -> list[str] | None:
    """Replace missing labels with 'ungrouped'; None when no line has a label at all."""
    if not any(labels):
        return None
    if empty_label:
        notes.append(
            f"{_numbered(unit, empty_label)} had an empty group label; "
            f"{_verb(empty_label, 'it was', 'they were')} put in group '{UNGROUPED}'."
        )
    unlabelled = sum(label is None for label in labels)
    if unlabelled:
        plural = unlabelled > 1
        notes.append(
            f"{unlabelled} {unit.lower()}{'s' * plural} had no group label; "
            f"{'they were' if plural else 'it was'} put in group '{UNGROUPED}'."
        )
    return [label or UNGROUPED for label in labels]


def _duplicate_notes(sentences: list[str]) -> list[str]:
    positions: dict[str, list[int]] = {}
    for number, sentence in enumerate(sentences, start=1):
        positions.setdefault(sentence, []).append(number)
    repeated = [numbers for numbers in positions.values() if len(numbers) > 1]
    if len(repeated) <= 3:
        return [f"Sentences {_join(numbers)} are identical." for numbers in repeated]
    extra = sum(len(numbers) - 1 for numbers in repeated)
    return [
        f"{extra} sentences repeat earlier ones (for example, sentences {_join(repeated[0])} are "
        "identical). Repeats are kept."
    ]


def _numbered(unit: str, numbers: list[int]) -> str:
    """'Line 5', 'Lines 5 and 8', or '12 lines (first: line 5)' when the list is long."""
    if len(numbers) == 1:
        return f"{unit} {numbers[0]}"
    if len(numbers) <= _MAX_LISTED:
        return f"{unit}s {_join(numbers)}"
    return f"{len(numbers)} {unit.lower()}s (the first is {unit.lower()} {numbers[0]})"


def _verb(numbers: list[int], singular: str, plural: str) -> str:
    return singular if len(numbers) == 1 else plural


def _join(numbers: list[int]) -> str:
    text = [str(n) for n in numbers]
    return text[0] if len(text) == 1 else ", ".join(text[:-1]) + " and " + text[-1]
