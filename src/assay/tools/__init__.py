"""Repository tools for agentic reviewers: a sandboxed, read-only checkout and four tools.

Example::

    from assay.tools import Toolbox, Workspace

    with Workspace(repo, head=head_sha, base=base_sha) as workspace:
        toolbox = Toolbox(workspace)
        toolbox.read_file("src/app.py", start=40).text
        toolbox.dispatch("grep", '{"pattern": "def load_config"}').text

See ``docs/tools.md`` for the tools, their limits and the sandbox rules.
"""

from __future__ import annotations

from assay.tools._git_tree import MaterializeStats, TreeEntry
from assay.tools._grep import find_ripgrep
from assay.tools.definitions import (
    TOOL_NAMES,
    GitShowArguments,
    GrepArguments,
    ListFilesArguments,
    ReadFileArguments,
    ToolLimits,
    tool_definitions,
)
from assay.tools.toolbox import Toolbox, ToolCallRecord, ToolResult
from assay.tools.workspace import Revision, Workspace

__all__ = [
    "TOOL_NAMES",
    "GitShowArguments",
    "GrepArguments",
    "ListFilesArguments",
    "MaterializeStats",
    "ReadFileArguments",
    "Revision",
    "ToolCallRecord",
    "ToolLimits",
    "ToolResult",
    "Toolbox",
    "TreeEntry",
    "Workspace",
    "find_ripgrep",
    "tool_definitions",
]
