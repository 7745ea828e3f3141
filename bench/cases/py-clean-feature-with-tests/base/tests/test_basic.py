import pytest

from stats.basic import mean


def test_mean():
    assert mean([1, 2, 3]) == 2


def test_mean_of_nothing():
    with pytest.raises(ValueError):
        mean([])
