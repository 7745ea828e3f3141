"""Prompt building blocks: the template environment, the diff as the model reads it, and the
delimiting of untrusted text.

Everything a pull request contains (title, description, branch names, the diff) is untrusted:
it is wrapped in a block whose delimiters carry a nonce derived from the block's content, so
text inside cannot forge the closing delimiter, and the instructions say that such blocks are
data, never instructions. The nonce is deterministic (a hash), so identical inputs give
identical prompts: the replay cache and the providers' prefix caches depend on that.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Sequence
from typing import Any

import jinja2

from assay.diff.types import FileDiff, FileStatus, Hunk, LineKind

__all__ = ["content_nonce", "format_diff_for_model", "render_prompt", "untrusted_block"]

_MARKERS = {LineKind.ADDED: "+", LineKind.REMOVED: "-", LineKind.CONTEXT: " "}


@functools.cache
def _environment() -> jinja2.Environment:
    # Prompts are plain text for a model, not HTML: autoescape would corrupt code in the diff.
    return jinja2.Environment(
        loader=jinja2.PackageLoader("assay.llm", "prompts"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


def render_prompt(template: str, **context: Any) -> str:
    """Render ``assay/llm/prompts/<template>`` with ``StrictUndefined``.

    Args:
        template: The file name, e.g. ``"discover.system.j2"``.
        **context: The template's variables; a missing one raises.

    Returns:
        The rendered text.
    """
    return _environment().get_template(template).render(**context)


def content_nonce(*parts: str) -> str:
    """Return 16 hex digits derived from ``parts``: a delimiter the content cannot contain.

    Text cannot embed the hash of itself, so the closing delimiter cannot be forged from inside.

    Args:
        *parts: The untrusted texts the delimiters will enclose.

    Returns:
        The nonce.
    """
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", errors="surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()[:16]


def untrusted_block(label: str, text: str, nonce: str) -> str:
    """Wrap untrusted text in nonce-carrying delimiters.

    Args:
        label: What the block holds, e.g. ``"diff"``.
        text: The untrusted text.
        nonce: From :func:`content_nonce` over every untrusted text of the prompt.

    Returns:
        ``<<<UNTRUSTED <label> <nonce>``, the text, ``UNTRUSTED <label> <nonce>>>>``.
    """
    return f"<<<UNTRUSTED {label} {nonce}\n{text}\nUNTRUSTED {label} {nonce}>>>"


def format_diff_for_model(files: Sequence[FileDiff]) -> str:
    """Render a diff with line numbers on every line, so the model can cite them.

    Each file starts with a ``=== FILE <n>: <path> (<status>) ===`` header (``n`` counts from
    1, so prompts can name files without repeating untrusted paths); each hunk with its
    ``@@`` header; each line is ``<old> <new> |<marker><text>``: ``old`` is the base line number
    (blank on added lines), ``new`` the head line number (blank on removed lines), the marker
    ``+``, ``-`` or a space. Binary files and files without line changes say so in one line.

    Args:
        files: The files, in the order the model should read them.

    Returns:
        The text (empty for no files).

    Example::

        === FILE 1: app.py (modified) ===
        @@ -10,3 +10,4 @@ def run():
          10   10 |     setup()
          11      |-    go()
               11 |+    go(fast=True)
    """
    return "\n\n".join(_format_file(number, file) for number, file in enumerate(files, start=1))


def _format_file(number: int, file: FileDiff) -> str:
    header = f"=== FILE {number}: {file.path} ({file.status.value}) ==="
    notes = []
    if file.old_path and file.old_path != file.path:
        verb = "copied" if file.status is FileStatus.COPIED else "renamed"
        notes.append(f"({verb} from {file.old_path})")
    if file.old_mode and file.new_mode and file.old_mode != file.new_mode:
        notes.append(f"(mode {file.old_mode} -> {file.new_mode})")
    if file.is_binary:
        notes.append("(binary file; content not shown)")
    elif not file.hunks:
        notes.append("(no line changes)")
    width = _number_width(file.hunks)
    hunks = [_format_hunk(hunk, width) for hunk in file.hunks]
    return "\n".join([header, *notes, *hunks])


def _format_hunk(hunk: Hunk, width: int) -> str:
    section = f" {hunk.section.strip()}" if hunk.section.strip() else ""
    lines = [f"{hunk.header}{section}"]
    for line in hunk.lines:
        old = str(line.old_line) if line.old_line is not None else ""
        new = str(line.new_line) if line.new_line is not None else ""
        lines.append(f"{old:>{width}} {new:>{width}} |{_MARKERS[line.kind]}{line.text}")
    return "\n".join(lines)


def _number_width(hunks: Sequence[Hunk]) -> int:
    largest = max(
        (max(hunk.old_start + hunk.old_count, hunk.new_start + hunk.new_count) for hunk in hunks),
        default=1,
    )
    return max(4, len(str(largest)))
