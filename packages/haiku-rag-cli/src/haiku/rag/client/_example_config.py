"""The one example configuration: `haiku-rag init-config` writes it, configs/ links to it."""

from importlib import resources
from pathlib import Path

EXAMPLE_CONFIG = "haiku.rag.example.yaml"


def example_config() -> str:
    """The commented example configuration shipped with the package (docs/configuration.md)."""
    return resources.files("haiku.rag.client").joinpath(EXAMPLE_CONFIG).read_text(encoding="utf-8")


def write_example_config(output: Path) -> None:
    """Write the example configuration to ``output``, never over an existing file."""
    if output.exists():
        raise FileExistsError(f"{output} already exists; remove it or choose another path")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(example_config(), encoding="utf-8")
    except OSError as exc:
        raise OSError(f"cannot write {output}: {exc}") from None
