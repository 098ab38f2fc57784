"""The bundled demo (`a2a-probe demo`): a small healthy agent and the one gateway fault it shows."""

from __future__ import annotations

from probe.demo.agent import DemoAgent

__all__ = ["DemoAgent"]
