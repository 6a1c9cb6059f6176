"""CSV and TSV files: /etc/services as CSV, encodings, dialects, header detection and refusals."""

from __future__ import annotations

import pytest

from sextant.kb.documents import LoadedDocument, LoadError
from sextant.kb.loaders import delimited
from tests.kb.loaders.pdf_factory import assert_well_formed
from tests.kb.loaders.sheets_factory import SERVICES_HEADER, csv_bytes, services_rows


def _row_texts(doc: LoadedDocument) -> list[str]:
    return [doc.text[r.start : r.end] for table in doc.tables for r in table.rows]


def test_the_kerberos_row_of_etc_services_sits_under_its_header() -> None:
    doc = delimited.load(csv_bytes([SERVICES_HEADER, *services_rows()]), "services.csv")
    assert_well_formed(doc)
    (table,) = doc.tables
    assert (doc.title, table.caption) == ("services", "services")
    assert table.header == "service | port | protocol | aliases | comment"
    assert "kerberos | 88 | tcp | kerberos5 krb5 kerberos-sec | Kerberos v5" in _row_texts(doc)
    assert [s.title for s in doc.sections] == ["services"]


def test_a_tsv_is_split_on_tabs_even_where_commas_abound() -> None:
    rows = [("name", "note"), ("kerberos", "tickets, keys, realms"), ("ssh", "shells, tunnels")]
    doc = delimited.load(csv_bytes(rows, delimiter="\t"), "notes.tsv")
    assert doc.tables[0].header == "name | note"
    assert _row_texts(doc) == ["kerberos | tickets, keys, realms", "ssh | shells, tunnels"]


def test_the_delimiter_is_sniffed() -> None:
    rows = [("city", "population"), ("Zürich", "421878"), ("Genève", "203856")]
    doc = delimited.load(csv_bytes(rows, delimiter=";"), "cities.csv")
    assert _row_texts(doc) == ["Zürich | 421878", "Genève | 203856"]


def test_excel_sep_line_names_the_delimiter() -> None:
    doc = delimited.load(b"sep=|\r\nitem|price\r\ntea, green|3.50\r\n", "prices.csv")
    assert doc.tables[0].header == "item | price"
    assert _row_texts(doc) == ["tea, green | 3.50"]


@pytest.mark.parametrize("encoding", ["cp1252", "utf-8", "utf-8-sig", "utf-16"])
def test_encodings_excel_writes_are_read(encoding: str) -> None:
    rows = [("dish", "price"), ("Café crème", "€3"), ("Crêpe “suzette”", "€7")]
    doc = delimited.load(csv_bytes(rows, encoding=encoding), "menu.csv")
    assert doc.tables[0].header == "dish | price"  # no byte-order mark glued to the first cell
    assert _row_texts(doc) == ["Café crème | €3", "Crêpe “suzette” | €7"]


def test_bytes_no_encoding_reads_fall_back_to_latin_1() -> None:
    # 0x81 is undefined in cp1252.
    doc = delimited.load(b"code,char\r\n81,\x81x\r\n", "odd.csv")
    assert _row_texts(doc) == ["81 | \x81x"]


def test_a_first_line_of_data_is_not_taken_for_a_header() -> None:
    rows = [(name, str(port), protocol) for name, port, protocol, *_ in services_rows()[:5]]
    doc = delimited.load(csv_bytes(rows), "ports.csv")
    (table,) = doc.tables
    assert table.header == ""
    assert _row_texts(doc)[0] == " | ".join(rows[0])
    assert len(table.rows) == len(rows)
    assert_well_formed(doc)


def test_quoted_fields_keep_their_delimiters_and_lose_their_line_breaks() -> None:
    doc = delimited.load(b'name,address\r\nAda,"12 Main St,\r\nLondon"\r\n', "people.csv")
    assert _row_texts(doc) == ["Ada | 12 Main St, London"]


def test_rows_past_the_bound_are_named() -> None:
    rows = [("n",), *((str(i),) for i in range(100))]
    doc = delimited.load(csv_bytes(rows), "numbers.csv", max_rows=11)
    assert len(doc.tables[0].rows) == 10
    assert doc.skipped_pages[0].reason == "rows from row 12 on left out: the workbook reached its bound of 11 rows"


@pytest.mark.parametrize("data", [b"", b"\r\n\r\n", b",,,\r\n,,\r\n"])
def test_a_file_without_values_is_refused(data: bytes) -> None:
    with pytest.raises(LoadError, match="empty: no cell holds a value"):
        delimited.load(data, "blank.csv")


def test_binary_garbage_is_refused() -> None:
    data = bytes(range(256)) * 40
    with pytest.raises(LoadError, match="not a text file"):
        delimited.load(data, "garbage.csv")


def test_a_record_the_csv_reader_rejects_is_named() -> None:
    data = b'name,blob\r\nbig,"' + b"x" * 200_000 + b'"\r\n'
    with pytest.raises(LoadError, match="record 2 cannot be read as CSV"):
        delimited.load(data, "big.csv")
