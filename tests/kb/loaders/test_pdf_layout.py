"""Reading order: column detection on boxes, and the order a drawn two-column page comes out in."""

from __future__ import annotations

import pymupdf

from sextant.kb.loaders import pdf
from sextant.kb.loaders.pdf_layout import (
    Block,
    TextLine,
    column_of,
    is_two_column,
    normalise,
    page_width,
    read_blocks,
    reading_order,
)
from tests.kb.loaders.pdf_factory import FILLER, WIDTH, new_page, paragraph, to_bytes

LEFT, RIGHT = (54.0, 296.0), (316.0, 558.0)


def _box(columns: tuple[float, float], top: float, bottom: float) -> tuple[float, float, float, float]:
    return (columns[0], top, columns[1], bottom)


def test_normalise_folds_ligatures_and_compatibility_forms_but_not_spacing_accents() -> None:
    assert normalise("the \ufb01le, \ufb02at \ufb00ect, \ufb03ce, \ufb04e, \ufb05, \ufb06") == (
        "the file, flat ffect, ffice, ffle, st, st"
    )
    assert normalise("ｆｕｌｌ width, 𝑥𝑖 italic") == "full width, xi italic"
    # NFKC would write "´" as a space and a combining accent, cutting TeX's "G´erard" in two.
    assert normalise("G´erard Fran¸cois") == "G´erard Fran¸cois"
    # A soft hyphen is dropped inside a line and kept at its end, where it marks a broken word.
    assert normalise("hy\u00adphen") == "hyphen"
    assert normalise("exam\u00ad") == "exam\u00ad"


def test_ligature_code_points_come_out_as_letters() -> None:
    doc = pymupdf.open()
    html = "<p>The \ufb01le is \ufb02at, the o\ufb03ce e\ufb00ective; ｆｕｌｌ width.</p>"
    new_page(doc).insert_htmlbox(pymupdf.Rect(72, 72, 540, 200), html)
    loaded = pdf.load(to_bytes(doc), "ligatures.pdf")
    assert "The file is flat, the office effective; full width." in " ".join(loaded.text.split())
    assert not any("\ufb00" <= ch <= "\ufb06" for ch in loaded.text)


def test_columns_are_judged_against_the_page_middle() -> None:
    assert column_of(_box(LEFT, 0, 10), WIDTH) == "left"
    assert column_of(_box(RIGHT, 0, 10), WIDTH) == "right"
    assert column_of((72, 0, 540, 10), WIDTH) == "span"
    # A centred page number barely crosses the middle and is not a full-width block.
    assert column_of((300, 0, 312, 10), WIDTH) != "span"


def test_two_columns_read_left_then_right_between_full_width_blocks() -> None:
    boxes = [
        _box(RIGHT, 100, 300),  # 0: right column, upper band
        (150, 40, 460, 70),  # 1: title across both columns
        _box(LEFT, 320, 400),  # 2: left column, upper band, second paragraph
        _box(LEFT, 100, 300),  # 3: left column, upper band
        (72, 420, 540, 440),  # 4: a figure caption across both columns
        _box(RIGHT, 460, 700),  # 5: lower band
        _box(LEFT, 460, 700),  # 6: lower band
    ]
    weights = [400, 30, 200, 400, 60, 400, 400]
    assert is_two_column(boxes, weights, WIDTH)
    assert reading_order(boxes, weights, WIDTH) == [1, 3, 2, 0, 4, 6, 5]


def test_single_column_pages_read_top_to_bottom() -> None:
    boxes = [(72, 300, 540, 400), (72, 100, 540, 200), (100, 210, 250, 230), (520, 60, 530, 70)]
    weights = [500, 500, 40, 2]
    assert not is_two_column(boxes, weights, WIDTH)
    assert reading_order(boxes, weights, WIDTH) == [3, 1, 2, 0]


def test_narrow_side_by_side_blocks_do_not_make_two_columns() -> None:
    # The cells of an undetected table sit side by side but are not columns of text.
    boxes = [(72, 100, 540, 300), (100, 320, 160, 330), (400, 320, 460, 330), (72, 350, 540, 500)]
    assert not is_two_column(boxes, [900, 20, 20, 900], WIDTH)


def test_a_drawn_two_column_page_is_read_in_column_order() -> None:
    doc = pymupdf.open()
    page = new_page(doc)
    paragraph(page, (72, 40, 540, 70), "A Study of Columns", fontsize=16, fontname="hebo", align=1)
    # Written right column first, so that content order alone would get it wrong.
    paragraph(page, (RIGHT[0], 100, RIGHT[1], 300), "RIGHT one " + FILLER)
    paragraph(page, (LEFT[0], 100, LEFT[1], 300), "LEFT one " + FILLER)
    paragraph(page, (LEFT[0], 320, LEFT[1], 500), "LEFT two " + FILLER)
    loaded = pdf.load(to_bytes(doc), "columns.pdf")
    positions = [loaded.text.index(marker) for marker in ("A Study", "LEFT one", "LEFT two", "RIGHT one")]
    assert positions == sorted(positions)
    assert loaded.title == "A Study of Columns"


def test_blocks_record_size_and_weight() -> None:
    doc = pymupdf.open()
    page = new_page(doc)
    page.insert_text((72, 100), "Bold heading", fontsize=14, fontname="hebo")
    page.insert_text((72, 200), "plain body text", fontsize=10, fontname="helv")
    blocks = read_blocks(page.get_text("dict"))
    doc.close()
    heading, body = sorted(blocks, key=lambda b: b.bbox[1])
    assert (heading.text, heading.bold, round(heading.size)) == ("Bold heading", True, 14)
    assert (body.text, body.bold, round(body.size)) == ("plain body text", False, 10)


def test_block_without_drops_lines_inside_a_box() -> None:
    lines = (
        TextLine("keep me", (10, 10, 100, 20), 10, False),
        TextLine("a | table | row", (10, 30, 100, 40), 10, False),
    )
    block = Block((10, 10, 100, 40), lines)
    trimmed = block.without([(0, 25, 200, 45)])
    assert trimmed is not None and trimmed.text == "keep me" and trimmed.bbox == (10, 10, 100, 20)
    assert block.without([(0, 0, 200, 50)]) is None
    assert block.without([]) is block


def test_a_rotated_two_column_page_is_judged_in_text_coordinates() -> None:
    doc = pymupdf.open()
    page = new_page(doc)
    paragraph(page, (RIGHT[0], 100, RIGHT[1], 300), "RIGHT one " + FILLER)
    paragraph(page, (LEFT[0], 100, LEFT[1], 300), "LEFT one " + FILLER)
    paragraph(page, (LEFT[0], 320, LEFT[1], 500), "LEFT two " + FILLER)
    page.set_rotation(90)
    assert page_width(page) == WIDTH
    loaded = pdf.load(to_bytes(doc), "rotated.pdf")
    assert loaded.text.index("LEFT two") < loaded.text.index("RIGHT one")
