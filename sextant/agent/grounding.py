"""The quote check: a statement keeps a label only where its quote stands in that passage.

Deterministic, and the same for every model: a quote is looked up in the passage it names
(``sextant.agent.evidence``); found, and saying what the statement says, the label stays; otherwise the label
goes. The span that travels with the label is the whole sentences the quote stands in: they are what the
check judged, and the local model's quotes are only their first words (its grammar caps them,
``sextant.llm.llama_local``). A statement whose own text stands in a passage shown (small models copy
sentences) is its own quote. A statement left with no evidence is dropped, or kept and visibly marked
(``unsupported``).

"Saying what the statement says" is judged on the sentences with, for a table row, its header row
(``Sentence.said``). Of the content words the statement adds to the question (stemmed,
``sextant.agent.sentences.answer_terms``, which keeps the function words an answer can be: "only once",
"not"), the sentences the quote stands in hold every number and at least half of the rest (a paraphrase says
"kept" for "keep" and "seven" for "7"). A small model otherwise quotes a real but unrelated sentence ("X is a
fictional company") beside an invented figure, or restates the question and quotes the heading that asks it.
A yes/no answer is the exception: "Yes, the sort keeps equal keys in order" restates the question by design,
and no passage says "yes". Its claim is what follows the yes or no (the question's own words for a bare
"No." or one of a word or two), and its sentences must hold at least half of that claim's content words; a
"no" must also stand on a sentence that denies something ("not", "n't", "never", "without"…). A "no" that
restates the question denied ("No, it cannot be backflushed") adds no word: its denial is the no. A "yes"
cannot stand on a sentence that denies what it affirms ("never backflush it" for "Yes, it can be
backflushed"): a word of the proposition within a few words after a denial, in one clause, that neither the
question nor the statement denies ("…if it has no solenoid valve").

Two documented tolerances, ``quotes="facts"``. First, a small model copies a passage's sentence into its
quote but changes a word or two ("Quillfeather Analytics Ltd. uses core hours" for "We use core hours"): a
quote not found whole is found by its longest run of words that stands in the passage, when that run is most
of the quote (``evidence.locate_run``); the span is then the passage's sentences, and they must still say
what the statement says. Second, small models write the right fact and then "quote" their own sentence
rather than the passage's. When no quote is found, the statement still stands on a sentence of a
passage the model was shown (those it cited first) that holds *every* word the statement adds to the
question: its numbers, names and other content words (stemmed, ``sextant.agent.sentences.terms``). That
whole sentence becomes the quote, and it also replaces quotes that say only part of what the statement
does (the answer check reads the evidence, and a sentence beside the point reads as no answer). A
statement that adds nothing to the question, or adds a word no single sentence holds (an invented year, a
name from elsewhere), still finds no evidence.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Literal

from sextant.agent.citations import says_not_answered
from sextant.agent.events import AnswerStatement, Evidence, Reason, Rule, Verdict
from sextant.agent.evidence import Span, locate, locate_run
from sextant.agent.passages import Passage, PassageBook
from sextant.agent.sentences import Sentence, answer_terms, terms
from sextant.llm.chat import Quote, Statement

Unsupported = Literal["drop", "mark"]
QuoteMatch = Literal["exact", "facts"]
MARK = " _(not found in the passages)_"
_POLAR = re.compile(r"^\s*(yes|no)\b[\s,.;:!-]*", re.IGNORECASE)
_DENIES = re.compile(r"\b(?:not|no|never|none|nor|cannot|without)\b|n't\b", re.IGNORECASE)
_CLAUSE = re.compile(r"[,;:.!?()\[\]]")
_DENIED_REACH = 3  # words after a denial that it governs: "never backflush it", "do not immerse the handle"


@dataclass(frozen=True)
class Claim:
    """What evidence must say for a statement: the words it adds to the question; for a yes/no answer that
    adds none, its polarity, the content words of what it affirms or denies, and those of them that the
    question or the statement itself denies ("…if it has no solenoid valve")."""

    added: frozenset[str]
    polarity: Literal["yes", "no"] | None = None
    proposition: frozenset[str] = frozenset()
    denied: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Checked:
    """What the check made of one statement: ``statement`` is None when it was dropped; ``trail`` every rule's
    verdict, in order."""

    statement: AnswerStatement | None
    quotes: int  # quotes the model gave
    found: int  # of those, found in the passage they named
    abstains: bool = False  # the statement says the documents do not answer
    trail: tuple[Verdict, ...] = ()


@dataclass
class Candidate:
    """A statement going through the rules: what it claims, the evidence found so far, the verdicts given."""

    statement: Statement
    claim: Claim
    book: PassageBook
    passages: list[Passage]  # the knowledge-base passages the model was shown
    quotes: QuoteMatch
    evidence: list[Evidence] = field(default_factory=list)
    found: int = 0
    trail: list[Verdict] = field(default_factory=list)

    def judge(
        self,
        rule: Rule,
        passed: bool,
        reason: Reason,
        label: int | None = None,
        detail: str = "",
        quote: Quote | None = None,
    ) -> None:
        words = quote.text if quote is not None else None
        self.trail.append(Verdict(rule=rule, passed=passed, reason=reason, label=label, detail=detail, quote=words))


def quotes_stand(candidate: Candidate) -> None:
    """Rules ``quote`` and ``says``: each quote is looked up in the passage it names (by its longest run of words
    too, with ``quotes="facts"``); found, the sentences it stands in must say what the statement claims."""
    by_label = {p.label: p for p in candidate.passages}
    for quote in candidate.statement.quotes:
        passage = by_label.get(quote.label)
        if passage is None:
            candidate.judge("quote", False, "label_not_shown", quote.label, quote=quote)
            continue
        span, reason = locate(quote.text, passage.text), "found"
        if span is None and candidate.quotes == "facts":
            span, reason = locate_run(quote.text, passage.text), "found_by_run"
        if span is None:
            candidate.judge("quote", False, "not_in_passage", quote.label, quote=quote)
            continue
        around = _sentences_around(candidate.book, passage, span)
        start, end = _grown(span, around)
        unsaid = _unsaid(candidate.claim, "\n".join([passage.text[start:end], *(x.header for x in around if x.header)]))
        if unsaid is not None:
            candidate.judge("says", False, unsaid[0], quote.label, unsaid[1], quote)
            continue
        if any(e.label == quote.label and (e.start, e.end) == (start, end) for e in candidate.evidence):
            candidate.judge("quote", True, "same_sentences", quote.label, quote=quote)
            continue
        candidate.judge("quote", True, "found" if reason == "found" else "found_by_run", quote.label, quote=quote)
        candidate.evidence.append(Evidence.at(quote.label, passage.text, start, end))
    candidate.found = len(candidate.evidence)


def own_words(candidate: Candidate) -> None:
    """Rule ``own_words``: a statement with no evidence whose own text stands in a passage shown (those it cited
    first) is its own quote; one that adds nothing to the question is not looked for."""
    if candidate.evidence or not candidate.claim.added:
        return
    for passage in _cited_first(candidate.statement, candidate.passages):
        span = locate(candidate.statement.text, passage.text)
        if span is not None:
            start, end = _grown(span, _sentences_around(candidate.book, passage, span))
            candidate.evidence = [Evidence.at(passage.label, passage.text, start, end)]
            candidate.judge("own_words", True, "in_passage", passage.label)
            return
    candidate.judge("own_words", False, "nowhere")


def fact_sentence(candidate: Candidate) -> None:
    """Rule ``fact_sentence`` (``quotes="facts"``): evidence that does not hold every word the statement adds to the
    question gives way to the one sentence of a passage shown that does; with none, the evidence stays."""
    added = candidate.claim.added
    if candidate.quotes != "facts" or added <= set(answer_terms(" ".join(e.quote for e in candidate.evidence))):
        return
    if added:
        for passage in _cited_first(candidate.statement, candidate.passages):
            for sentence in candidate.book.sentences(passage):
                if added <= set(answer_terms(sentence.said)):
                    candidate.evidence = [Evidence.at(passage.label, passage.text, sentence.start, sentence.end)]
                    candidate.judge("fact_sentence", True, "holds_every_word", passage.label)
                    return
    candidate.judge("fact_sentence", False, "no_sentence_holds_it", detail=" ".join(sorted(added)))


# The rules that find a statement's evidence, in the order they run; each reads what the ones before it found.
EVIDENCE_RULES = (quotes_stand, own_words, fact_sentence)


def check_statement(
    statement: Statement,
    book: PassageBook,
    shown: Collection[int],
    unsupported: Unsupported,
    *,
    question: str = "",
    quotes: QuoteMatch = "exact",
) -> Checked:
    """Run the evidence rules over ``statement`` (only passages the model was shown), then decide (rule
    ``supported``): kept with its evidence, an abstention, kept and marked, or dropped."""
    claim = _claim(statement.text, question)
    candidate = Candidate(statement, claim, book, book.knowledge_base(shown), quotes)
    for rule in EVIDENCE_RULES:
        rule(candidate)
    given, found = len(statement.quotes), candidate.found
    if candidate.evidence:
        candidate.judge("supported", True, "evidence")
        kept = AnswerStatement(text=statement.text, evidence=candidate.evidence, supported=True)
        return Checked(kept, given, found, trail=tuple(candidate.trail))
    if not statement.quotes and says_not_answered(statement.text):
        candidate.judge("supported", False, "abstains")
        return Checked(None, 0, 0, abstains=True, trail=tuple(candidate.trail))
    if unsupported == "mark":
        candidate.judge("supported", False, "marked")
        return Checked(AnswerStatement(text=statement.text, supported=False), given, 0, trail=tuple(candidate.trail))
    candidate.judge("supported", False, "no_evidence")
    return Checked(None, given, 0, trail=tuple(candidate.trail))


def _sentences_around(book: PassageBook, passage: Passage, span: Span) -> list[Sentence]:
    """The sentences of ``passage`` that ``span`` overlaps."""
    return [x for x in book.sentences(passage) if x.start < span.end and span.start < x.end]


def _grown(span: Span, around: list[Sentence]) -> tuple[int, int]:
    """``span`` grown to the whole sentences it stands in: what the check judged, and what the reader sees."""
    return min([span.start, *(x.start for x in around)]), max([span.end, *(x.end for x in around)])


def _claim(text: str, question: str) -> Claim:
    """What ``text`` claims in answer to ``question``: the words it adds, and a leading yes or no."""
    polar = _POLAR.match(text)
    rest = text[polar.end() :] if polar else text
    asked = frozenset(answer_terms(question))
    added = frozenset(answer_terms(rest)) - asked
    if polar is None:
        return Claim(added)
    polarity: Literal["yes", "no"] = "yes" if polar.group(1).casefold() == "yes" else "no"
    # "No, it cannot be backflushed": the denial is the no, not a word the statement adds.
    claimed = _DENIES.sub(" ", rest) if polarity == "no" else rest
    if frozenset(answer_terms(claimed)) - asked:
        return Claim(added)
    affirmed = {t for t in terms(claimed) if len(t) > 1}
    proposition = affirmed if len(affirmed) >= 2 else {t for t in terms(question) if len(t) > 1}
    return Claim(frozenset(), polarity, frozenset(proposition), _denied(question) | _denied(rest))


def _denied(text: str) -> frozenset[str]:
    """The content words a denial in ``text`` governs: those of the few words after it, in its clause."""
    governed: set[str] = set()
    for clause in _CLAUSE.split(text):
        for denial in _DENIES.finditer(clause):
            words = clause[denial.end() :].split()[:_DENIED_REACH]
            governed.update(terms(" ".join(words)))
    return frozenset(governed)


def _unsaid(claim: Claim, evidence: str) -> tuple[Reason, str] | None:
    """What ``evidence`` fails to say of ``claim`` (a reason code and the words missing), or None when it says it:
    every number the claim adds and half its other words; for a yes/no answer, half the words of its proposition
    (and, for a no, a denial).

    A statement that adds nothing to the question (the question restated) says nothing, whatever it quotes.
    """
    held = set(answer_terms(evidence))
    if claim.polarity is not None:
        if not 2 * len(claim.proposition & held) >= len(claim.proposition) >= 2:
            return "off_the_proposition", " ".join(sorted(claim.proposition - held))
        if claim.polarity == "no":
            return None if _DENIES.search(evidence) is not None else ("no_without_denial", "")
        contradicted = (_denied(evidence) & claim.proposition) - claim.denied
        return ("yes_denied", " ".join(sorted(contradicted))) if contradicted else None
    if not claim.added:
        return "adds_nothing", ""
    numbers = {t for t in claim.added if any(c.isdigit() for c in t)}
    if not numbers <= held:
        return "misses_number", " ".join(sorted(numbers - held))
    words = {t for t in claim.added - numbers if len(t) > 1}
    if words and 2 * len(words & held) < len(words):
        return "misses_words", " ".join(sorted(words - held))
    return None


def _cited_first(statement: Statement, passages: list[Passage]) -> list[Passage]:
    cited = set(statement.sources)
    return sorted(passages, key=lambda p: (p.label not in cited, p.label))


def render(statement: AnswerStatement, *, first: bool) -> str:
    """'Brew at 93 °C.' with evidence in passages 3 and 4 → ' Brew at 93 °C [3][4].'; unsupported ones marked."""
    text = statement.text.strip()
    markers = "".join(f"[{label}]" for label in dict.fromkeys(e.label for e in statement.evidence))
    if markers:
        text = f"{text[:-1]} {markers}{text[-1]}" if text and text[-1] in ".!?" else f"{text} {markers}"
    elif not statement.supported:
        text += MARK
    return text if first else " " + text
