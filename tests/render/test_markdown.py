"""Escaping of untrusted text: what GitHub shows is the text itself, code stays code."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.render._markdown import escape_markdown, indent_continuation, one_line

from ._commonmark import rendered_text

# Printable ASCII without the backtick (code spans are kept on purpose), plus some CJK and the
# full-width punctuation the seed uses.
_PROSE = st.text(
    alphabet=st.sampled_from(
        [chr(c) for c in range(32, 127) if chr(c) != "`"] + list("中文建议：（）「」·—→📍")
    ),
    max_size=60,
)


@given(_PROSE)
def test_any_single_line_renders_as_itself_and_as_nothing_else(text: str) -> None:
    line = one_line(text)

    shown, tags = rendered_text(escape_markdown(line))

    assert shown == line
    assert tags in ([], ["p"])


@pytest.mark.parametrize(
    "text",
    [
        "close() via __del__ is unreachable",
        "hide the rest <!-- of the review",
        "a *b* c ~~d~~ [e](http://f) ![g](h) <b>i</b> &amp; j",
        "# not a heading",
        "- not a list item",
        "1. not an ordered item",
        "> not a quote",
        "---",
        "x \\*y\\* z",
    ],
)
def test_markdown_syntax_in_text_is_shown_literally(text: str) -> None:
    assert rendered_text(escape_markdown(text)) == (text, ["p"])


def test_readable_text_is_left_alone() -> None:
    text = "rtp_llm/cpp/model_rpc/DecodeRpcServer.cc:207 uses a && b, x < y, 3 * 4"

    assert (
        escape_markdown(text)
        == "rtp_llm/cpp/model_rpc/DecodeRpcServer.cc:207 uses a && b, x < y, 3 \\* 4"
    )


def test_code_spans_pass_through_untouched() -> None:
    text = "call `__del__()` and `a<b>` then `` x`y `` done"

    assert escape_markdown(text) == text


def test_an_unmatched_backtick_is_literal_and_the_rest_is_escaped() -> None:
    text = "cut here `prep __x__"

    escaped = escape_markdown(text)

    assert escaped == "cut here `prep \\_\\_x\\_\\_"
    assert rendered_text(escaped) == (text, ["p"])


def test_fenced_code_passes_through_and_an_unclosed_fence_is_closed() -> None:
    text = "Before:\n```python\nx = a_b * __c__\n```\nand after <!--\n~~~\nunclosed <b>"

    escaped = escape_markdown(text)

    assert escaped == (
        "Before:\n```python\nx = a_b * __c__\n```\nand after \\<!--\n~~~\nunclosed <b>\n~~~"
    )
    shown, tags = rendered_text(escaped + "\n\nafter the block")
    assert "<!--" not in tags
    assert shown.endswith("unclosed <b>\n\nafter the block")


def test_one_line_collapses_newlines_and_runs_of_whitespace() -> None:
    assert one_line("  a\n\n## b\t c  ") == "a ## b c"


def test_indent_continuation_keeps_blank_lines_blank() -> None:
    assert indent_continuation("a\nb\n\nc", "  ") == "a\n  b\n\n  c"
