"""a2a-probe: continuous end-to-end probing of A2A agents."""

from __future__ import annotations

__version__ = "0.1.0"
