"""Bundled demo / fault-injection A2A agent (plain aiohttp, no a2a-sdk)."""

from __future__ import annotations

from probe.demo.agent import DemoAgent, Faults, RecordedRequest

__all__ = ["DemoAgent", "Faults", "RecordedRequest"]
