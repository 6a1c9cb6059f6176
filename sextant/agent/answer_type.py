"""What kind of answer a question asks for: a quantity, or anything.

"How many nematodes per square metre?" is answered by a number, and "The nematode, watered onto the soil,
kills slugs" is no answer to it however well its quote stands in the passage: a small model, shown passages
about the subject that leave the figure out, restates what they do say (learning/agent.md, run 20). A
question that asks how many, how much, how long, how often (and the like), or for a year, a temperature, a
rate or a price, is answered only by a statement holding a number: digits, a number word, or a word that is a
count, a frequency or a span of time ("once", "twice", "weekly", "every", "overnight", "a week"; "free" for a
price).
"""

from __future__ import annotations

import re

_QUANTITY_QUESTION = re.compile(
    r"^\s*(?:how\s+(?:many|much|long|often|far|old|high|big|heavy|hot|warm|cold|large|tall|deep|wide|soon|fast)\b"
    # "What rear tyre pressure is suggested", "What share of my pay": the noun asked for, then its verb or
    # "of"; not "What length requirement applies", which asks for a rule.
    r"|(?:in\s+)?(?:what|which)(?:\s+[\w'-]+){0,3}?\s+(?:year|temperature|percentage|share|pressure|rate|age"
    r"|size|weight|number|dose|amount|torque|speed|price|cost|fee|salary|distance|duration|length|height|width"
    r"|depth|capacity|voltage|frequency)s?\s+(?:is|are|was|were|does|do|did|should|must|can|could|will|would|may|might|has|have"
    r"|of|for|per)\b)",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
    r"|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand"
    r"|million|billion|once|twice|thrice|half|quarter|third|dozen|few|several|couple"
    r"|none|zero|daily|weekly|fortnightly|monthly|quarterly|yearly|annually|hourly|nightly|overnight"
    r"|indefinitely|permanently|every|each|always|never|free"
    r"|seconds?|minutes?|hours?|days?|weeks?|fortnights?|months?|years?|decades?|centur(?:y|ies))\b",
    re.IGNORECASE,
)


def asks_for_quantity(question: str) -> bool:
    """Whether ``question`` asks how many, how much, how long… or for a measure (a temperature, a price)."""
    return _QUANTITY_QUESTION.search(question) is not None


def holds_a_number(statement: str) -> bool:
    """Whether ``statement`` holds a number: digits, a number word, a count, a frequency or a span of time."""
    return _NUMBER.search(statement) is not None
