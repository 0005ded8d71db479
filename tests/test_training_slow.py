"""The issue's reference training runs on the real offline models and data (run with ``-m slow``).

* siamese GloVe (GloVe average + Dense 50→256 tanh), NLI softmax on the 39,313 NLI pairs shipped in ``data/nli``,
  batch 32, lr 1e-3, one epoch: STSb test 55.60 → at least 57.5 (58.81 measured here, ~3-6 s);
* all-MiniLM-L6-v2, cosine regression on STSb train, batch 16, lr 2e-5, one epoch: STSb test
  82.03 → at least 84.5 (85.0 measured with bf16 training and with fp32): the run is trained as the command line
  trains it on a machine ``scripts/setup.sh`` prepared (the run's measured cache linked), every core for the run, so
  in bf16 where the CPU has native bf16 and PyTorch bf16 was measured faster than fp32 here (about 3 min on two
  cores), else in fp32 (a Xeon without AMX: 5.5 min in bf16).
"""

from __future__ import annotations

import os

import pytest

from sbert_demo.config import reload_settings

from sbert_demo.models.registry import get_registry
from sbert_demo.training.runner import apply_thread_limit, run_training
from sbert_demo.explore.prepare import link_prepared
from sbert_demo.training.settings import config_for, measured_runtimes, training_device

pytestmark = [pytest.mark.slow, pytest.mark.compute]


@pytest.fixture
def real_data(shipped_data, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("SBERT_DEMO_DATA", raising=False)  # the default: the data shipped in data/
    reload_settings()
    import torch

    threads = torch.get_num_threads()
    yield shipped_data
    torch.set_num_threads(threads)


def test_siamese_glove_nli_softmax_beats_the_average(real_data) -> None:
    apply_thread_limit("glove")
    config = config_for("glove-6b-50d", "nli-softmax", "glove-nli", batch_size=32, learning_rate=1e-3)
    result = run_training(config)
    assert result.before["test"] == pytest.approx(0.5561, abs=0.0005)
    assert result.after["test"] >= 0.575
    assert result.pairs == 39_313 and result.precision == "fp32"
    assert get_registry().get("glove-nli").family == "fine-tuned"


def test_minilm_cosine_on_stsb_train(real_data, measured_cache, isolated, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SBERT_DEMO_PRECISION", "auto")  # the deployment default
    reload_settings()
    link_prepared(isolated.cache_dir, measured_cache)  # a prepared machine: MiniLM's runtimes measured on this CPU
    assert apply_thread_limit("sentence-transformers", beside_app=False) == os.cpu_count()  # as `train` runs it
    config = config_for("all-MiniLM-L6-v2", "cosine", "minilm-stsb", batch_size=16, learning_rate=2e-5)
    measured = measured_runtimes("all-MiniLM-L6-v2")
    assert measured is not None  # the run's measurement is read, not made again
    bf16 = measured.speedup("torch-bf16")  # None where the CPU has no native bf16 (not a candidate)
    assert training_device("auto", "transformer", base="all-MiniLM-L6-v2").precision == (
        "bf16" if bf16 is not None and bf16 >= 1 else "fp32")
    result = run_training(config)
    assert result.before["test"] == pytest.approx(0.8203, abs=0.002)
    assert result.after["test"] >= 0.845
    assert result.pairs == 5_749
