"""The answer check: do the sentences a statement stands on answer the question that was asked?

The quote check (``sextant.agent.grounding``) makes sure a statement's words stand in the passage it cites;
it cannot tell whether they answer the question. Asked something the documents are about but do not say (a
near miss: the dose of a treatment the guide only names), a 0.5B model answers from the nearest sentence on
the subject, and the quote is found. A larger local model then reads that statement's evidence sentences, the
place they come from and the question, and is asked whether they give the answer; the statement goes when "no"
is the likelier first word of its reply (``sextant.llm.llama_yes_no``). An answer left with no statement says
that the documents do not answer the question.

No threshold was tuned: the cut is the model's own choice between yes and no. Over 40 golden and 56 near-miss
questions it kept every answer standing on the labelled evidence, removed half of those standing elsewhere,
and left 16 of the 66 unanswerable questions answered instead of 40 (learning/agent.md, run 7).
"""

from __future__ import annotations

import logging

from sextant.agent.events import AnswerStatement
from sextant.agent.passages import PassageBook
from sextant.llm.chat import YesNoModel
from sextant.llm.factory import ModelChoice

log = logging.getLogger(__name__)

SYSTEM = "You check whether a text answers a question. Reply yes or no."
QUESTION = "Text: {text}\n\nQuestion: {question}\n\nDoes the text give the answer to this question? Reply yes or no."
# P(yes) at or above this keeps the statement: yes is at least as likely as no.
KEEP_AT = 0.5


class AnswerCheck:
    """Asks ``model`` whether a statement's evidence answers the question."""

    def __init__(self, model: YesNoModel) -> None:
        self.model = model

    async def probability(self, question: str, statement: AnswerStatement, book: PassageBook) -> float:
        """The model's P(yes) that the sentences holding ``statement``'s evidence answer ``question``; the
        statement answers at ``KEEP_AT`` or above.

        Raises:
            ModelError: the model could not be asked (the caller keeps the statement).
        """
        probability = await self.model.yes_probability(SYSTEM, check_question(question, statement, book))
        log.debug("answer check %.3f for %r", probability, statement.text)
        return probability


def answer_check_for(choice: ModelChoice) -> AnswerCheck | None:
    """The check the configured models make, if any."""
    return AnswerCheck(choice.checker) if choice.checker is not None else None


def check_question(question: str, statement: AnswerStatement, book: PassageBook) -> str:
    """What the checker is asked: the evidence sentences after the place they come from, then the question.

    The place (title, page, section) tells a table row or a short sentence what it is about: without it the
    check also removed 3 of 15 answers standing on the labelled evidence (learning/agent.md, run 7).
    """
    return question_from(question, places(statement, book), evidence_text(statement, book))


def question_from(question: str, place: str, evidence: str) -> str:
    """The checker's question over ``evidence`` sentences that come from ``place``."""
    return QUESTION.format(text=f"From {place}: {evidence}", question=question)


def places(statement: AnswerStatement, book: PassageBook) -> str:
    """Where ``statement``'s evidence comes from (title, page, section), each place once, in citation order."""
    return "; ".join(dict.fromkeys(p.citation() for e in statement.evidence if (p := book.get(e.label)) is not None))


def evidence_text(statement: AnswerStatement, book: PassageBook) -> str:
    """The whole sentences ``statement``'s evidence stands in, in citation order, each once, reflowed."""
    sentences: list[str] = []
    for evidence in statement.evidence:
        passage = book.get(evidence.label)
        if passage is None:
            continue
        holding = [s.said for s in book.sentences(passage) if s.start < evidence.end and evidence.start < s.end]
        for text in holding or [" ".join(evidence.quote.split())]:
            if text not in sentences:
                sentences.append(text)
    return " ".join(sentences)
