"""Every example in the package's docstrings runs, in the same isolation as the other tests.

An example nobody runs goes stale; these are the package's doctests, collected module by module
(``doctest.DocTestFinder``) and run inside the autouse ``isolated`` fixture (fresh cache and models
folders, PyTorch fp32, no network), so they check what they show.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sbert_demo"


def module_names() -> list[str]:
    """Every module of the package by its dotted name (``sbert_demo.models.kinds.base`` ...)."""
    names = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _examples(name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(name)
    return [test for test in doctest.DocTestFinder(exclude_empty=True).find(module, name) if test.examples]


WITH_EXAMPLES = [name for name in module_names() if _examples(name)]


def test_the_package_has_examples_to_run() -> None:
    assert len(WITH_EXAMPLES) >= 20 and sum(len(t.examples) for n in WITH_EXAMPLES for t in _examples(n)) >= 60


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples(name: str) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in _examples(name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see above)"
