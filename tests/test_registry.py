"""Tests for the model registry: built-ins, offline availability, models/ folders, user-added models."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from sbert_demo.config import reload_settings

from sbert_demo import hub
from sbert_demo.encoding.encoder import encode
from sbert_demo.models import assets
from sbert_demo.models import local as local_models
from sbert_demo.models.entries import FAMILIES, POOLINGS
from sbert_demo.models.kinds import KINDS, builtin_entries

BUILTIN = builtin_entries()
from sbert_demo.models.registry import get_registry

BERT_KEYS = ["bert-base-uncased-mean", "bert-base-uncased-cls", "bert-base-uncased-max"]
SENTENCES = ["a man is playing a guitar .", "two dogs run on the grass", "the cat sat", "a"]


def sentence(text: str) -> bool:
    """A message a person can act on: a full sentence, not a bare exception name."""
    return len(text.split()) >= 5 and text.rstrip()[-1] in ".)"


# --- built-in entries ------------------------------------------------------------------------------


def test_builtin_entries() -> None:
    expected = {
        "bert-base-uncased-mean": ("naive", "transformer", "mean"),
        "bert-base-uncased-cls": ("naive", "transformer", "cls"),
        "bert-base-uncased-max": ("naive", "transformer", "max"),
        "glove-6b-50d": ("naive", "glove", "mean"),
        "all-MiniLM-L6-v2": ("siamese", "sentence-transformers", None),
        "all-mpnet-base-v2": ("siamese", "sentence-transformers", None),
        "stsb-distilroberta-base": ("cross-encoder", "cross-encoder", None),  # public, from the Hub
        "stsb-roberta-base": ("cross-encoder", "cross-encoder", None),
        "static-minilm": ("static", "static", None),  # distilled here on first use
        "static-mpnet": ("static", "static", None),
        "wordllama-l2-256": ("static", "wordllama", None),  # its table ships in its wheel
    }
    assert {e.key: (e.family, e.kind, e.pooling) for e in BUILTIN} == expected
    assert all(e.builtin and e.label and e.description for e in BUILTIN)
    assert {e.family for e in BUILTIN} <= set(FAMILIES) and {e.kind for e in BUILTIN} <= set(KINDS)
    assert get_registry().keys()[: len(BUILTIN)] == [e.key for e in BUILTIN]
    for key in BERT_KEYS:
        assert get_registry().get(key).hub_ids[-1] == "bert-base-uncased"


def test_registry_is_one_shared_object() -> None:
    assert get_registry() is get_registry()


def test_get_strips_whitespace() -> None:
    assert get_registry().get("  glove-6b-50d \n").key == "glove-6b-50d"


@pytest.mark.parametrize("key", ["nope", "", "BERT-base-uncased-mean", "glove"])
def test_unknown_key_names_the_known_models(key: str) -> None:
    with pytest.raises(ValueError) as error:
        get_registry().get(key)
    message = str(error.value)
    assert message.startswith(f"Unknown model {key.strip()!r}. Known models: ")
    assert all(e.key in message for e in BUILTIN)


def test_listing_offline_is_fast_and_explains_bert() -> None:
    registry = get_registry()
    started = time.perf_counter()
    status = {e.key: registry.availability(e) for e in registry.entries()}
    assert time.perf_counter() - started < 5
    for key in BERT_KEYS:
        assert not status[key].available
        assert "Hugging Face Hub" in status[key].reason and "models/" in status[key].reason
        assert status[key].where == "-"
    if assets.minilm_folder() is not None:
        assert status["all-MiniLM-L6-v2"].location == assets.minilm_folder()
    if assets.glove_files() is not None:
        assert status["glove-6b-50d"].location == assets.glove_files()[0]
    if assets.mpnet_parts() is not None:  # offered as soon as the pieces are installed, joined on load
        assert status["all-mpnet-base-v2"].available
        assert status["all-mpnet-base-v2"].location == assets.mpnet_folder()


def test_hanging_hub_probe_is_cut_short(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without HF_HUB_OFFLINE, a probe stuck in DNS must not freeze the listing."""
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("SBERT_DEMO_HUB_TIMEOUT", "0.3")
    reload_settings()
    monkeypatch.setattr(hub, "_probe", lambda timeout: time.sleep(30) or True)
    registry = get_registry()
    started = time.perf_counter()
    status = registry.availability("bert-base-uncased-cls")
    assert time.perf_counter() - started < 2
    assert not status.available and "Hugging Face Hub" in status.reason


