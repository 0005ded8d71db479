"""Built-in example sentence sets, written for this app.

Each set is text-box content (one sentence per line, optionally ``group | sentence``), parsed like
user input by :mod:`sbert_demo.data.sentences`. Every set shows one lesson about naive versus siamese
embeddings; its description says which.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

logger = logging.getLogger(__name__)

@dataclass(frozen=True)
class ExampleSet:
    key: str
    title: str
    description: str
    text: str  # text-box content: one sentence per line, optionally "group | sentence"


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
