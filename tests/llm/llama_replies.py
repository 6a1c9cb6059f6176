"""Grounded prompts and the answer's grammar, shared by the tests of the llama.cpp runtimes (SmolLM2-135M)."""

from __future__ import annotations

from typing import Any

from llama_cpp import Llama

STATEMENTS = {
    "type": "object",
    "properties": {
        "statements": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "evidence": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "passage": {"type": "integer", "enum": [1, 2, 3]},
                                "quote": {"type": "string", "maxLength": 120},
                            },
                            "required": ["passage", "quote"],
                        },
                    },
                },
                "required": ["text", "evidence"],
            },
        }
    },
    "required": ["statements"],
}
PASSAGES = (
    "[1] Descale the espresso machine every two months if the water is hard. [2] A sourdough loaf needs 75 percent "
    "hydration. [3] Aquarium filters are rinsed in tank water once a month."
)
QUESTIONS = ("How often is the espresso machine descaled?", "How wet is sourdough dough?", "Who won the 1998 cup?")


def reply(llama: Llama, question: str, schema: dict[str, Any] | None, **options: Any) -> str:
    """The reply to ``question`` over ``PASSAGES``, under ``schema``'s grammar if one is given; greedy by default."""
    response_format: Any = {"type": "json_object", "schema": schema} if schema is not None else None
    completion: Any = llama.create_chat_completion(
        messages=[
            {"role": "system", "content": "Answer from the passages, in JSON."},
            {"role": "user", "content": f"{PASSAGES}\n\nQuestion: {question}"},
        ],
        response_format=response_format,
        max_tokens=96,
        **({"temperature": 0.0} | options),
    )
    return str(completion["choices"][0]["message"]["content"])
