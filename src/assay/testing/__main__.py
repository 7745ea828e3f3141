"""Run a scripted server by hand: ``python -m assay.testing --port 8080 --reply-file replies.json``.

The reply file is a JSON object mapping a stage (the ``X-Assay-Stage`` header) to its reply:
a string is the content, an object is sent as JSON content, a list is answered one item per
request in order. The key ``"*"`` answers every other stage. Without a file, the server echoes
the last user message.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from assay.testing._reply import ReplyFunction
from assay.testing._script import script_by_stage
from assay.testing._server import ScriptedLLMServer

_DEFAULT_STAGE = "*"


def load_reply_file(path: Path) -> ReplyFunction:
    """Build a reply function from a reply file (see the module docstring).

    Args:
        path: The JSON file.

    Returns:
        The reply function.

    Raises:
        ValueError: If the file is not a JSON object.
    """
    routes = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(routes, dict):
        raise ValueError(f"{path}: expected a JSON object mapping stage to reply")
    default = routes.pop(_DEFAULT_STAGE, None)
    return script_by_stage(routes, default=default)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until interrupted.

    Args:
        argv: The command-line arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit status.
    """
    parser = argparse.ArgumentParser(
        prog="python -m assay.testing",
        description="A scripted OpenAI-compatible chat-completions server on 127.0.0.1.",
    )
    parser.add_argument("--port", type=int, default=8080, help="port (0: any free one)")
    parser.add_argument("--reply-file", type=Path, help="JSON object: stage → reply")
    parser.add_argument("--model", action="append", help="model id to list (repeatable)")
    arguments = parser.parse_args(argv)
    try:
        reply = load_reply_file(arguments.reply_file) if arguments.reply_file else None
    except (OSError, ValueError) as error:
        parser.error(str(error))
    server = ScriptedLLMServer(
        reply, models=arguments.model or ("assay-test",), port=arguments.port
    )
    with server:
        print(f"serving on {server.base_url} (Ctrl-C to stop)", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    for reply_error in server.errors:
        print(f"reply error: {reply_error!r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
