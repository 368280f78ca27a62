"""src/mpsched/lab/fabrictable.py: the short flows' timeouts and the links' drops per policy of a
fabric comparison, from run results and links.json files on disk."""

from __future__ import annotations

import json
import math

import pytest

from mpsched.lab import fabrictable, report
from mpsched.lab.fabrictable import LinkTotals, link_totals, waits
from mpsched.lab.report import RunResult


def test_waits_count_the_short_flows_over_a_second():
    """Of ca's flows < 100 kB (the 2 MB one is not one), one of four waited over 1 s: 2.0 s
    of the 2.6 s summed; the other three took 0.2 s each."""
    flows = [(10_000, 0.2), (50_000, 0.2), (99_999, 2.0), (2_000_000, 9.0)]
    results = [RunResult("fabric-asymmetric", "ca", 0, 1, 60.0, fct=flows),
               RunResult("fabric-asymmetric", "ca", 1, 2, 60.0, fct=[(20_000, 0.2)]),
               RunResult("fabric-asymmetric", "ecmp", 0, 1, 60.0, fct=[(20_000, 3.0)])]
    n, mean, slow, share, rest = waits(results, "ca")
    assert (n, slow) == (4, 1)
    assert (mean, share, rest) == (pytest.approx(0.65), pytest.approx(2.0 / 2.6),
                                   pytest.approx(0.2))
    assert math.isnan(waits(results, "letflow")[1])


def counters(rx, dropped, tx_bytes, down=0):
    return {"rx": rx, "drop_queue": dropped, "drop_down": down, "tx_bytes": tx_bytes}


LINKS = {"leaf1-spine2": {"ab": counters(100, 10, 1000), "ba": counters(100, 30, 1000)},
         "leaf2-spine1": {"ab": counters(800, 8, 6000), "ba": counters(0, 0, 2000)}}


def test_link_totals_by_direction_and_both_ways():
    t = LinkTotals()
    t.add(LINKS)
    t.add(LINKS)  # a second run: the shares stay
    assert t.drop_share(["leaf1->spine2"]) == pytest.approx(0.1)
    assert t.drop_share(["spine2->leaf1"]) == pytest.approx(0.3)
    assert t.drop_share() == pytest.approx(48 / 1000)
    assert t.worst() == ("spine2->leaf1", pytest.approx(0.3))
    assert t.byte_share(["leaf1->spine2", "spine2->leaf1"]) == pytest.approx(0.2)
    assert math.isnan(LinkTotals().drop_share())


def test_drops_while_a_link_was_down_are_counted_apart():
    """A failed link's drops (the probes watching its paths) are not congestion."""
    t = LinkTotals()
    t.add({"leaf1-spine2": {"ab": counters(100, 10, 1000, down=60)}})
    assert t.drop_share() == pytest.approx(0.1) and t.down["leaf1->spine2"] == 60
    assert t.runs == 1


@pytest.mark.parametrize(("links", "message"), [
    ({"leaf1spine2": {"ab": counters(1, 0, 1)}}, "not 'a-b'"),
    ({"a-b": {"xy": counters(1, 0, 1)}}, "direction 'xy'"),
    ({"a-b": {"ab": {"rx": 1}}}, "a-b ab"),
], ids=["name", "direction", "counters"])
def test_a_malformed_links_file_is_named(links, message):
    with pytest.raises(ValueError, match=message):
        LinkTotals().add(links)


def write_run(out, policy, seed, fct, links):
    r = RunResult("fab", policy, seed - 1, seed, 60.0, fct=fct)
    run_dir = out / "fab" / policy / f"run{seed - 1}"
    report.write_run(run_dir, r)
    (run_dir / "links.json").write_text(json.dumps(links))


def test_main_prints_a_row_per_policy_fastest_first(tmp_path, capsys):
    write_run(tmp_path, "ecmp", 1, [(20_000, 3.0)], LINKS)
    write_run(tmp_path, "ca", 1, [(20_000, 0.2)], LINKS)
    assert set(link_totals(tmp_path)) == {("fab", "ecmp"), ("fab", "ca")}
    assert fabrictable.main([str(tmp_path), "--link", "leaf1-spine2"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| policy |") and "leaf1-spine2: dropped" in rows[0]
    assert rows[2].startswith("| ca | 1 | 0.200 | 0 (0 %) |")
    assert rows[3].startswith("| ecmp | 1 | 3.000 | 1 (100 %) |")
    assert rows[3].endswith("| spine2->leaf1 30.0 % | 0 | 20.0 % | 20.0 % |")


def test_main_refuses_what_is_not_a_comparison(tmp_path, capsys):
    assert fabrictable.main([str(tmp_path / "none")]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert fabrictable.main([str(tmp_path)]) == 2
    assert "holds no run results" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        fabrictable.main([str(tmp_path), "--link", "leaf1"])
