"""The ingester's Prometheus metrics (docs/operations.md, "Metrics").

One ``IngesterMetrics`` per run (``serve`` or ``run-batch``), in its own
registry: the pipeline observes what it does as it does it (a job's outcome, a
conversion's duration, an encoder batch's duration), and what is a state rather
than an event (queue depth, documents held, dead files) is sampled when the
metrics are read (``haiku.ingester.metrics_sample``). Labels are database
names, formats, outcomes and reasons: a bounded set, never a file or a path.
Observing costs a few microseconds, so it is always on; only serving is optional.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    Info,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.exposition import generate_latest

from haiku.ingester.skips import SkipReason, SkipTally

PREFIX = "haiku_ingester"
# Why a file is skipped instead of ingested (docs/ingester.md, "Skipped files"): one table for every report.
SKIP_REASONS = tuple(reason.value for reason in SkipReason)
JOB_OUTCOMES = ("done", "failed", "retried", "dead")
QUEUE_STATES = ("queued", "claimed")
# A conversion takes from milliseconds (a note) to minutes (a scanned book under OCR).
CONVERSION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600)
# One encoder batch: tens of milliseconds on a GPU to tens of seconds for long texts on a CPU.
EMBEDDING_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

# No `_created` series beside each counter: twice the lines, and nothing the dashboards read.
disable_created_metrics()

Metric = TypeVar("Metric", Counter, Gauge)


def _per_database(registry: CollectorRegistry) -> Callable[[type[Metric], str, str], Metric]:
    """A maker of ``haiku_ingester_<name>`` metrics labelled by database alone, in ``registry``."""

    def make(kind: type[Metric], name: str, text: str) -> Metric:
        return kind(f"{PREFIX}_{name}", text, ["database"], registry=registry)

    return make


class IngesterMetrics:
    """Every metric of one ingester run, registered in its own registry."""

    def __init__(self, *, engine: str, process: bool = True) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.started_at = time.time()
        if process:  # process_resident_memory_bytes and friends, as every exporter names them
            ProcessCollector(registry=r)
        Info(f"{PREFIX}_engine", "Where conversion and embedding run (local or ray).", registry=r).info(
            {"engine": engine}
        )
        Gauge(f"{PREFIX}_start_time_seconds", "When this ingester started (Unix time).", registry=r).set(
            self.started_at
        )
        self.jobs = Counter(
            f"{PREFIX}_jobs", "Jobs finished by outcome: done, failed (an attempt), retried, dead.",
            ["database", "outcome"], registry=r,
        )  # fmt: skip
        per_database = _per_database(r)
        self.documents_written = per_database(
            Counter, "documents_written", "Documents written (new or changed content)."
        )
        self.documents_deleted = per_database(
            Counter, "documents_deleted", "Documents removed because their file went away."
        )
        self.chunks_written = per_database(Counter, "chunks_written", "Chunks written.")
        self.chunks_embedded = per_database(Counter, "chunks_embedded", "Chunk texts sent to the encoder.")
        self.chunks_reused = per_database(Counter, "chunks_reused", "Chunks that kept their stored vector.")
        self.source_bytes = per_database(
            Counter, "source_bytes_written", "Bytes of the source files whose documents were written."
        )
        self.last_write = per_database(
            Gauge, "last_write_timestamp_seconds", "When a job last wrote to the database (Unix time)."
        )
        self.conversion_seconds = Histogram(
            f"{PREFIX}_conversion_duration_seconds", "Reading and converting one file, by format.",
            ["format"], buckets=CONVERSION_BUCKETS, registry=r,
        )  # fmt: skip
        self.embedding_seconds = Histogram(
            f"{PREFIX}_embedding_duration_seconds", "One encoder batch of chunk texts.",
            buckets=EMBEDDING_BUCKETS, registry=r,
        )  # fmt: skip
        self.embedding_texts = Counter(
            f"{PREFIX}_embedding_texts", "Texts embedded by the encoder, all databases together.", registry=r
        )
        self.files_skipped = Gauge(
            f"{PREFIX}_files_skipped",
            "Files the latest sweep of each source of the database did not take, by reason: "
            + ", ".join(SKIP_REASONS) + ".",
            ["database", "reason"], registry=r,
        )  # fmt: skip
        # Per (database, source): its latest sweep's tally, and files skipped since (uri -> reason).
        self._skipped_by_source: dict[tuple[str, str], tuple[SkipTally, dict[str, SkipReason]]] = {}
        self.pages_unreadable = per_database(
            Counter, "pages_unreadable", "Pages found with no text that could be read."
        )
        self.worker_restarts = Counter(
            f"{PREFIX}_worker_restarts", "Conversion workers replaced (after OCR left one too large, or a crash).",
            registry=r,
        )  # fmt: skip
        # States, sampled when the metrics are read (haiku.ingester.metrics_sample).
        self.queue_depth = Gauge(
            f"{PREFIX}_queue_jobs", "Jobs in the queue by state: queued (waiting or retrying later), claimed (running).",
            ["database", "state"], registry=r,
        )  # fmt: skip
        self.dead_files = per_database(
            Gauge, "dead_files", "Files whose latest job is dead (status --dead lists them)."
        )
        self.documents = per_database(Gauge, "documents", "Documents the database holds from its sources.")
        self.chunks = per_database(Gauge, "chunks", "Chunks the database holds.")
        self.database_ready = per_database(
            Gauge, "database_ready", "1 when the database is open and writable, else 0."
        )
        self._restarts_seen = 0

    def know_databases(self, names: list[str]) -> None:
        """Give every counter of these databases its series at 0, so a rate over them starts at once."""
        for name in names:
            for outcome in JOB_OUTCOMES:
                self.jobs.labels(name, outcome)
            for reason in SKIP_REASONS:
                self.files_skipped.labels(name, reason)
            for counter in (
                self.documents_written, self.documents_deleted, self.chunks_written, self.chunks_embedded,
                self.chunks_reused, self.source_bytes, self.pages_unreadable,
            ):  # fmt: skip
                counter.labels(name)

    # --- what the pipeline tells ------------------------------------------------------
    def job_done(self, database: str, action: str, *, chunks: int = 0, embedded: int = 0, reused: int = 0,
                 size: int = 0) -> None:  # fmt: skip
        """A job succeeded; ``action`` is the pipeline's (written, deleted, unchanged, revision, skipped)."""
        self.jobs.labels(database, "done").inc()
        if action == "written":
            self.documents_written.labels(database).inc()
            self.chunks_written.labels(database).inc(chunks)
            self.chunks_embedded.labels(database).inc(embedded)
            self.chunks_reused.labels(database).inc(reused)
            self.source_bytes.labels(database).inc(size)
        elif action == "deleted":
            self.documents_deleted.labels(database).inc()
        if action in ("written", "deleted", "revision"):
            self.last_write.labels(database).set(time.time())

    def job_failed(self, database: str, status: str, exc: BaseException) -> None:
        """An attempt failed; ``status`` is what the queue made of it (queued again, or dead)."""
        self.jobs.labels(database, "failed").inc()
        if status == "queued":
            self.jobs.labels(database, "retried").inc()
        elif status == "dead":
            self.jobs.labels(database, "dead").inc()

    def sweep_skipped(self, database: str, source: str, skipped: SkipTally) -> None:
        """What a sweep of ``source`` did not take: it replaces what was known of that source."""
        self._skipped_by_source[(database, source)] = (skipped, {})
        self._show_skipped(database)

    def file_skipped(self, database: str, source: str, uri: str, reason: SkipReason) -> None:
        """A file a watch event or a job skipped since the source's last sweep (once per file)."""
        _, since = self._skipped_by_source.setdefault((database, source), (SkipTally(), {}))
        since[uri] = reason
        self._show_skipped(database)

    def _show_skipped(self, database: str) -> None:
        for reason in SkipReason:
            self.files_skipped.labels(database, reason.value).set(sum(
                tally.counts[reason] + sum(1 for r in since.values() if r is reason)
                for (name, _), (tally, since) in self._skipped_by_source.items() if name == database
            ))  # fmt: skip

    def count_unreadable_pages(self, database: str, count: int = 1) -> None:
        """``count`` pages of a document of ``database`` found with no readable text."""
        if count:
            self.pages_unreadable.labels(database).inc(count)

    def converted(self, fmt: str, seconds: float) -> None:
        self.conversion_seconds.labels(fmt).observe(seconds)

    def embedded(self, seconds: float, texts: int) -> None:
        self.embedding_seconds.observe(seconds)
        self.embedding_texts.inc(texts)

    def workers_replaced(self, total: int) -> None:
        """The conversion pool's count of replaced workers so far (counted here as it grows)."""
        if total > self._restarts_seen:
            self.worker_restarts.inc(total - self._restarts_seen)
            self._restarts_seen = total

    def batch_ended(self) -> None:
        """run-batch ends: when, for an alert on a cron run that stopped running."""
        Gauge(f"{PREFIX}_batch_end_time_seconds", "When run-batch ended (Unix time).", registry=self.registry).set(
            time.time()
        )

    # --- reading them -----------------------------------------------------------------
    def exposition(self) -> bytes:
        """The Prometheus text format of every metric."""
        return generate_latest(self.registry)

    def write_textfile(self, path: Path) -> None:
        """Write the metrics for node-exporter's textfile collector: whole, or not at all (a rename)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(self.exposition())
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
