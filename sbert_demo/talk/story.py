"""What each step of the talk computes: the numbers behind its figures, no figures and no UI.

The story (the presenter view's eight steps), each step's numbers from the same core as the tabs:

1. the cone: cosine histograms of random / similar / unrelated STSb pairs, GloVe vs. MiniLM;
2. paraphrases: similarity matrices of the paraphrased-questions set under both models;
3. the STS benchmark: Spearman on STSb test (whitened GloVe too), beside the paper's marks;
4. seven benchmarks: the paper's Table 1 on STS12–16, STSb and SICK-R;
5. which words make two sentences similar: the exact pair explanation under both models;
6. the cost: a cross-encoder on every pair against a bi-encoder, timed on this machine;
7. training: siamese GloVe on the shipped NLI pairs (:mod:`.training`, a background job);
8. the room: the audience's own sentences (an audience board), mapped live.

Steps 1–6 are pure computations (:attr:`Step.compute`), kept by :mod:`.rehearsal`; 7 and 8 are live.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis.anisotropy import anisotropy_many
from ..analysis.explanation import explain_pair
from ..benchmark.cost import measure_cost
from ..benchmark.evaluation import evaluate_many
from ..benchmark.table1 import table1
from ..data.benchmarks import sts_split
from ..data.examples import EXAMPLE_SETS
from ..data.sentences import parse_sentences
from ..encoding.encoder import encode
from ..explore.similarity import cosine_matrix
from ..models.per_model import Progress
from ..views import VIEWS

NAIVE, SIAMESE = VIEWS["talk"].default_models
WHITENED = f"{NAIVE}+whiten"
PAIR = ("A man is playing a guitar.", "Someone plays the guitar on stage.")
PARAPHRASE_SET = "paraphrase-questions"
BENCHMARK_SPLIT = "test"  # the split the paper reports, so its marks sit beside a run of the same split
COST_N = 2_000  # sentences the cost step really runs (seconds, live); the plot goes on to 100,000


@dataclass(frozen=True)
class Paraphrases:
    sentences: list[str]
    groups: list[str]
    labels: tuple[str, str]  # the two models' labels
    similarities: tuple[np.ndarray, np.ndarray] = field(repr=False)


def _first_failure(outcomes) -> None:
    """A step shows both models or none: the first model that could not run stops it, with its reason."""
    failed = next((outcome for outcome in outcomes if outcome.error), None)
    if failed is not None:
        raise ValueError(f"{failed.label or failed.key}: {failed.error}")


def _ok(outcomes: list) -> list:
    _first_failure(outcomes)
    return outcomes


def cone(progress: Progress) -> list:
    return _ok(anisotropy_many([NAIVE, SIAMESE], "train", progress=progress))


def paraphrases(progress: Progress) -> Paraphrases:
    from ..models.registry import get_registry

    parsed = parse_sentences(EXAMPLE_SETS[PARAPHRASE_SET].text)
    sims = []
    for i, key in enumerate((NAIVE, SIAMESE)):
        progress(i / 2, f"{key}: embeddings")
        sims.append(cosine_matrix(encode(key, parsed.sentences, fast=True).embeddings))
    registry = get_registry()
    return Paraphrases(list(parsed.sentences), list(parsed.groups), (registry.get(NAIVE).label,
                       registry.get(SIAMESE).label), (sims[0], sims[1]))


def benchmark(progress: Progress) -> list:
    return _ok(list(evaluate_many([NAIVE, WHITENED, SIAMESE], sts_split(BENCHMARK_SPLIT), progress=progress)))


def seven_sets(progress: Progress) -> list:
    return _ok(table1([NAIVE, WHITENED, SIAMESE], progress=progress))


def explanation(progress: Progress) -> list:
    progress(0.1, "Reading token vectors")
    return _ok(explain_pair([NAIVE, SIAMESE], *PAIR))


def cost(progress: Progress):
    return measure_cost(COST_N, SIAMESE, progress=progress)


@dataclass(frozen=True)
class Step:
    name: str
    caption: str
    compute: Callable[[Progress], Any] | None = None  # the step's numbers; None: live (training, room)
    two_figures: bool = False
    room: bool = False  # the audience board


STEPS: tuple[Step, ...] = (
    Step("The cone", "Naive sentence vectors all point the same way: even random pairs of sentences score a cosine "
                     "of 0.5 with averaged GloVe. SBERT spreads them out (0.03), so a high cosine means something.",
         cone, two_figures=False),
    Step("Paraphrases", "Questions that mean the same thing, worded differently. Averaged GloVe rates almost every "
                        "pair alike; SBERT lights up the blocks of paraphrases.", paraphrases, two_figures=True),
    Step("The benchmark", "Spearman correlation with human similarity scores on STSb test, beside the SBERT paper's "
                          "marks. Whitening GloVe (no training) helps; siamese training helps far more.", benchmark),
    Step("Seven benchmarks", "One benchmark can be a fluke; seven are the argument. The paper's Table 1, computed "
                             "live on STS12–16, STSb and SICK-R: SBERT leads on every one.", seven_sets),
    Step("Why", f"A: “{PAIR[0]}” B: “{PAIR[1]}” Each cell is one word pair's exact share of the cosine (mean "
                "pooling). GloVe adds up every word against every word; SBERT's tokens already carry their context.",
         explanation, two_figures=True),
    Step("The cost", "Why embeddings at all: a cross-encoder must read every pair; a bi-encoder reads each sentence "
                     "once. Timed live on this machine, extrapolated to 100,000 sentences.", cost),
    Step("Training", "Siamese training of GloVe on the NLI pairs shipped with this app: the STSb dev Spearman "
                     "rises within seconds."),
    Step("Your sentences", "Scan the QR code and send a sentence. Left averaged GloVe, right SBERT: the same words, "
                           "two maps. Which one groups what you meant?", two_figures=True, room=True),
)
TRAINING_STEP = 6
ROOM_STEP = len(STEPS) - 1


def check_step(step: object) -> int:
    """``step`` (0-based) if it is one of the story's, else a ValueError naming the range."""
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < len(STEPS):
        raise ValueError(f"Choose a step from 1 to {len(STEPS)}.")
    return step
