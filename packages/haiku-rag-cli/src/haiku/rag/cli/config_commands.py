"""`haiku-rag settings`, `init-config`, `download-models`: they open no database."""

from pathlib import Path
from typing import Any

import typer

from haiku.rag.cli._common import options

SECRET_WORDS = ("key", "secret", "token", "password", "credential", "session")


def _is_secret(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in SECRET_WORDS)


def mask_secrets(node: Any, *, under_storage_options: bool = False) -> Any:
    """``api_key`` everywhere and credential-like ``storage_options`` become ``***``."""
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            secret = key == "api_key" or (under_storage_options and _is_secret(str(key)))
            if secret and value not in (None, ""):
                out[key] = "***"
            else:
                out[key] = mask_secrets(value, under_storage_options=key == "storage_options")
        return out
    if isinstance(node, list):
        return [mask_secrets(item) for item in node]
    return node


def settings(ctx: typer.Context) -> None:
    """Print the effective configuration as YAML, secrets (credential options, passwords in URLs) masked."""
    import yaml

    from haiku.rag.cli._common import run

    async def work() -> None:
        config = options(ctx).config()
        from haiku.core.masking import mask_nested

        data = mask_nested(mask_secrets(config.model_dump(mode="json")))
        data.setdefault("storage", {})["data_dir"] = str(config.data_dir)
        if config.config_path is not None:
            typer.echo(f"# from {config.config_path}")
        typer.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True).rstrip())

    run(work)


def init_config(
    output: Path = typer.Argument(Path("haiku.rag.yaml"), help="Where to write the configuration."),
) -> None:
    """Write the example configuration (configs/haiku.rag.example.yaml), never over an existing file."""
    from haiku.rag.cli._common import run
    from haiku.rag.client import write_example_config

    async def work() -> None:
        write_example_config(output)

    run(work)
    typer.echo(f"Configuration written to {output}")


def download_models(ctx: typer.Context) -> None:
    """Check that the configured local models load, and prepare the fast query encoder.

    Nothing is fetched while offline: the default model ships as a package.
    """
    from haiku.rag.cli._common import expected_errors

    try:
        config = options(ctx).config()
        for line in _check_models(config):
            typer.echo(line)
    except expected_errors() as exc:
        typer.echo(f"Error downloading models: {exc}", err=True)
        raise typer.Exit(1) from None


def _looks_like_path(name: str) -> bool:
    return name.startswith(("/", "./", "../", "~")) or Path(name).is_absolute()


def _check_models(config) -> list[str]:
    from haiku.core.embedders import EmbeddingError, get_embedder, local_model_path

    lines: list[str] = []
    model = config.embeddings.model
    if model.provider == "sentence-transformers":
        path = local_model_path(model.name)
        if _looks_like_path(model.name) and not Path(path).exists():
            raise EmbeddingError(f"embeddings.model.name {model.name} is not a directory holding a model")
        embedder = get_embedder(config)
        documents = embedder.prepare_document_encoder()  # type: ignore[attr-defined]
        vector = embedder.encode(["haiku"])[0]  # type: ignore[attr-defined]
        lines.append(f"embedding model: {model.name} loaded from {path} ({len(vector)} dimensions)")
        queries = embedder.prepare_query_encoder()  # type: ignore[attr-defined]
        for what, runtime, key in (
            ("document", documents, "document_runtime"), ("query", queries, "query_runtime"),
        ):
            if runtime == "onnx":
                lines.append(f"{what} encoder: ONNX Runtime, exported to {config.model_cache_dir}")
            else:
                lines.append(f"{what} encoder: torch (embeddings.{key}: {getattr(config.embeddings, key)})")
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        lines.append(
            f"tokenizer: {type(tokenizer).__name__} from {path} "
            f"(vocabulary {tokenizer.vocab_size}, max length {tokenizer.model_max_length})"
        )
    else:
        lines.append(f"embedding model: {model.name} is served by {model.base_url} (nothing to load locally)")
    rerank = config.reranking.model
    if rerank is not None and rerank.provider == "cross-encoder":
        from haiku.rag.rerankers.cross_encoder import CrossEncoderReranker

        CrossEncoderReranker(rerank).load()
        lines.append(f"reranker: cross-encoder {rerank.name} loaded")
    elif rerank is not None:
        lines.append(f"reranker: {rerank.name} is served by {rerank.base_url} (nothing to load locally)")
    lines.append("All configured local models are available.")
    return lines


def register(app: typer.Typer) -> None:
    app.command("settings")(settings)
    app.command("init-config")(init_config)
    app.command("download-models")(download_models)
