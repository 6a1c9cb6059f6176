"""The quote check: a label stays only where its quote stands in a passage the model was shown."""

from __future__ import annotations

from sextant.agent.events import AnswerStatement, Evidence
from sextant.agent.grounding import MARK, Checked, check_statement, render
from sextant.agent.passages import Passage, PassageBook
from sextant.llm.chat import Quote, Statement

FIRST = "Descale the machine\nevery three months with citric acid."
DESCALE = f"{FIRST} Rinse the tank weekly."
BOOK = PassageBook(
    [
        Passage(label=1, title="Manual", text=DESCALE),
        Passage(label=2, title="Manual", text="Use filtered water to slow scale."),
        Passage(label=3, title="A web page", tier="web", text="Descale the machine every week."),
    ]
)
SHOWN = {1, 2, 3}


def statement(text: str, *quotes: tuple[int, str]) -> Statement:
    return Statement(text, tuple(Quote(label, words) for label, words in quotes))


def reasons(checked: Checked) -> list[tuple[str, str, str]]:
    """The trail's rules, reason codes and details."""
    return [(v.rule, v.reason, v.detail) for v in checked.trail]


def test_a_found_quote_keeps_its_label_and_the_span_of_the_sentence_it_stands_in() -> None:
    checked = check_statement(statement("Descale every three months.", (1, "every three months")), BOOK, SHOWN, "drop")
    assert (checked.quotes, checked.found, checked.abstains) == (1, 1, False)
    assert checked.statement is not None and checked.statement.supported
    [evidence] = checked.statement.evidence
    assert evidence.label == 1 and DESCALE[evidence.start : evidence.end] == evidence.quote == FIRST


def test_the_quote_that_travels_is_the_passage_s_own_text() -> None:
    checked = check_statement(statement("Monthly.", (1, "MACHINE EVERY three")), BOOK, SHOWN, "drop")
    assert checked.statement is not None
    assert checked.statement.evidence[0].quote == FIRST  # with its line break


def test_a_quote_over_two_sentences_travels_with_both() -> None:
    quoted = statement("Use citric acid, then rinse.", (1, "citric acid. Rinse the tank"))
    checked = check_statement(quoted, BOOK, SHOWN, "drop")
    assert checked.statement is not None and checked.statement.evidence[0].quote == DESCALE


def test_a_quote_outside_every_sentence_keeps_its_own_span() -> None:
    book = PassageBook([Passage(label=1, title="Manual", text="## Descale every three months\n\nUse citric acid.")])
    checked = check_statement(statement("Descale every three months.", (1, "Descale every three")), book, {1}, "drop")
    assert checked.statement is not None and checked.statement.evidence[0].quote == "Descale every three"


def test_two_quotes_of_one_sentence_are_one_piece_of_evidence() -> None:
    quoted = statement("Descale every three months.", (1, "every three months"), (1, "Descale the machine"))
    checked = check_statement(quoted, BOOK, SHOWN, "drop")
    assert (checked.quotes, checked.found) == (2, 1)
    assert checked.statement is not None and [e.quote for e in checked.statement.evidence] == [FIRST]


def test_only_the_quotes_found_keep_their_labels() -> None:
    checked = check_statement(
        statement(
            "Descale with citric acid.", (1, "with citric acid"), (2, "with citric acid"), (1, "with citric acid")
        ),
        BOOK,
        SHOWN,
        "drop",
    )
    assert (checked.quotes, checked.found) == (3, 1)  # passage 2 does not say it; the repeat counts once
    assert checked.statement is not None and [e.label for e in checked.statement.evidence] == [1]


def test_a_statement_with_no_quote_found_is_dropped_or_marked() -> None:
    unfound = statement("Descale weekly.", (1, "descale weekly with vinegar"))
    dropped = check_statement(unfound, BOOK, SHOWN, "drop")
    assert dropped.statement is None and (dropped.quotes, dropped.found, dropped.abstains) == (1, 0, False)
    marked = check_statement(unfound, BOOK, SHOWN, "mark")
    assert marked.statement == AnswerStatement(text="Descale weekly.", evidence=[], supported=False)
    assert check_statement(statement("No quote at all."), BOOK, SHOWN, "drop").statement is None


def test_a_label_the_model_was_not_shown_or_never_numbered_is_not_looked_up() -> None:
    quoted = statement("Descale every three months.", (1, "every three months"))
    assert check_statement(quoted, BOOK, {2}, "drop").statement is None
    assert check_statement(statement("x.", (9, "every three months")), BOOK, {9}, "drop").statement is None


