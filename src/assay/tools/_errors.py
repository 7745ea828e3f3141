"""The one error a tool raises: its message goes back to the model as the tool's answer."""

from __future__ import annotations

__all__ = ["ToolError"]


class ToolError(Exception):
    """A refused or failed tool call; the message says what was wrong and what to do instead.

    Never escapes the toolbox: :meth:`assay.tools.Toolbox.dispatch` turns it into an
    ``error: …`` answer for the model and a failed :class:`assay.tools.ToolCallRecord`. The
    message must not contain host paths (the checkout's temporary directory): answers are part
    of the next request, which must be the same on every machine for the replay cache.
    """
