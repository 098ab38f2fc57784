"""Which interfaces run_interfaces (the daemon, `--binding all`) probes, and in what order."""

from __future__ import annotations

from probe.engine import plan_interfaces
from probe.results import BindingName as B
from probe.target import Target
from probe.wire import card as cardwire
from probe.wire.bindings import BY_CARD_NAME
from tests.agents.cards import valid_card

KNOWN = frozenset(BY_CARD_NAME)
T = Target(name="a", url="http://agent.example")


def _card(*interfaces: tuple[str, str, str]) -> cardwire.Card:
    return cardwire.build(url="http://agent.example/.well-known/agent-card.json", doc=valid_card(*interfaces))


HYBRID = _card(("http://a/grpc", "GRPC", "1.0"), ("http://a/rest", "HTTP+JSON", "1.0"),
               ("http://a/v03", "JSONRPC", "0.3"), ("http://a/rpc", "JSONRPC", "1.0"),
               ("http://a/rpc", "JSONRPC", "1.0"), ("http://a/x", "KAFKA", "1.0"), ("http://a/old", "JSONRPC", "0.1"))


def test_the_preferred_interface_first_then_the_cards_order_once_each() -> None:
    # JSON-RPC 1.0 before 0.3 leads (what a plain probe selects); unknown bindings, 0.1 and duplicates are out
    assert plan_interfaces(HYBRID, T, KNOWN) == [("JSONRPC", "1.0"), ("JSONRPC", "0.3"), ("GRPC", "1.0"),
                                                 ("HTTP+JSON", "1.0")]


def test_a_subset_a_version_and_a_single_binding_narrow_it() -> None:
    assert plan_interfaces(HYBRID, T, KNOWN, only={B.GRPC, B.HTTP_JSON}) == [("GRPC", "1.0"), ("HTTP+JSON", "1.0")]
    assert plan_interfaces(HYBRID, T.model_copy(update={"a2a_version": "0.3"}), KNOWN) == [("JSONRPC", "0.3")]
    single = T.model_copy(update={"binding": "HTTP+JSON"})
    assert plan_interfaces(HYBRID, single, KNOWN, only={B.HTTP_JSON}) == [("HTTP+JSON", "1.0")]
    assert plan_interfaces(HYBRID, single, KNOWN)[0] == ("HTTP+JSON", "1.0")  # the target's binding leads


def test_a_card_without_json_rpc_leads_with_its_first_interface() -> None:
    rest_and_grpc = _card(("http://a/rest", "HTTP+JSON", "1.0"), ("http://a/grpc", "GRPC", "1.0"))
    assert plan_interfaces(rest_and_grpc, T, KNOWN) == [("HTTP+JSON", "1.0"), ("GRPC", "1.0")]
    assert plan_interfaces(rest_and_grpc, T, KNOWN, only={B.JSONRPC}) == []  # nothing to call: the walk says why


def test_the_bounded_names_match_the_registry() -> None:
    from probe.wire.bindings import REGISTRY

    assert {(b.value, b.card_name) for b in B} == {(r.name, r.card_name) for r in REGISTRY.values()
                                                   if r.card_name.upper() in KNOWN and r.name != "fake"}
    assert B.of("http+json") is B.HTTP_JSON and B.of("grpc") is B.GRPC and B.of("KAFKA") is None and B.of(None) is None
