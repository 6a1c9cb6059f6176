"""The agent's HTTP routes, one module per resource, each an ``APIRouter`` that ``create_app`` includes."""