def test_a_web_passage_is_never_quote_evidence() -> None:
    checked = check_statement(statement("Weekly.", (3, "descale the machine every week")), BOOK, SHOWN, "drop")
    assert checked.statement is None and checked.found == 0


def test_a_statement_that_says_the_documents_do_not_answer_is_an_abstention() -> None:
    checked = check_statement(statement("The documents do not answer this question."), BOOK, SHOWN, "mark")
    assert checked.statement is None and checked.abstains


def test_render_writes_each_label_once_before_the_final_stop() -> None:
    evidence = [
        Evidence(label=3, quote="a", start=0, end=1),
        Evidence(label=4, quote="b", start=0, end=1),
        Evidence(label=3, quote="c", start=2, end=3),
    ]
    kept = AnswerStatement(text="Brew at 93 °C.", evidence=evidence, supported=True)
    assert render(kept, first=True) == "Brew at 93 °C [3][4]."
    assert render(kept, first=False) == " Brew at 93 °C [3][4]."
    no_stop = AnswerStatement(text="Brew hot", evidence=evidence[:1], supported=True)
    assert render(no_stop, first=True) == "Brew hot [3]"
    unsupported = AnswerStatement(text="Descale weekly.", supported=False)
    assert render(unsupported, first=True) == "Descale weekly." + MARK


LEAVE = PassageBook(
    [
        Passage(
            label=1, title="Handbook", text="Halvorsen Marine Instruments AS is a fictional company. Staff get 25 days."
        ),
        Passage(label=2, title="Hotels", text="City | Nightly hotel cap\nHamburg | 170 EUR\nOslo | 1900 NOK"),
    ]
)


def test_a_real_quote_that_does_not_say_the_statement_s_figure_is_no_evidence() -> None:
    invented = statement(
        "Employees get 27 days of annual leave.", (1, "Halvorsen Marine Instruments AS is a fictional company")
    )
    checked = check_statement(invented, LEAVE, {1, 2}, "drop", question="How much annual leave do employees get?")
    assert checked.statement is None and checked.found == 0
    assert reasons(checked)[0] == ("says", "misses_number", "27")


def test_a_paraphrase_keeps_its_quote_when_the_numbers_and_half_the_words_are_there() -> None:
    said = statement("Staff are given 25 days.", (1, "Staff get 25 days"))
    checked = check_statement(said, LEAVE, {1, 2}, "drop", question="How much leave?")
    assert checked.statement is not None and checked.statement.evidence[0].quote == "Staff get 25 days."


def test_facts_finds_the_sentence_that_holds_what_the_statement_adds_when_the_quote_is_the_model_s_own() -> None:
    own_words = statement("170", (1, "The nightly hotel cap in Hamburg is 170."))
    question = "What is the nightly hotel cap in Hamburg?"
    assert check_statement(own_words, LEAVE, {1, 2}, "drop", question=question).statement is None
    checked = check_statement(own_words, LEAVE, {1, 2}, "drop", question=question, quotes="facts")
    assert checked.statement is not None
    [evidence] = checked.statement.evidence
    assert evidence.label == 2 and evidence.quote == "Hamburg | 170 EUR"
    assert ("fact_sentence", "holds_every_word", "") in reasons(checked)


def test_facts_puts_the_sentence_that_says_all_of_it_in_place_of_a_quote_that_says_part() -> None:
    wheels = PassageBook(
        [
            Passage(label=1, title="Packaging", text="Compiled projects build one Python wheel per platform."),
            Passage(label=2, title="Packaging", text="The tag py3-none-any means pure Python for any platform."),
        ]
    )
    question = "What does the wheel tag py3-none-any mean?"
    pure = statement("It is pure Python for any platform.", (1, "one Python wheel per platform"))
    assert check_statement(pure, wheels, {1, 2}, "drop", question=question).statement is not None
    checked = check_statement(pure, wheels, {1, 2}, "drop", question=question, quotes="facts")
    assert checked.statement is not None and checked.found == 1
    [evidence] = checked.statement.evidence
    assert evidence.label == 2 and evidence.quote.startswith("The tag py3-none-any")


