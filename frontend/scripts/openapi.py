"""Write the agent's OpenAPI schema, plus its SSE event models, to frontend/openapi.json.

The app produces its schema without starting (no knowledge base, no model); it declares the SSE
event models of `/query/stream` under components/schemas as `AgentEvent` and its members, so
`openapi-typescript` types both.

    python frontend/scripts/openapi.py            # rewrite frontend/openapi.json
    python frontend/scripts/openapi.py --check    # exit 1 when the committed file is stale
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from sextant.agent.app import create_app
from sextant.agent.settings import AgentSettings

TARGET = Path(__file__).resolve().parents[1] / "openapi.json"


def schema() -> dict[str, Any]:
    return create_app(AgentSettings(_env_file=None)).openapi()  # type: ignore[call-arg]


def main(argv: list[str]) -> int:
    text = json.dumps(schema(), indent=2, sort_keys=True) + "\n"
    if "--check" in argv:
        if not TARGET.exists() or TARGET.read_text() != text:
            sys.stderr.write(
                f"{TARGET} is not the agent's current schema: run `python frontend/scripts/openapi.py` "
                "then `npm run gen:api` in frontend/\n"
            )
            return 1
        return 0
    TARGET.write_text(text)
    sys.stderr.write(f"wrote {TARGET}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
