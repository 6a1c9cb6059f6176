"""Opening and closing Chroma clients: a local folder, a server that is not there."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from sextant.kb.chroma_client import StoreError, close_client, open_client


def test_a_local_store_folder_is_created_and_its_client_closes(tmp_path: Path) -> None:
    client = open_client(path=tmp_path / "new" / "store", url=None)
    try:
        client.get_or_create_collection("probe", embedding_function=None)
        assert (tmp_path / "new" / "store").is_dir()
    finally:
        close_client(client)


def test_a_server_that_does_not_answer_is_refused_with_its_address() -> None:
    with socket.socket() as free:  # a port nothing listens on: bound, never listening
        free.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{free.getsockname()[1]}"
        with pytest.raises(StoreError, match=f"cannot open the Chroma store at {url}"):
            open_client(path=None, url=url)
