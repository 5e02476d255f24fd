"""The pipeline: read → convert → chunk (in worker processes) → embed → write."""
