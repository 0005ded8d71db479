"""One way to run something for each chosen model: one outcome shape, one runner, one count check.

Every view compares models side by side, and any one of them may be unknown, unavailable offline,
of a kind that cannot do what the view needs, or fail on the input. :func:`run_per_model` resolves
each model once (:func:`~sbert_demo.models.loading.resolve`: entry, where it loads from, identity),
checks the kind's capability, runs the view's function on it and turns a ``ValueError`` into that
model's outcome, so one failing model never stops the others. Every per-model result is a
:class:`ModelOutcome` (a value, or ``error`` with a sentence), and progress is always
``(fraction done, what is happening)``.

Example::

    >>> outcomes = run_per_model(["glove-6b-50d", "nope"], lambda model, step: ModelOutcome.of(model),
    ...                          ModelOutcome)
    >>> [(o.key, o.error is None) for o in outcomes]
    [('glove-6b-50d', True), ('nope', False)]
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from .kinds import EMBEDS, kind_of
from .loading import ResolvedModel, notices, resolve
from .registry import Registry, get_registry, requested_keys

Progress = Callable[[float, str], None]  # (fraction done, what is happening): the one progress signature
O = TypeVar("O", bound="ModelOutcome")


@dataclass(frozen=True)
class ModelOutcome:
    """What one model gave a view; subclasses add the view's numbers (all with defaults)."""

    key: str
    label: str
    family: str
    error: str | None = None  # why the model could not run, as a sentence; None when it did
    notes: tuple[str, ...] = ()  # remarks about this model's run (truncated texts ...)
    seconds: float = 0.0
    runtime: str = ""  # what computed it, e.g. "ONNX Runtime fp32, CPU (2 threads)"

    @property
    def ok(self) -> bool:
        return self.error is None

    @classmethod
    def of(cls: type[O], model: ResolvedModel, **values) -> O:
        """An outcome of ``model`` with the view's ``values``."""
        entry = model.entry
        return cls(key=entry.key, label=entry.label, family=entry.family, **values)

    @classmethod
    def failed(cls: type[O], model: ResolvedModel | str, why: str, registry: Registry | None = None,
               **values) -> O:
        """The outcome of a model that could not run (an unknown key keeps the key as its label)."""
        if isinstance(model, ResolvedModel):
            return cls.of(model, error=why, **values)
        try:
            entry = (registry or get_registry()).get(model)
            label, family, key = entry.label, entry.family, entry.key
        except ValueError:
            label, family, key = str(model), "-", str(model)
        return cls(key=key, label=label, family=family, error=why, **values)


def chosen_models(model_keys: object, max_models: int, purpose: str) -> list[str]:
    """The distinct model keys asked for, one to ``max_models`` of them, or a ValueError saying what
    to change (the one place that counts them)."""
    keys = requested_keys(model_keys)
    if not keys:
        raise ValueError(f"Choose at least one model to {purpose}.")
    if len(keys) > max_models:
        raise ValueError(f"Choose at most {max_models} models at once; {len(keys)} are selected.")
    return keys


def resolve_for(model: str | ResolvedModel, needs: str | None = EMBEDS, purpose: str = "run here",
                registry: Registry | None = None) -> ResolvedModel:
    """``model`` resolved, or a ValueError: unknown, unavailable, or its kind cannot do what is ``needs``ed."""
    resolved = model if isinstance(model, ResolvedModel) else resolve(model, registry)
    kind = kind_of(resolved.entry)
    if needs is not None and not kind.can(needs):
        raise ValueError(kind.refusal(resolved.entry, needs, purpose))
    return resolved


def iter_per_model(models: Sequence[str | ResolvedModel], run_one: Callable[[ResolvedModel, Progress], O],
                   outcome: type[O], *, progress: Progress | None = None, needs: str | None = EMBEDS,
                   purpose: str = "run here", registry: Registry | None = None,
                   failed_values: dict | None = None, weights: Sequence[float] | None = None) -> Iterator[O]:
    """``run_one(model, step)`` for each model, yielding each outcome as soon as it is ready.

    ``step`` reports progress within the model's share of the whole: equal shares, or shares in
    proportion to ``weights`` (e.g. each model's expected seconds, so that the bar moves with the
    work left rather than jumping through quick models and crawling through a slow one). A model that cannot run (unknown,
    unavailable, refused by capability, or raising ``ValueError``) yields ``outcome.failed(...)``, with
    ``failed_values`` (e.g. the number of pairs it was asked to score). A ``run_one`` that is a
    generator yields a model's outcome as it fills in (each one is yielded; the last is the outcome).
    """
    failed_values = failed_values or {}
    registry = registry or get_registry()
    shares = list(weights) if weights is not None and len(weights) == len(models) and sum(weights) > 0 else \
        [1.0] * len(models)
    total = sum(shares) or 1.0
    starts = [sum(shares[:i]) / total for i in range(len(models))]
    for position, model in enumerate(models):
        def step(fraction: float, what: str, position: int = position) -> None:
            if progress:
                progress(starts[position] + min(max(fraction, 0.0), 1.0) * shares[position] / total, what)

        started = time.perf_counter()
        try:
            resolved = resolve_for(model, needs, purpose, registry)
        except ValueError as exc:
            yield outcome.failed(model, str(exc), registry, seconds=time.perf_counter() - started, **failed_values)
            continue
        try:
            yield from _told(step, run_one, resolved)
        except ValueError as exc:
            yield outcome.failed(resolved, str(exc), seconds=time.perf_counter() - started, **failed_values)


def run_per_model(models: Sequence[str | ResolvedModel], run_one: Callable[[ResolvedModel, Progress], O],
                  outcome: type[O], *, progress: Progress | None = None, needs: str | None = EMBEDS,
                  purpose: str = "run here", registry: Registry | None = None,
                  require_one: bool = False) -> list[O]:
    """:func:`iter_per_model` as a list; ``require_one`` raises a ValueError (naming every model's
    problem) when none of them could run."""
    by_model: dict[str, O] = {}  # the last outcome of each model (a streaming run_one yields several)
    for result in iter_per_model(models, run_one, outcome, progress=progress, needs=needs, purpose=purpose,
                                 registry=registry):
        by_model[result.key] = result
    outcomes = list(by_model.values())
    if require_one and outcomes and not any(o.ok for o in outcomes):
        raise ValueError("None of the chosen models can run here. " + " ".join(outcome_notes(outcomes)))
    return outcomes


def outcome_notes(outcomes: Sequence[ModelOutcome]) -> list[str]:
    """The notes for a page: each skipped model and why, then each model's own remarks."""
    notes = []
    for outcome in outcomes:
        if outcome.error:
            notes.append(f"{outcome.label} was skipped: {outcome.error}")
        notes.extend(f"{outcome.label}: {note}" for note in outcome.notes)
    return notes


def _told(step: Progress, run_one: Callable, resolved: ResolvedModel) -> Iterator:
    """``run_one``'s outcomes, each computed with what a first load prepares (a distillation) told to ``step``;
    the notices are set only while ``run_one`` runs, never across a yield (a generator may be resumed in
    another thread's context)."""
    def told(what: str) -> None:
        step(0.0, what)

    with notices(told):
        result = run_one(resolved, step)
    if not inspect.isgenerator(result):
        yield result
        return
    while True:
        with notices(told):
            try:
                item = next(result)
            except StopIteration:
                return
        yield item
