import json

import pytest

from mpsched.traffic.iperf import TrafficError, parse_iperf3


def test_goodput_from_receiver_bytes():
    report = {"end": {"sum_received": {"seconds": 20.0, "bytes": 25_000_000},
                      "streams": [{}, {}]}}
    result = parse_iperf3(json.dumps(report))
    assert result.goodput_mbps == 10.0 and result.streams == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("iperf3: error - unable to connect", "did not print JSON"),
        (json.dumps({"error": "unable to connect to server"}), "unable to connect"),
        (json.dumps({"end": {}}), "lacks end.sum_received"),
    ],
)
def test_bad_reports_are_errors(text, message):
    with pytest.raises(TrafficError, match=message):
        parse_iperf3(text)
