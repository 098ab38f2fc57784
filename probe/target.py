"""What to probe: one agent, resolved from the CLI or the daemon config. Secrets stay SecretStr."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class Target(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    url: str = Field(description="Base URL (may carry a gateway path prefix) or the card URL itself")
    card_url: str | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict,
                                          description="Sent on invocation only, never on public discovery")
    a2a_version: Literal["1.0", "0.3"] | None = None
    binding: Literal["JSONRPC"] | None = None
    message: str = "a2a-probe health check"
    expect_text: str | None = None
    timeout: float = Field(30.0, gt=0, le=3600)
    allow_cross_origin_redirect: bool = False
    stream_close_grace: float = Field(1.0, ge=0, le=60,
                                      description="How long a stream may stay open after its terminal event")

    def invoke_headers(self) -> dict[str, str]:
        return {k: v.get_secret_value() for k, v in self.headers.items()}
