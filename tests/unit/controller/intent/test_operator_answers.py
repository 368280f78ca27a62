"""What the operator's writes answer over REST when they mean more than they say: a change of
policy names the parameters it dropped, a path id's weight or admin state is refused on a
fabric (409, naming links and pairs), and an admin change that leaves a pair without a usable
path says so (`warnings`)."""

from __future__ import annotations

from mpsched.controller.app.core import Controller, ControllerSettings
from mpsched.controller.northbound.rest import RestApi
from tests.unit.controller.fakes import FakeAgent, fabric, two_edges
from tests.unit.controller.helpers import pipeline
from tests.unit.controller.northbound.test_rest import call


def served(net) -> tuple[Controller, RestApi]:
    """A controller whose switches are fakes that acknowledge every write at once."""
    ctl = Controller(net, pipeline(), "x.json", ControllerSettings(control=False))
    for agent in ctl.agents:
        fake = FakeAgent(agent.sw)
        agent.submit, agent.status = fake.submit, fake.status
    return ctl, RestApi(ctl)


def test_a_change_of_policy_names_the_params_it_dropped():
    """After llhd with beta, ecmp (no parameters) is accepted, not refused with "unknown
    parameter (known: [])"; the answer says beta went."""
    _, api = served(two_edges())
    status, body = call(api, "PUT", "/classes/0/policy",
                        {"name": "llhd", "params": {"beta": 0.01}})
    assert status == 200 and body["params"] == {"beta": 0.01} and body["dropped_params"] == []
    status, body = call(api, "PUT", "/classes/0/policy", {"name": "ecmp"})
    assert status == 200, body
    assert (body["name"], body["params"], body["dropped_params"]) == ("ecmp", {}, ["beta"])
    # params given are taken as given: an unknown one is still refused, naming it
    status, body = call(api, "PUT", "/classes/0/policy", {"name": "ecmp", "params": {"x": 1}})
    assert status == 400 and body["field"] == "policy.params.x"


def test_path_id_writes_are_refused_on_a_fabric_naming_links_and_pairs():
    ctl, api = served(fabric())
    for path, body in (("/paths/1/admin", {"state": "down"}), ("/paths/1/weight", {"weight": 3})):
        status, answer = call(api, "PUT", path, body)
        assert status == 409, answer
        assert "path 1 of every pair of edges" in answer["error"]
        assert "GET /pairs" in answer["error"] and "PUT /links/{name}/admin" in answer["error"]
    assert ctl.scheduler.admin_down == set() and ctl.weights() == {1: 1, 2: 1}
    assert ctl.class_policy(0).name == "ecmp"  # the weight did not switch it to wcmp
    # up is accepted (it undoes a down an older intent kept), and changes nothing here
    status, answer = call(api, "PUT", "/paths/1/admin", {"state": "up"})
    assert status == 200 and answer["admin"] == "up" and answer["warnings"] == []


def test_a_link_down_that_cuts_an_edge_off_is_answered_with_warnings():
    ctl, api = served(fabric())
    status, body = call(api, "PUT", "/links/leaf1-spine1/admin", {"state": "down"})
    assert status == 200 and body["admin"] == "down" and body["warnings"] == []
    status, body = call(api, "PUT", "/links/leaf1-spine2/admin", {"state": "down"})
    assert status == 200 and body["admin"] == "down"
    cut = sorted(w.split(":")[0] for w in body["warnings"])
    assert cut == ["leaf1->leaf2", "leaf1->leaf3", "leaf2->leaf1", "leaf3->leaf1"]
    assert "every route crosses a link that is down" in body["warnings"][0]
    status, body = call(api, "PUT", "/links/leaf1-spine1/admin", {"state": "up"})
    assert status == 200 and body["warnings"] == []
    assert ctl.routes.links_down == {"leaf1-spine2"}


def test_the_last_path_down_on_two_edges_is_answered_with_warnings():
    _, api = served(two_edges())
    status, body = call(api, "PUT", "/paths/1/admin", {"state": "down"})
    assert status == 200 and body["warnings"] == []
    status, body = call(api, "PUT", "/paths/2/admin", {"state": "down"})
    assert status == 200 and [w.split(":")[0] for w in body["warnings"]] == ["s1", "s2"]
    assert "administratively down" in body["warnings"][0]
