"""Token estimates for budgets, without a tokenizer download.

Exact tokenizers (tiktoken and friends) fetch their vocabularies at run time, which Assay must
never do, and differ per model anyway. Budgets only need an estimate; what a call really cost
comes from the server's ``usage``, which the call records keep.

The heuristic is the usual rule of thumb for today's BPE vocabularies (GPT-4o, Qwen, DeepSeek):
roughly ±20 % on code and on English or Chinese prose, worse on unusual text (base64, long
numbers). It was not calibrated against a tokenizer here:

- ASCII: one token per 4 characters; a run of spaces counts as one character, since
  indentation merges into few tokens;
- CJK ideographs, kana and hangul: one token per character;
- any other character (accents, symbols, emoji): one token per 2 characters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

__all__ = ["estimate_messages_tokens", "estimate_tokens"]

_SPACE_RUN = re.compile(r" {2,}")
_PER_MESSAGE_OVERHEAD = 4
"""Role and separators a chat template adds to every message."""


def estimate_tokens(text: str) -> int:
    """Estimate how many tokens ``text`` is, for budgets (see the module docstring).

    Args:
        text: Any text.

    Returns:
        The estimate; 0 only for empty text.

    Example::

        >>> estimate_tokens("def add(a, b):\\n    return a + b\\n")
        8
        >>> estimate_tokens("数据库连接未关闭")
        8
    """
    if not text:
        return 0
    compact = _SPACE_RUN.sub(" ", text)
    ascii_chars = wide_chars = other_chars = 0
    for character in compact:
        code = ord(character)
        if code < 128:
            ascii_chars += 1
        elif _is_wide(code):
            wide_chars += 1
        else:
            other_chars += 1
    return max(1, math.ceil(ascii_chars / 4 + wide_chars + other_chars / 2))


def estimate_messages_tokens(messages: Iterable[Mapping[str, object]]) -> int:
    """Estimate the prompt tokens of a chat request's messages.

    Args:
        messages: Chat messages; string ``content`` is counted, other parts are ignored.

    Returns:
        The estimate, with a small per-message overhead.
    """
    total = 0
    for message in messages:
        content = message.get("content")
        total += _PER_MESSAGE_OVERHEAD + (
            estimate_tokens(content) if isinstance(content, str) else 0
        )
    return total


def _is_wide(code: int) -> bool:
    return (
        0x3040 <= code <= 0x30FF  # hiragana, katakana
        or 0x3400 <= code <= 0x4DBF  # CJK extension A
        or 0x4E00 <= code <= 0x9FFF  # CJK unified ideographs
        or 0xAC00 <= code <= 0xD7AF  # hangul syllables
        or 0xF900 <= code <= 0xFAFF  # CJK compatibility ideographs
        or 0xFF00 <= code <= 0xFFEF  # full-width forms (，：（）)
        or 0x3000 <= code <= 0x303F  # CJK punctuation (。、「」)
        or 0x20000 <= code <= 0x2FFFF  # CJK extensions B–F
    )