def test_unreachable_endpoint_is_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the discard port: connection refused
    reload_settings()
    started = time.perf_counter()
    assert hub.hub_reachable() is False
    assert time.perf_counter() - started < 3


# --- a local copy of BERT --------------------------------------------------------------------------


def hand_pooled(folder: Path, texts: list[str]) -> dict[str, np.ndarray]:
    """CLS / masked mean / masked max of the raw transformer outputs, each L2-normalised."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    batch = tokenizer(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        tokens = model(**batch).last_hidden_state.double()
    mask = batch["attention_mask"].unsqueeze(-1).double()
    pooled = {
        "cls": tokens[:, 0],
        "mean": (tokens * mask).sum(1) / mask.sum(1),
        "max": tokens.masked_fill(mask == 0, float("-inf")).max(1).values,
    }
    return {name: (v / v.norm(dim=1, keepdim=True)).numpy() for name, v in pooled.items()}


def test_local_bert_copy_makes_bert_available(tiny_bert: Path, isolated) -> None:
    folder = isolated.models_dir / "bert-base-uncased"
    shutil.copytree(tiny_bert, folder)
    registry = get_registry()
    assert "bert-base-uncased" not in registry.keys()  # a plain transformer copy is a source, not a model
    for key in BERT_KEYS:
        status = registry.availability(key)
        assert status.available and status.location == folder
    expected = hand_pooled(folder, SENTENCES)
    got = {}
    for pooling in POOLINGS:
        got[pooling] = encode(f"bert-base-uncased-{pooling}", SENTENCES).embeddings
        np.testing.assert_allclose(got[pooling], expected[pooling], atol=1e-5)
    for a, b in [("cls", "mean"), ("cls", "max"), ("mean", "max")]:
        assert np.abs(got[a] - got[b]).max() > 0.05, (a, b)


@pytest.mark.parametrize("name", ["google-bert--bert-base-uncased", "google-bert/bert-base-uncased"])
def test_local_bert_copy_under_hub_names(tiny_bert: Path, isolated, name: str) -> None:
    shutil.copytree(tiny_bert, isolated.models_dir / name)
    assert get_registry().availability("bert-base-uncased-mean").location == isolated.models_dir / name


def test_bert_from_the_hugging_face_cache(tiny_bert: Path, tmp_path: Path) -> None:
    """A snapshot downloaded earlier (HF_HUB_CACHE) is used offline; refs/main picks the snapshot."""
    repo = tmp_path / "hf-hub-cache" / "models--google-bert--bert-base-uncased"
    shutil.copytree(tiny_bert, repo / "snapshots" / "abc123")
    shutil.copytree(tiny_bert, repo / "snapshots" / "old456")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123\n")
    assert get_registry().availability("bert-base-uncased-max").location == repo / "snapshots" / "abc123"
    assert hub.cached_snapshot("google-bert/bert-base-uncased") == repo / "snapshots" / "abc123"
    assert hub.cached_snapshot("someone/else") is None


# --- models/ folders -------------------------------------------------------------------------------


def test_fine_tuned_model_appears_without_restart(tiny_bert: Path, isolated, plain_sbert) -> None:
    registry = get_registry()
    keys_before = registry.keys()
    assert "foo" not in keys_before
    folder = isolated.models_dir / "foo"
    plain_sbert(tiny_bert, "max").save(str(folder))
    (folder / local_models.CARD_FILE).write_text(json.dumps({"label": "Foo (tiny)", "summary": "A test."}))
    assert registry.keys() == [*keys_before, "foo"]
    entry = registry.get("foo")
    assert (entry.family, entry.kind, entry.label, entry.description) == ("fine-tuned", "sentence-transformers",
                                                                         "Foo (tiny)", "A test.")
    assert registry.availability(entry).location == folder.resolve()
    got = encode("foo", SENTENCES).embeddings
    np.testing.assert_allclose(got, hand_pooled(tiny_bert, SENTENCES)["max"], atol=1e-5)
    shutil.rmtree(folder)
    assert "foo" not in registry.keys()


def test_dot_folders_and_files_ignored(tiny_sbert: Path, isolated) -> None:
    shutil.copytree(tiny_sbert, isolated.models_dir / ".foo-training")
    (isolated.models_dir / "README.md").write_text("notes")
    (isolated.models_dir / "model.safetensors").write_bytes(b"loose file")
    assert get_registry().keys() == [e.key for e in BUILTIN]


def test_fine_tuned_key_cannot_shadow_a_builtin(tiny_sbert: Path, isolated) -> None:
    shutil.copytree(tiny_sbert, isolated.models_dir / "glove-6b-50d")
    registry = get_registry()
    assert registry.keys().count("glove-6b-50d") == 1
    assert registry.get("glove-6b-50d").kind == "glove"


def _truncate_weights(folder: Path) -> None:
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])


def _garbage_weights(folder: Path) -> None:
    (folder / "model.safetensors").write_bytes(b"\x07" * 64)


def _bad_header(folder: Path) -> None:
    header = b"{not json!"
    (folder / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header)


def _remove(*names: str):
    def damage(folder: Path) -> None:
        for name in names:
            path = folder / name
            shutil.rmtree(path) if path.is_dir() else path.unlink()

    return damage


def _write(name: str, text: str):
    return lambda folder: (folder / name).write_text(text)


DAMAGE = {
    "truncated weights": (_truncate_weights, "model.safetensors is truncated ({cut:,} bytes, expected {full:,})"),
    "garbage weights": (_garbage_weights, "model.safetensors is truncated or not a safetensors file"),
    "garbled header": (_bad_header, "model.safetensors cannot be read (JSONDecodeError)"),
    "no weights": (_remove("model.safetensors"), "no model weights (model.safetensors) were found"),
    "missing modules.json": (_remove("modules.json", "config.json"), "modules.json is missing"),
    "bad JSON": (_write("modules.json", '[{"path": ""'), "modules.json is not valid JSON"),
    "not a list": (_write("modules.json", '"hello"'), "modules.json is not valid JSON"),
    "no modules": (_write("modules.json", "[]"), "modules.json lists no modules"),
    "missing module folder": (_remove("1_Pooling"), "module folder 1_Pooling is missing"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_corrupt_folder_listed_unavailable_and_rest_works(tiny_sbert: Path, isolated, damage: str) -> None:
    damage_fn, problem = DAMAGE[damage]
    broken = isolated.models_dir / "broken"
    shutil.copytree(tiny_sbert, broken)
    damage_fn(broken)
    shutil.copytree(tiny_sbert, isolated.models_dir / "good")
    registry = get_registry()
    assert registry.keys() == [*(e.key for e in BUILTIN), "broken", "good"]
    status = registry.availability("broken")
    assert not status.available
    full = (tiny_sbert / "model.safetensors").stat().st_size
    problem = problem.format(full=full, cut=full - 100)
    assert status.reason == f"The model folder broken is incomplete or corrupt: {problem}."
    with pytest.raises(ValueError, match="The model folder broken is incomplete or corrupt"):
        encode("broken", ["a man"])
    assert registry.availability("good").available
    good = encode("good", ["a man", "a dog"]).embeddings
    np.testing.assert_allclose(np.linalg.norm(good, axis=1), 1, atol=1e-6)


def test_intact_folder_has_no_problem(tiny_sbert: Path, tiny_bert: Path) -> None:
    assert local_models.folder_problem(tiny_sbert) is None
    assert local_models.folder_problem(tiny_bert, "transformer") is None
    assert local_models.folder_problem(tiny_bert) == "modules.json is missing"
    assert local_models.folder_problem(tiny_bert / "nothing").endswith("does not exist or is not a folder")


# --- models added by users -------------------------------------------------------------------------


def test_add_hub_id_offline_answers_quickly() -> None:
    registry = get_registry()
    started = time.perf_counter()
    with pytest.raises(ValueError) as error:
        registry.add("sentence-transformers/all-MiniLM-L12-v2")
    assert time.perf_counter() - started < 2
    message = str(error.value)
    assert "needs the Hugging Face Hub, which is not reachable" in message and sentence(message)
    assert registry.added == {}


def test_add_hub_id_with_a_hanging_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("SBERT_DEMO_HUB_TIMEOUT", "0.3")
    reload_settings()
    monkeypatch.setattr(hub, "_probe", lambda timeout: time.sleep(30) or True)
    started = time.perf_counter()
    with pytest.raises(ValueError, match="needs the Hugging Face Hub"):
        get_registry().add("someone/some-model")
    assert time.perf_counter() - started < 2.5


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Enter a Hugging Face model id"),
        ("   ", "Enter a Hugging Face model id"),
        ("a b", "'a b' is not a valid Hugging Face model id"),
        ("org/name/extra", "is not a valid Hugging Face model id"),
        ("org/", "is not a valid Hugging Face model id"),
        ("x/../y", "is not a valid Hugging Face model id"),
        ("-dash", "is not a valid Hugging Face model id"),
        ("../x", "is outside the folders models may be loaded from"),
        ("..", "is outside the folders models may be loaded from"),
        ("//", "is outside the folders models may be loaded from"),
        ("/etc", "is outside the folders models may be loaded from"),
        ("~/x", "is outside the folders models may be loaded from"),
    ],
)
def test_malformed_ids_and_outside_paths_refused(text: str, message: str) -> None:
    registry = get_registry()
    with pytest.raises(ValueError) as error:
        registry.add(text)
    assert message in str(error.value) and sentence(str(error.value))
    assert registry.added == {}


def test_folder_outside_allowed_roots_refused(tiny_bert: Path) -> None:
    with pytest.raises(ValueError, match="outside the folders models may be loaded from.*SBERT_DEMO_MODEL_PATHS"):
        get_registry().add(str(tiny_bert))


def test_symlink_out_of_models_refused(tiny_bert: Path, isolated) -> None:
    link = isolated.models_dir / "escape"
    link.symlink_to(tiny_bert, target_is_directory=True)
    with pytest.raises(ValueError, match="outside the folders"):
        get_registry().add(str(link))


def test_add_folder_in_allowed_root(add_tiny_bert, tiny_bert: Path) -> None:
    entry = add_tiny_bert("cls")
    assert (entry.key, entry.family, entry.kind, entry.pooling) == ("tiny-bert@cls", "naive", "transformer", "cls")
    assert entry.source == str(tiny_bert)
    registry = get_registry()
    assert registry.keys()[-1] == "tiny-bert@cls"
    assert registry.availability("tiny-bert@cls").location == tiny_bert
    registry.remove("tiny-bert@cls")
    assert "tiny-bert@cls" not in registry.keys()


def test_add_sentence_transformers_folder_in_models(tiny_sbert: Path, isolated) -> None:
    folder = isolated.models_dir / "sub" / "mine"
    shutil.copytree(tiny_sbert, folder)
    entry = get_registry().add(str(folder))
    assert (entry.key, entry.family, entry.kind, entry.pooling) == ("mine", "siamese", "sentence-transformers", None)


def test_add_folder_without_model(isolated) -> None:
    empty = isolated.models_dir / "sub" / "empty"
    empty.mkdir(parents=True)
    with pytest.raises(ValueError, match="holds no model: expected modules.json or config.json"):
        get_registry().add(str(empty))


def test_add_corrupt_folder_refused_with_reason(tiny_bert: Path, isolated) -> None:
    folder = isolated.models_dir / "sub" / "bert"
    shutil.copytree(tiny_bert, folder)
    _truncate_weights(folder)
    with pytest.raises(ValueError, match="incomplete or corrupt: model.safetensors is truncated"):
        get_registry().add(str(folder))
    assert get_registry().added == {}


@pytest.mark.parametrize("pooling", ["sum", "", "CLS"])
def test_bad_pooling_names_valid_ones(add_tiny_bert, pooling: str) -> None:
    with pytest.raises(ValueError, match=f"Pooling {pooling!r} is not valid; choose one of mean, cls, max."):
        add_tiny_bert(pooling)


def test_remote_code_is_never_run(tiny_bert: Path, tiny_sbert: Path, isolated, tmp_path: Path) -> None:
    """Folders asking for custom code are refused, and their code is never imported."""
    marker = tmp_path / "remote-code-ran"
    code = f"open({str(marker)!r}, 'w').write('ran')\n"
    plain = isolated.models_dir / "sub" / "evil-bert"
    shutil.copytree(tiny_bert, plain)
    config = json.loads((plain / "config.json").read_text())
    config.update(model_type="evilbert", auto_map={"AutoConfig": "evil.EvilConfig", "AutoModel": "evil.EvilModel"})
    (plain / "config.json").write_text(json.dumps(config))
    (plain / "evil.py").write_text(code + "from transformers import BertConfig as EvilConfig, BertModel as EvilModel\n")
    sbert = isolated.models_dir / "evil-sbert"
    shutil.copytree(tiny_sbert, sbert)
    modules = json.loads((sbert / "modules.json").read_text())
    modules[1]["type"] = "evil.EvilPooling"
    (sbert / "modules.json").write_text(json.dumps(modules))
    pooling_import = "from sentence_transformers.sentence_transformer.modules import Pooling as EvilPooling\n"
    (sbert / "evil.py").write_text(code + pooling_import)

    entry = get_registry().add(str(plain))
    for key in (entry.key, "evil-sbert"):
        with pytest.raises(ValueError, match="trust_remote_code"):
            encode(key, ["a man"])
    assert not marker.exists()
