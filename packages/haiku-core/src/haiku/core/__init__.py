"""haiku-core: what the ingester and the query side must agree on.

Importing this package loads no model library (torch, sentence-transformers,
docling); embedders load them on first use.
"""

__version__ = "0.1.0"
