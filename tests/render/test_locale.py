"""Every renderer rejects an unsupported language, naming the supported ones."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from assay.model import RoundResult
from assay.render import (
    SUPPORTED_LANGS,
    inline_comments,
    render_followup,
    render_inline_comment,
    render_review,
    render_summary,
)

from ._factory import english_round


def _inline(result: RoundResult, lang: str) -> object:
    return render_inline_comment(result.findings[0], lang=lang)


@pytest.mark.parametrize(
    "render",
    [
        lambda result, lang: render_review(result, lang=lang),
        lambda result, lang: render_followup(result, lang=lang),
        lambda result, lang: render_summary(result, lang=lang),
        lambda result, lang: inline_comments(result.model_copy(update={"findings": ()}), lang=lang),
        _inline,
    ],
)
def test_unknown_lang_is_a_value_error(render: Callable[[RoundResult, str], object]) -> None:
    with pytest.raises(ValueError, match=r"unsupported lang 'fr'; supported: en, zh"):
        render(english_round(), "fr")


def test_supported_langs() -> None:
    assert SUPPORTED_LANGS == ("en", "zh")
