import pytest

from stats.basic import mean, median


def test_mean():
    assert mean([1, 2, 3]) == 2


def test_mean_of_nothing():
    with pytest.raises(ValueError):
        mean([])


@pytest.mark.parametrize(
    ("values", "expected"), [([3, 1, 2], 2), ([4, 1, 3, 2], 2.5), ([7], 7)]
)
def test_median(values, expected):
    assert median(values) == expected


def test_median_of_nothing():
    with pytest.raises(ValueError):
        median([])
