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


def test_a_1_0_cards_bare_url_is_no_interface() -> None:
    # LangGraph's card (langgraph-api 0.16.7): supportedInterfaces JSONRPC 1.0 and, beside it, a top-level url with
    # neither protocolVersion nor preferredTransport. 1.0 has no url field (a2a-sdk 1.3's resolver drops it when
    # supportedInterfaces is there) and it declares no 0.3 interface (0.3 §5.6.1: preferredTransport MUST be
    # present), so the card advertises JSON-RPC 1.0 only: never a "0.2" interface (a 0.2 card has no
    # supportedInterfaces; the probe read the url as one and probed the agent twice)
    doc = valid_card(("http://a/rpc", "JSONRPC", "1.0"))
    doc["url"] = "http://a/rpc"
    card = cardwire.build(url="http://a/.well-known/agent-card.json", doc=doc)
    assert (card.family, card.hybrid) == ("1.0", False)
    assert [(i.binding, i.version, i.source) for i in card.interfaces] == [("JSONRPC", "1.0", "supportedInterfaces")]
    assert plan_interfaces(card, T, KNOWN) == [("JSONRPC", "1.0")]
    # with a 0.3 declaration beside it the url is the hybrid's 0.3 interface (preferredTransport alone: 0.3, the
    # field's version and a2a-sdk 0.3's default protocolVersion, never 0.2, which has no preferredTransport)
    for extra, version in (({"protocolVersion": "0.3.0"}, "0.3.0"), ({"preferredTransport": "JSONRPC"}, "0.3")):
        hybrid = cardwire.build(url="http://a/.well-known/agent-card.json", doc={**doc, **extra})
        assert hybrid.hybrid
        assert [(i.source, i.version) for i in hybrid.interfaces] == [("supportedInterfaces", "1.0"), ("url", version)]