def test_facts_finds_nothing_for_a_figure_no_sentence_holds_or_a_statement_that_adds_nothing() -> None:
    question = "What is the nightly hotel cap in Hamburg?"
    for text in ("200", "The nightly hotel cap in Hamburg."):
        checked = check_statement(statement(text, (2, text)), LEAVE, {1, 2}, "drop", question=question, quotes="facts")
        assert checked.statement is None


def test_a_statement_that_restates_the_question_is_no_answer_even_with_a_real_quote() -> None:
    question = "How often should the machine be descaled?"
    restated = statement("How often should the machine be descaled?", (1, "Descale the machine"))
    checked = check_statement(restated, BOOK, SHOWN, "drop", question=question)
    assert checked.statement is None and reasons(checked)[0] == ("says", "adds_nothing", "")


def test_a_statement_copied_from_a_passage_is_its_own_quote() -> None:
    copied = statement("Descale the machine every three months … citric acid.", (2, "not in passage 2"))
    checked = check_statement(copied, BOOK, SHOWN, "drop", question="How often?")
    assert checked.statement is not None and checked.found == 0
    [evidence] = checked.statement.evidence
    assert evidence.label == 1 and evidence.quote == FIRST
    assert reasons(checked) == [
        ("quote", "not_in_passage", ""),
        ("own_words", "in_passage", ""),
        ("supported", "evidence", ""),
    ]


def test_facts_finds_a_copied_sentence_with_a_word_changed_and_still_checks_what_the_statement_says() -> None:
    question = "How much leave do staff get?"
    book = PassageBook(
        [Passage(label=1, title="Handbook", text="Leave. All our staff get 25 days of paid leave each year.")]
    )
    copied = "Halvorsen employees get 25 days of paid leave each year."
    assert check_statement(statement("25 days.", (1, copied)), book, {1}, "drop", question=question).statement is None
    checked = check_statement(statement("25 days.", (1, copied)), book, {1}, "drop", question=question, quotes="facts")
    assert checked.statement is not None and checked.found == 1  # found as a quote, not as a fact sentence
    assert reasons(checked)[0] == ("quote", "found_by_run", "")
    assert checked.statement.evidence[0].quote == "All our staff get 25 days of paid leave each year."
    invented = check_statement(statement("30 days.", (1, copied)), book, {1}, "drop", question=question, quotes="facts")
    assert invented.statement is None  # the sentence found does not say the statement's figure


SORTING = PassageBook(
    [
        Passage(
            label=1,
            title="Sorting HOWTO",
            text="Sorts are guaranteed to be stable. That means that\nwhen multiple records have the same key, "
            "their original order is preserved.",
        ),
        Passage(label=2, title="Curses", text="The Windows version of Python doesn't include the curses\nmodule."),
        Passage(label=3, title="Tutorial", text="Important warning: The default value is evaluated only once."),
    ]
)


def test_a_yes_or_no_answer_stands_on_a_sentence_that_holds_half_of_what_it_affirms_or_denies() -> None:
    question = "When two records share a sort key, does the sort keep them in their original order?"
    quote = (1, "when multiple records have the same key, their original order is preserved")
    yes = statement("Yes, the sort keeps records with the same key in their original order.", quote)
    checked = check_statement(yes, SORTING, {1, 2, 3}, "drop", question=question)
    assert checked.statement is not None and checked.found == 1
    unrelated = statement("Yes, the sort keeps records in their original order.", (3, "The default value is evaluated"))
    assert check_statement(unrelated, SORTING, {1, 2, 3}, "drop", question=question).statement is None


def test_a_bare_no_stands_on_a_sentence_that_denies_what_the_question_asks() -> None:
    question = "Does the Windows build of Python come with the curses module?"
    quote = (2, "The Windows version of Python doesn't include the curses module.")
    assert check_statement(statement("No", quote), SORTING, {1, 2, 3}, "drop", question=question).statement is not None
    asserting = PassageBook([Passage(label=2, title="Curses", text="The Windows version of Python includes curses.")])
    affirmed = statement("No.", (2, "The Windows version of Python includes curses."))
    checked = check_statement(affirmed, asserting, {2}, "drop", question=question)
    assert checked.statement is None and reasons(checked)[0] == ("says", "no_without_denial", "")


