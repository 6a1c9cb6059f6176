"""``sextant-kb-token mint NAME [--read-only] | list | revoke NAME``: the bearer tokens of ``sextant-kb --http``."""

from __future__ import annotations

import argparse
import sys

from sextant.kb.remote.tokens import TokenError, TokenStore, tokens_path
from sextant.settings import load_settings


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="sextant-kb-token",
        description="Mint, list and revoke the bearer tokens that `sextant-kb --http` accepts. Only a hash of "
        "each token is stored (SEXTANT_KB_TOKENS_FILE, default kb-tokens.json beside the store).",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    mint = commands.add_parser("mint", help="create a token and print it, once")
    mint.add_argument("name", help="who or what holds it (1-64 letters, digits, '.', '_', '-')")
    mint.add_argument("--read-only", action="store_true", help="search and read only: no kb_ingest, kb_upload, …")
    commands.add_parser("list", help="names, scopes and creation times (never the tokens)")
    revoke = commands.add_parser("revoke", help="delete a token; a running server refuses it at its next request")
    revoke.add_argument("name")
    args = parser.parse_args(argv)

    store = TokenStore(tokens_path(load_settings()))
    try:
        if args.command == "mint":
            token = store.mint(args.name, read_only=args.read_only)
            scopes = " ".join(store.records()[-1].scopes)
            print(f"minted {args.name!r} ({scopes}), shown only once; its hash is in {store.path}", file=sys.stderr)
            # Alone on stdout, so `TOKEN=$(sextant-kb-token mint NAME)` captures exactly the token.
            print(token)
        elif args.command == "list":
            records = store.records()
            if not records:
                print(f"no tokens in {store.path}", file=sys.stderr)
            width = max((len(r.name) for r in records), default=0)
            for r in records:
                print(f"{r.name:<{width}}  {' '.join(r.scopes):<16}  {r.created}")
        else:
            store.revoke(args.name)
            print(f"revoked {args.name!r}", file=sys.stderr)
    except TokenError as exc:
        print(f"sextant-kb-token: {exc}", file=sys.stderr)
        raise SystemExit(1) from exc
