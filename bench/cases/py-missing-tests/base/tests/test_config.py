import pytest

from sched.config import parse_bool


@pytest.mark.parametrize("text", ["1", "true", "Yes", " on "])
def test_true_values(text):
    assert parse_bool(text) is True


def test_rejects_garbage():
    with pytest.raises(ValueError):
        parse_bool("maybe")