def test_a_no_that_repeats_the_question_denied_is_a_no() -> None:
    question = "Can the machine be backflushed if it has no solenoid valve?"
    manual = PassageBook(
        [Passage(label=1, title="Care", text="If your machine has no solenoid valve, never backflush it.")]
    )
    quote = (1, "If your machine has no solenoid valve, never backflush it.")
    for text in ("No, the machine cannot be backflushed if it has no solenoid valve.", "No, never backflush it."):
        assert check_statement(statement(text, quote), manual, {1}, "drop", question=question).statement is not None
    # A "yes" keeps its words: "without" is a claim the sentence does not make.
    wrong = statement("Yes, it can be backflushed without a valve.", quote)
    assert check_statement(wrong, manual, {1}, "drop", question=question).statement is None
    bare = check_statement(statement("No.", (1, "If your machine has no solenoid valve")), manual, {1}, "drop")
    assert bare.statement is None and reasons(bare)[0][:2] == ("says", "off_the_proposition")


def test_a_yes_does_not_stand_on_a_sentence_that_denies_what_it_affirms() -> None:
    question = "Can the espresso machine be backflushed if it has no solenoid valve?"
    text = "If your machine has no solenoid (many machines do not), never backflush it: the pressure has nowhere to go."
    manual = PassageBook([Passage(label=1, title="Care", text=text)])
    yes = statement("Yes, the espresso machine can be backflushed if it has no solenoid valve.", (1, text))
    denied = check_statement(yes, manual, {1}, "drop", question=question)
    assert denied.statement is None and reasons(denied)[0] == ("says", "yes_denied", "backflush")
    assert check_statement(statement("No.", (1, text)), manual, {1}, "drop", question=question).statement is not None


def test_a_yes_stands_where_the_sentence_denies_only_what_the_question_denies_or_something_else() -> None:
    question = "Can the machine be descaled if it has no water filter?"
    text = "A machine with no water filter can be descaled with citric acid; never use vinegar."
    manual = PassageBook([Passage(label=1, title="Care", text=text)])
    yes = statement("Yes, it can be descaled if it has no water filter.", (1, text))
    assert check_statement(yes, manual, {1}, "drop", question=question).statement is not None


def test_a_table_row_is_evidence_for_what_its_header_names() -> None:
    row = "| 2 | Innisford | Selkie Bay | 540 m |"
    stages = f"| Stage | From | To | Total ascent |\n| 1 | Kilbride | Innisford | 310 m |\n{row}"
    path = PassageBook([Passage(label=1, title="Coastal path", text=stages)])
    question = "How much climbing is there on the Innisford to Selkie Bay stage?"
    climb = statement("The stage has a total ascent of 540 metres.", (1, "| 2 | Innisford | Selkie Bay | 540 m |"))
    checked = check_statement(climb, path, {1}, "drop", question=question)
    assert (
        checked.statement is not None
        and checked.statement.evidence[0].quote == "| 2 | Innisford | Selkie Bay | 540 m |"
    )
    # The model's own wording, no quote found: the row under its header still holds every word it adds.
    own = statement("The stage has a total ascent of 540 metres.", (1, "Total ascent: 540 m"))
    assert check_statement(own, path, {1}, "drop", question=question, quotes="facts").statement is not None
    wrong = statement("The stage has a total ascent of 310 metres.", (1, row))
    assert check_statement(wrong, path, {1}, "drop", question=question).statement is None


def test_an_answer_made_of_function_words_is_weighed_by_them() -> None:
    question = "How many times is the default value of a function parameter evaluated?"
    once = statement("The default value is evaluated only once.", (3, "The default value is evaluated only once."))
    assert check_statement(once, SORTING, {1, 2, 3}, "drop", question=question).statement is not None
    twice = statement("The default value is evaluated twice.", (3, "The default value is evaluated only once."))
    assert check_statement(twice, SORTING, {1, 2, 3}, "drop", question=question).statement is None


def test_a_unit_written_short_or_long_is_the_same_word() -> None:
    loaf = PassageBook([Passage(label=1, title="Bread", text="Ingredient | Share | Weight\nFine sea salt | 2% | 10 g")])
    question = "How much salt goes into the loaf?"
    grams = statement("The loaf takes 10 grams of salt, 2 percent.", (1, "Fine sea salt | 2% | 10 g"))
    assert check_statement(grams, loaf, {1}, "drop", question=question).statement is not None
    kilos = statement("The loaf takes 10 kilograms of salt, 2 percent.", (1, "Fine sea salt | 2% | 10 g"))
    assert check_statement(kilos, loaf, {1}, "drop", question=question).statement is None
