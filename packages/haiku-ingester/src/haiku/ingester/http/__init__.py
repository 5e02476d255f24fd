"""The daemon's optional HTTP endpoint: health, Prometheus metrics and status (docs/operations.md)."""
