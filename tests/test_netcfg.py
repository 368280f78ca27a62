import copy

import pytest

from mpsched.netcfg import ConfigError, NetCfg

GOOD = {
    "switches": [
        {"name": "s1", "device_id": 1, "grpc_address": "127.0.0.1:50001",
         "mac": "00:00:0a:00:01:fe", "subnets": ["10.0.1.0/24"],
         "hosts": [{"name": "h1", "ip": "10.0.1.1", "mac": "00:00:0a:00:01:01", "port": 1}],
         "paths": [{"id": 1, "port": 2, "rate_mbps": 10}, {"id": 2, "port": 3}]},
        {"name": "s2", "device_id": 2, "grpc_address": "127.0.0.1:50002",
         "mac": "00:00:0a:00:02:fe", "subnets": ["10.0.2.0/24"],
         "hosts": [{"name": "h2", "ip": "10.0.2.1", "mac": "00:00:0a:00:02:01", "port": 1}],
         "paths": [{"id": 1, "port": 2}, {"id": 2, "port": 3}]},
    ]
}


def test_loads_and_round_trips(tmp_path):
    net = NetCfg.from_dict(GOOD)
    assert net.path_ids() == [1, 2]
    assert net.remote_subnets(net.switches[0]) == ["10.0.2.0/24"]
    path = tmp_path / "net.json"
    net.dump(path)
    assert NetCfg.load(path) == net


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["switches"][0].update(device_id="one"), "switches[0].device_id"),
        (lambda d: d["switches"][0]["paths"][1].update(port=600), "switches[0].paths[1].port"),
        (lambda d: d["switches"][1]["hosts"][0].update(ip="10.0.2"), "switches[1].hosts[0].ip"),
        (lambda d: d["switches"][0].update(mac="zz"), "switches[0].mac"),
        (lambda d: d["switches"][0].pop("paths"), "switches[0].paths"),
        (lambda d: d["switches"][0].update(colour=1), "switches[0].colour"),
        (lambda d: d["switches"][0]["paths"][0].update(rate_mbps=-1),
         "switches[0].paths[0].rate_mbps"),
        (lambda d: d["switches"][1].update(name="s1"), "switches[].name"),
        (lambda d: d["switches"][0]["paths"][1].update(id=1), "switches[0].paths[].id"),
    ],
)
def test_errors_name_the_field(mutate, field):
    data = copy.deepcopy(GOOD)
    mutate(data)
    with pytest.raises(ConfigError) as info:
        NetCfg.from_dict(data)
    assert str(info.value).startswith(field), str(info.value)


def test_unreadable_file_is_a_config_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(ConfigError, match="not JSON"):
        NetCfg.load(bad)
