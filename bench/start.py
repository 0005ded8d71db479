"""Start-up: how long after the page is served the first map arrives, on a first and a second start.

Starts the app twice on loopback with the same fresh cache folder (the ONNX artefacts and the joined
mpnet of the user's cache folder are linked in, so only the UMAP compile cache and the embeddings
start empty). For each start it prints the seconds until the page is served and the seconds from
then until the default Explore request (default example, default models, through ``gradio_client``)
returns its map. The first start compiles UMAP's numba kernels (and saves them); the second loads
them from ``<cache>/numba`` (target: first map within 10 s of the page being served). The second
start also finds the embeddings in the cache, as any restart of a running demo does.

    python bench/start.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from load import default_models, free_port, start_app, stop_app, wait_ready  # noqa: E402
from sbert_demo.data.examples import DEFAULT_EXAMPLE, EXAMPLE_SETS  # noqa: E402


def one_start(folder: str, label: str) -> float:
    from gradio_client import Client

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    started = time.perf_counter()
    server = start_app(port, folder, link=("onnx", "models"))
    try:
        wait_ready(url, timeout=600, server=server, poll_s=0.2)
        served = time.perf_counter()
        result = Client(url, verbose=False).predict(EXAMPLE_SETS[DEFAULT_EXAMPLE].text, default_models(), 0,
                                                   "groups", "kmeans", api_name="/explore")
        first_map = time.perf_counter() - served
        assert result, "no answer"
        print(f"{label}: page served after {served - started:5.1f} s; first map {first_map:5.1f} s after that",
              flush=True)
        return first_map
    finally:
        stop_app(server)


def main() -> None:
    from sbert_demo.encoding import devices

    hardware = devices.detect_hardware()
    print(f"CPU: {hardware.cpu_name}, native bf16: {'yes' if hardware.cpu_bf16 else 'no'}", flush=True)
    with tempfile.TemporaryDirectory(prefix="sbert-start-") as folder:
        first = one_start(folder, "first start (compiles UMAP) ")
        second = one_start(folder, "second start (cached)      ")
        print(f"first map after the page is served: first start {first:.1f} s, second start {second:.1f} s "
              f"(target <= 10 s); ratio {first / second:.1f}x")


if __name__ == "__main__":
    main()
