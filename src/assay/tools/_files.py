"""``read_file``, ``list_files`` and ``git_show``: what each shows, and what each refuses."""

from __future__ import annotations

from assay.tools._errors import ToolError
from assay.tools._paths import compile_glob, normalize_relative_path, resolve_inside
from assay.tools._text import ExcerptLimits, render_excerpt
from assay.tools.workspace import Revision, Workspace

__all__ = ["git_show", "list_files", "read_file"]


def read_file(
    workspace: Workspace, path: str, *, start: int, end: int | None, limits: ExcerptLimits
) -> str:
    """Show lines of a file of the head checkout, numbered.

    Args:
        workspace: The repository.
        path: Repository-relative path, as the model gave it.
        start: First line (1-based).
        end: Last line (inclusive), or ``None``.
        limits: Lines and bytes per call.

    Returns:
        The excerpt.

    Raises:
        ToolError: The path is refused, missing, a directory, a submodule or binary.
    """
    relative = _file_path(path)
    _refuse_outside_links(workspace, relative)
    resolved = resolve_inside(workspace.root, relative)
    entry = workspace.tree("head").get(relative)
    if entry is not None and entry.kind == "submodule":
        raise ToolError(_submodule_message(relative, entry.object_id))
    if resolved.is_dir():
        raise ToolError(f"{relative!r} is a directory; list_files with glob {relative + '/**'!r}")
    if not resolved.is_file():
        raise ToolError(f"no file {relative!r} at head; list_files or grep can find the path")
    label = relative
    if entry is not None and entry.kind == "symlink":
        target = (workspace.root / relative).readlink().as_posix()
        label = f"{relative} (symbolic link to {target})"
    return render_excerpt(
        label,
        resolved.read_bytes(),
        start=start,
        end=end,
        limits=limits,
        read_on=f"call read_file with path={relative!r} and start={{start}} to read on",
    )


def list_files(workspace: Workspace, glob: str, *, max_results: int) -> str:
    """List the head tree's paths selected by a glob.

    Args:
        workspace: The repository.
        glob: See :func:`assay.tools._paths.compile_glob`.
        max_results: The most paths listed.

    Returns:
        A count line, then one path per line (links and submodules marked).

    Raises:
        ToolError: The glob is refused or malformed.
    """
    pattern = compile_glob(glob)
    tree = workspace.tree("head")
    selected = sorted(path for path in tree if pattern.matches(path))
    if not selected:
        return f"No files match {glob!r} at head."
    refused = workspace.refused_links
    lines = []
    for path in selected[:max_results]:
        entry = tree[path]
        if entry.kind == "submodule":
            lines.append(f"{path}  [submodule]")
        elif entry.kind == "symlink":
            target = (workspace.read_blob("head", path) or b"").decode("utf-8", "replace")
            note = "; it points outside the checkout and is not readable" if path in refused else ""
            lines.append(f"{path} -> {target}  [symbolic link{note}]")
        else:
            lines.append(path)
    noun = "path matches" if len(selected) == 1 else "paths match"
    header = f"{len(selected)} {noun} {glob!r} at head"
    if len(selected) > max_results:
        header += f" (the first {max_results} are listed; narrow the glob for the rest)"
    return "\n".join([f"{header}:", *lines])


def git_show(
    workspace: Workspace,
    revision: Revision,
    path: str,
    *,
    start: int,
    end: int | None,
    limits: ExcerptLimits,
) -> str:
    """Show lines of a file as it is at the base or head revision, from git.

    Args:
        workspace: The repository.
        revision: ``"head"`` or ``"base"``.
        path: Repository-relative path.
        start: First line (1-based).
        end: Last line (inclusive), or ``None``.
        limits: Lines and bytes per call.

    Returns:
        The excerpt.

    Raises:
        ToolError: No base, a refused or missing path, a directory, a link or a submodule.
    """
    if revision == "base" and not workspace.has_base():
        raise ToolError("this review has no base revision; use rev 'head'")
    relative = _file_path(path)
    tree = workspace.tree(revision)
    entry = tree.get(relative)
    if entry is None:
        raise ToolError(_missing_message(workspace, revision, relative))
    if entry.kind == "submodule":
        raise ToolError(_submodule_message(relative, entry.object_id))
    content = workspace.read_blob(revision, relative)
    if content is None:
        raise ToolError(f"no file {relative!r} at {revision}")
    if entry.kind == "symlink":
        target = content.decode("utf-8", "replace")
        raise ToolError(
            f"{relative!r} is a symbolic link at {revision} (to {target!r}); git_show does not "
            "follow links: show the file it names instead, if that is in the repository"
        )
    return render_excerpt(
        f"{relative} at {revision}",
        content,
        start=start,
        end=end,
        limits=limits,
        read_on=f"call git_show with rev={revision!r}, path={relative!r} and start={{start}}",
    )


def _file_path(path: str) -> str:
    relative = normalize_relative_path(path)
    if not relative:
        raise ToolError("give a file path relative to the repository root; list_files lists them")
    return relative


def _refuse_outside_links(workspace: Workspace, relative: str) -> None:
    refused = workspace.refused_links
    parts = relative.split("/")
    for length in range(1, len(parts) + 1):
        prefix = "/".join(parts[:length])
        if prefix in refused:
            raise ToolError(
                f"{prefix!r} is a symbolic link to {refused[prefix]!r}, outside the checkout; "
                "refused"
            )


def _missing_message(workspace: Workspace, revision: Revision, relative: str) -> str:
    tree = workspace.tree(revision)
    if any(path.startswith(relative + "/") for path in tree):
        return f"{relative!r} is a directory at {revision}; git_show shows files"
    message = f"no file {relative!r} at {revision}"
    other: Revision = "head" if revision == "base" else "base"
    if other == "head" or workspace.has_base():
        if relative in workspace.tree(other):
            change = "added" if revision == "base" else "deleted or renamed"
            message += f" (it was {change} by this change; it exists at {other})"
    return message


def _submodule_message(relative: str, commit: str) -> str:
    return (
        f"{relative!r} is a submodule (another repository, at commit {commit[:12]}); "
        "its files are not part of this checkout"
    )
