"""Pseudo-questions from stored chunks: what each source makes, how a limit is shared, and the trainer's terms."""

from __future__ import annotations

from sextant.training.adapt import (
    ChunkText,
    PseudoQuery,
    as_training_data,
    counts,
    fingerprint,
    heading_queries,
    pseudo_queries,
    sentence_queries,
    sentences,
    title_queries,
)

GUIDE = "Rose pruning guide"
CHUNKS = [
    ChunkText("r~0", "roses", GUIDE, "", "Rose pruning guide. Roses are pruned in late winter before buds swell."),
    ChunkText("r~1", "roses", GUIDE, "Tools you need", "Use sharp bypass secateurs for every cut. Clean the blades."),
    ChunkText("r~2", "roses", GUIDE, "Tools you need", "A pruning saw cuts old canes thicker than a finger easily."),
    ChunkText("b~0", "bees", "Bee swarms", "Bee swarms", "Swarms leave the hive in spring. Call a beekeeper."),
    ChunkText("x~0", "x1", "x1", "", "Too short. This sentence is long enough to be a question on its own, surely."),
]


def test_a_title_finds_every_chunk_of_its_document_and_an_id_for_a_title_is_no_question() -> None:
    found = {q.text: q.positives for q in title_queries(CHUNKS)}
    assert found == {GUIDE: ("r~0", "r~1", "r~2"), "Bee swarms": ("b~0",)}


def test_a_heading_finds_the_chunks_of_its_section_and_a_heading_that_is_the_title_is_left_out() -> None:
    assert [(q.text, q.positives, q.source) for q in heading_queries(CHUNKS)] == [
        ("Tools you need", ("r~1", "r~2"), "heading")
    ]


def test_a_sentence_of_question_length_finds_its_own_chunk_and_the_same_seed_picks_the_same_one() -> None:
    picked = sentence_queries(CHUNKS, seed=3)
    assert [q.positives for q in picked] == [("r~0",), ("r~1",), ("r~2",), ("b~0",), ("x~0",)]
    assert all(q.text in chunk.text and q.text != chunk.title for q, chunk in zip(picked, CHUNKS, strict=True))
    assert picked[4].text == "This sentence is long enough to be a question on its own, surely."
    assert picked == sentence_queries(CHUNKS, seed=3)


def test_a_heading_s_numbering_is_no_part_of_its_question() -> None:
    chunks = [ChunkText("c~0", "c", "Manual", "Chapter 5. Temperature and pressure", "Text."),
              ChunkText("c~1", "c", "Manual", "9.2.2 Repetitive execution", "Text."),
              ChunkText("c~2", "c", "Manual", "3 Loops", "Text.")]  # fmt: skip
    assert [q.text for q in heading_queries(chunks)] == ["Temperature and pressure", "Repetitive execution"]


def test_a_sentence_in_the_overlap_of_two_chunks_finds_both() -> None:
    shared = "The overlap repeats this sentence in the next chunk."
    chunks = [ChunkText("o~0", "o", "Doc", "", f"Short one. {shared}"), ChunkText("o~1", "o", "Doc", "", shared)]
    assert [q.positives for q in sentence_queries(chunks, seed=0)] == [("o~0", "o~1"), ("o~0", "o~1")]


def test_a_sentence_joined_across_a_skipped_heading_still_finds_its_own_chunk() -> None:
    chunk = ChunkText(
        "h~0", "h", "Doc", "", "The kettle must be descaled\n## Descaling\nevery month in hard water areas."
    )
    assert [(q.text, q.positives) for q in sentence_queries([chunk], seed=0)] == [
        ("The kettle must be descaled every month in hard water areas.", ("h~0",))
    ]


def test_a_contents_line_is_not_a_question() -> None:
    chunk = ChunkText("t~0", "t", "Manual", "", "35 eigen . . . . . . . . . . . . . . . . . . 12")
    assert sentence_queries([chunk], seed=0) == []


def test_headings_and_table_rows_are_not_sentences() -> None:
    text = "## Opening hours\nThe museum opens at nine.\nDay | Hours\nMonday | closed\nIt closes at five. Come early."
    assert sentences(text) == ["The museum opens at nine.", "It closes at five.", "Come early."]


def test_a_limit_is_shared_evenly_and_a_short_source_leaves_its_share_to_the_others() -> None:
    assert counts(pseudo_queries(CHUNKS, ["title", "heading", "sentence"], None, seed=0)) == {
        "title": 2,
        "heading": 1,
        "sentence": 5,
    }
    assert counts(pseudo_queries(CHUNKS, ["title", "sentence"], 4, seed=0)) == {"title": 2, "sentence": 2}
    assert counts(pseudo_queries(CHUNKS, ["heading", "title", "sentence"], 6, seed=0)) == {
        "heading": 1,
        "title": 2,
        "sentence": 3,
    }
    assert pseudo_queries(CHUNKS, ["sentence"], 3, seed=0) == pseudo_queries(CHUNKS, ["sentence"], 3, seed=0)


def test_positives_become_qrels_over_chunk_ids() -> None:
    queries = [PseudoQuery("heading:roses:Tools", "Tools you need", ("r~1", "r~2"), "heading")]
    assert as_training_data(queries) == (
        {"heading:roses:Tools": {"r~1": 1, "r~2": 1}},
        {"heading:roses:Tools": "Tools you need"},
    )


def test_the_fingerprint_changes_with_the_chunks_the_questions_or_the_embedder() -> None:
    queries = title_queries(CHUNKS)
    base = fingerprint(["r~0", "b~0"], queries, "all-MiniLM-L6-v2")
    assert base == fingerprint(["r~0", "b~0"], queries, "all-MiniLM-L6-v2")
    assert base != fingerprint(["r~0"], queries, "all-MiniLM-L6-v2")
    assert base != fingerprint(["r~0", "b~0"], queries[:1], "all-MiniLM-L6-v2")
    assert base != fingerprint(["r~0", "b~0"], queries, "other")
