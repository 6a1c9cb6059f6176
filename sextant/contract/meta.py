"""The request ``_meta`` keys the host sets, and the prefix that marks a page image as absent rather than failed."""

from __future__ import annotations

# The agent puts its HTTP request id here, so one id follows a question through both processes' logs.
REQUEST_ID_META = "sextant/request_id"
# The trusted host names each call's workspace here; no tool takes a workspace argument.
WORKSPACE_META = "sextant/workspace"
# kb_page_image's errors that mean "nothing to show" (the agent answers 404) start so; any other is a failure.
NO_PAGE_IMAGE = "no page image"
