"""``ingester.engine``: where conversion and embedding run (docs/scale-out.md).

``local`` (the default) is the ingester's own conversion processes and
encoder, sized by ``ingester.workers.worker_count``; ``ray`` sends both to a
Ray cluster. The queue, vector reuse and the single writer per database stay in
the ingester process whichever engine runs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _EngineSection(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class LocalEngineConfig(_EngineSection):
    type: Literal["local"] = "local"


class RayEngineConfig(_EngineSection):
    type: Literal["ray"] = "ray"
    # `auto` joins the cluster this machine is a node of; `ray://HOST:10001` goes
    # through a Ray client server; `HOST:PORT` is a head node's GCS address.
    address: str = "auto"
    converters: int = Field(default=2, ge=1)  # conversions running at once on the cluster
    embedders: int = Field(default=1, ge=1)  # embedding actors, each holding the model once
    gpus_per_embedder: float = Field(default=0, ge=0, le=8)
    # CPUs Ray reserves for each embedding actor; unset: 1, or 4 for an actor with
    # a GPU, whose texts are tokenized ahead of the card (docs/scale-out.md).
    cpus_per_embedder: float | None = Field(default=None, gt=0, le=256)
    max_task_retries: int = Field(default=3, ge=0)  # retries after a worker or node died

    def embedder_cpus(self) -> float:
        if self.cpus_per_embedder is not None:
            return self.cpus_per_embedder
        return 4.0 if self.gpus_per_embedder > 0 else 1.0

    @field_validator("address", mode="before")
    @classmethod
    def _address_given(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ValueError("a ray engine needs an address (auto, HOST:PORT or ray://HOST:10001)")
        return value.strip() if isinstance(value, str) else value


EngineConfig = Annotated[LocalEngineConfig | RayEngineConfig, Field(discriminator="type")]
ENGINE_TYPES = ("local", "ray")
