"""src/mpsched/bench/soak_warm.py: the frames that fill a switch's PHV pool, and where they go."""

from __future__ import annotations

from mpsched.bench.soak_warm import WARM_ETHERTYPE, far_ends, warm_frame


def test_the_warm_frame_is_neither_ipv4_nor_a_path_tag():
    """The ingress counts and drops a frame that is neither (p4src/include/ingress.p4)."""
    from mpsched.p4rt.pipeline import ETHERTYPE_PATH_TAG

    frame = warm_frame()
    assert len(frame) == 60  # the minimum Ethernet frame without its FCS
    ether_type = int.from_bytes(frame[12:14], "big")
    assert ether_type == WARM_ETHERTYPE
    assert ether_type not in (0x0800, ETHERTYPE_PATH_TAG)
    assert frame[0] & 0x02 and not frame[0] & 0x01  # locally administered, unicast


def test_a_switch_is_warmed_from_the_far_end_of_its_links():
    links = [("leaf1", "spine1", "lk1-eth1", "lk1-eth2"),
             ("leaf2", "spine1", "lk2-eth1", "lk2-eth2"),
             ("leaf1", "spine2", "lk3-eth1", "lk3-eth2")]
    assert far_ends(links, "leaf1") == ["lk1-eth1", "lk3-eth1"]
    assert far_ends(links, "spine1") == ["lk1-eth2", "lk2-eth2"]
    assert far_ends(links, "leaf9") == []


def test_bursts_go_on_until_one_barely_grows_the_switch():
    from mpsched.bench.soak_warm import FLAT_KB, MAX_BURSTS, bursts_until_flat

    assert not bursts_until_flat([])
    assert not bursts_until_flat([13_000, 7_000])
    assert not bursts_until_flat([11_200, 0])  # one flat burst: the hour's leaf4 stepped later
    assert not bursts_until_flat([13_000, 7_000, FLAT_KB - 1, 0])  # two: the second hour's
    assert bursts_until_flat([13_000, 7_000, FLAT_KB - 1, 0, 10])
    assert not bursts_until_flat([13_000, FLAT_KB - 1, 0, 2_000, FLAT_KB - 1, 0])
    assert bursts_until_flat([FLAT_KB * 2] * MAX_BURSTS)
