"""The README and docs/: a short front page that starts with the two commands, links that resolve (files
and their headings), and pages that describe the software, not the history of its making."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(line.lstrip("#")) for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("#")}


def test_the_readme_is_short_and_starts_with_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) <= 12_000
    commands = re.findall(r"```bash\n(.*?)\n```", readme, re.DOTALL)
    assert commands[:2] == ["bash scripts/setup.sh && .venv/bin/python app.py",
                            "bash scripts/setup.sh --dev && bash scripts/test.sh"]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "bash scripts/setup.sh --dev && bash scripts/test.sh" in ci  # CI runs the README's test command


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_resolves(page: Path) -> None:
    broken = []
    for match in LINK.finditer(page.read_text(encoding="utf-8")):
        target = match.group(1) or match.group(2)
        if re.match(r"^[a-z]+:", target) or target.startswith("/"):  # a web address, or a path of the running app
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.name}")
    assert broken == [], broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_pages_describe_the_software_not_its_history(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"\bsessions?\b", text, re.IGNORECASE), page.name
    assert not re.search(r"\b(this|the previous|an earlier|the latest) (run|Xeon|EPYC|Zen)\b", text), page.name


def test_every_docs_page_is_reachable_from_the_readme() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in readme, page.name
