"""``ingester.http``: the daemon's endpoint for health, Prometheus metrics and status (docs/operations.md).

Off by default. On loopback it needs no token; anywhere else a token is
required, read from a file (``token_file``) or an environment variable
(``token_env``), never written into the configuration or onto a command line,
where ``ps`` and shell histories would show it. The limits keep a slow or
hostile client from costing the ingestion anything: idle connections are
closed, requests are small and short, connections are capped.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

DEFAULT_HTTP_PORT = 8790  # `haiku-rag inspect --serve` has 8765


def is_loopback(host: str) -> bool:
    """Whether ``host`` is only reachable from this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


class IngesterHttpConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_HTTP_PORT, ge=0, le=65535)  # 0: any free port (logged at start)
    token_file: Path | None = None  # a file holding the token (its first line)
    token_env: str | None = None  # the environment variable holding the token
    max_connections: int = Field(default=32, ge=1)  # connections over it are closed at once
    idle_timeout_s: float = Field(default=5.0, gt=0)  # a connection that sends no request in time is closed
    request_timeout_s: float = Field(default=10.0, gt=0)  # the longest a request's answer may take

    @field_validator("token_file", mode="before")
    @classmethod
    def _blank_file(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        return Path(value).expanduser() if isinstance(value, str | Path) else value

    @field_validator("token_env", mode="before")
    @classmethod
    def _blank_env(cls, value: Any) -> Any:
        return None if value is None or (isinstance(value, str) and not value.strip()) else value

    @model_validator(mode="after")
    def _token_off_loopback(self) -> IngesterHttpConfig:
        if self.token_file is not None and self.token_env is not None:
            raise ValueError("ingester.http takes one of token_file and token_env, not both")
        if self.enabled and not is_loopback(self.host) and self.token_file is None and self.token_env is None:
            raise ValueError(
                f"ingester.http.host {self.host} is not a loopback address: set ingester.http.token_file "
                "or ingester.http.token_env, so that only holders of the token can read the endpoint"
            )
        return self

    def read_token(self) -> str | None:
        """The token, from its file or environment variable; ``None`` when neither is set.

        Raises ``ValueError`` naming the key when the file or the variable holds no token.
        """
        if self.token_file is not None:
            try:
                text = self.token_file.read_text(encoding="utf-8")
            except OSError as exc:
                raise ValueError(f"ingester.http.token_file {self.token_file}: {exc.strerror or exc}") from None
            token = text.strip().splitlines()[0].strip() if text.strip() else ""
            if not token:
                raise ValueError(f"ingester.http.token_file {self.token_file} holds no token")
            return token
        if self.token_env is not None:
            token = os.environ.get(self.token_env, "").strip()
            if not token:
                raise ValueError(f"ingester.http.token_env: the environment variable {self.token_env} is not set")
            return token
        return None
