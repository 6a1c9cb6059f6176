"""Write an MCP bundle's manifest.json: packaging/mcpb/manifest.template.json with this version and wheel.

python scripts/mcpb_manifest.py STAGE_DIR   (STAGE_DIR/server/ holds the one wheel)
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TEMPLATE = REPO / "packaging" / "mcpb" / "manifest.template.json"


def main() -> None:
    stage = Path(sys.argv[1])
    (wheel,) = (stage / "server").glob("sextant_kb-*.whl")
    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    text = TEMPLATE.read_text(encoding="utf-8").replace("@VERSION@", version).replace("@WHEEL@", wheel.name)
    manifest = json.loads(text)  # the template must stay valid JSON after filling in
    (stage / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
