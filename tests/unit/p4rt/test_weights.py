import pytest

from mpsched.p4rt.weights import BUCKETS, bucket_ends, path_for_bucket


def test_equal_weights_split_evenly():
    assert bucket_ends([1, 1]) == [BUCKETS // 2, BUCKETS]


def test_zero_weight_path_gets_no_bucket():
    ends = bucket_ends([1, 0, 1, 0])
    assert ends == [32768, 32768, 65536, 65536]
    assert {path_for_bucket(ends, b) for b in range(0, BUCKETS, 97)} == {1, 3}


def test_one_to_zero_puts_everything_on_path_one():
    ends = bucket_ends([1, 0])
    assert all(path_for_bucket(ends, b) == 1 for b in (0, 1, 40000, BUCKETS - 1))


def test_shares_are_proportional_and_exact():
    ends = bucket_ends([3, 1, 0, 0])
    assert ends[-1] == BUCKETS
    assert ends[0] == 49152 and ends[1] == BUCKETS


def test_largest_remainder_distributes_leftover():
    ends = bucket_ends([1, 1, 1], buckets=10)
    shares = [ends[0], ends[1] - ends[0], ends[2] - ends[1]]
    assert sorted(shares) == [3, 3, 4] and ends[-1] == 10


def test_all_zero_weights_choose_nothing():
    ends = bucket_ends([0, 0])
    assert ends == [0, 0] and path_for_bucket(ends, 0) == 0


def test_negative_weight_rejected():
    with pytest.raises(ValueError):
        bucket_ends([1, -1])
