"""Generate the demo's .docx and .pdf documents.

The generated files are committed next to the markdown and HTML samples, so the demo
needs neither python-docx nor reportlab; rerun this script only after editing the texts
below. Output is deterministic (fixed timestamps, reportlab's invariant mode), so a rerun
without edits leaves git clean.

    .venv/bin/python examples/make_binary_docs.py
"""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from pathlib import Path

from docx import Document as DocxDocument
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.lib.units import cm
from reportlab.platypus import ListFlowable, ListItem, Paragraph, SimpleDocTemplate, Spacer

DOCS = Path(__file__).resolve().parent / "docs"
FIXED_TIME = dt.datetime(2025, 1, 6, 9, 0, 0)
AUTHOR = "haiku examples"

# A document is a list of blocks: ("h1" | "h2" | "p" | "li", text). The first h1 is the title.
Block = tuple[str, str]

IVF_PQ: list[Block] = [
    ("h1", "IVF-PQ vector indexes"),
    (
        "p",
        "IVF-PQ combines two ideas to search large collections of vectors quickly and in little "
        "memory: an inverted file (IVF) that narrows the search to a few partitions, and product "
        "quantization (PQ) that compresses each vector to a handful of bytes.",
    ),
    ("h2", "Partitioning"),
    (
        "p",
        "Training runs k-means over a sample of the vectors to find a few hundred to a few thousand "
        "centroids. Every vector is assigned to its nearest centroid. At query time only the "
        "partitions whose centroids are nearest to the query are scanned; their number is the "
        "nprobes setting. A rule of thumb is one partition per few thousand vectors.",
    ),
    ("h2", "Product quantization"),
    (
        "p",
        "PQ splits each vector into equal sub-vectors, for example 384 dimensions into 48 groups of "
        "8, and replaces each sub-vector with the id of its nearest code in a small codebook. A "
        "384-dimensional float32 vector of 1536 bytes becomes 48 bytes. Distances are computed "
        "from precomputed tables, which is fast but approximate.",
    ),
    ("h2", "Getting recall back"),
    (
        "p",
        "Compression loses precision, so a refine step fetches a larger candidate set, for "
        "example thirty times the limit, and re-ranks it with the original full-precision "
        "vectors. With enough probes and a refine factor, recall at 10 above 0.95 is typical.",
    ),
    ("h2", "When not to index"),
    (
        "p",
        "Below roughly a hundred thousand vectors an exact scan is fast enough and always "
        "correct. Building an index too early adds work on every write for no gain.",
    ),
]

WAL: list[Block] = [
    ("h1", "Write-ahead logging and crash safety"),
    (
        "p",
        "A database that promises durability must survive a crash at any instant. Write-ahead "
        "logging (WAL) achieves this by recording each change in an append-only log, and forcing "
        "the log to stable storage with fsync, before the change is applied to the main files.",
    ),
    ("h2", "Recovery"),
    (
        "p",
        "After a crash the database replays the log from the last checkpoint. Changes whose "
        "commit record reached the log are redone; changes without one are discarded. A reader "
        "therefore never sees half of a transaction.",
    ),
    ("h2", "WAL in SQLite"),
    (
        "p",
        "In WAL mode SQLite appends changed pages to a separate -wal file. Readers keep reading "
        "the main database plus the part of the log committed before they started, so readers do "
        "not block the writer and the writer does not block readers. A checkpoint copies pages "
        "back into the main file. This makes SQLite a good home for a small durable job queue.",
    ),
    ("h2", "Versioned formats"),
    (
        "p",
        "Append-only table formats such as Lance reach the same goal differently: new data files "
        "are written first and a new version manifest is committed last, atomically. A crash "
        "before the commit leaves unreferenced files that cleanup removes later, and the "
        "previous version stays intact.",
    ),
]

RAG: list[Block] = [
    ("h1", "Retrieval-augmented generation"),
    (
        "p",
        "Retrieval-augmented generation (RAG) answers a question by first retrieving passages "
        "from a document collection and then asking a language model to answer using only those "
        "passages. The model supplies fluent language; the collection supplies the facts.",
    ),
    ("h2", "Why retrieve first"),
    (
        "p",
        "A language model's knowledge is frozen at training time and cannot include private "
        "documents. Retrieval brings in current, private and specific information, and lets "
        "every claim in the answer point to the passage that supports it.",
    ),
    ("h2", "Citations"),
    (
        "p",
        "Each retrieved passage carries an identifier. The model is asked to cite the "
        "identifiers it relied on, and the system turns them into citations showing the "
        "document title, the section headings and the page. When passages come from several "
        "databases, the citation must also name the database, because identifiers are unique "
        "only within one database.",
    ),
    ("h2", "Agentic retrieval"),
    (
        "p",
        "Instead of a single search, the model can be given search and document-reading tools "
        "and allowed several rounds: search, read, refine the query, search again. This helps "
        "with questions that span several documents, at the cost of more model calls. A limit "
        "on the number of requests per question keeps the cost bounded.",
    ),
]

EMBED_CACHE: list[Block] = [
    ("h1", "Embedding throughput on small machines"),
    (
        "p",
        "On a laptop or a small virtual machine without a GPU, embedding is usually the slowest "
        "step of ingestion. A 22-million-parameter model on two CPU cores embeds roughly ten to "
        "twenty passages of 256 tokens per second.",
    ),
    ("h2", "Batching"),
    (
        "p",
        "Embedding passages in batches of 32 to 64 uses the CPU's vector units far better than "
        "one passage at a time. Batches should mix chunks from several documents so that a "
        "single short file does not leave the batch half empty.",
    ),
    ("h2", "Skip unchanged work"),
    (
        "p",
        "The cheapest embedding is the one never computed. Hashing each file's bytes and "
        "comparing with the stored hash lets an ingester skip files that were touched but not "
        "changed. Comparing modification time and size first avoids even reading the file.",
    ),
    ("h2", "Query side"),
    (
        "p",
        "A query is embedded once per search, even when the search fans out to several "
        "databases, provided they all share one embedding model. Loading the model is the "
        "expensive part of the first query; a long-running process pays it once.",
    ),
]

INCIDENT_REVIEW: list[Block] = [
    ("h1", "Incident review: ingestion stalled for six hours"),
    (
        "p",
        "Severity SEV-2. Search stayed available throughout, but the papers database did not "
        "receive new documents for six hours and eleven minutes.",
    ),
    ("h2", "Summary"),
    (
        "p",
        "A malformed PDF made the converter hang. Both workers eventually claimed copies of "
        "slow jobs, the queue stopped draining, and no alert fired because the ingester process "
        "itself stayed healthy.",
    ),
    ("h2", "Timeline (UTC)"),
    ("li", "03:12 a 40 MB scanned PDF lands in the papers folder."),
    ("li", "03:13 a worker starts converting it; conversion never finishes."),
    ("li", "07:40 a researcher reports that this morning's papers are missing from search."),
    ("li", "08:05 the on-call engineer finds 214 queued jobs with haiku-ingester status."),
    ("li", "09:23 the file is moved aside, the ingester is restarted and the queue drains."),
    ("h2", "Contributing factors"),
    ("li", "No conversion timeout was configured."),
    ("li", "No alert on queue age: we alerted on process health, not on progress."),
    ("h2", "Action items"),
    ("li", "Set processing.conversion_timeout_s to 300 seconds in every environment."),
    ("li", "Page when the oldest queued job is older than 30 minutes."),
    ("li", "Add a restore-drill query that checks the newest document's date."),
]

ONBOARDING: list[Block] = [
    ("h1", "Onboarding checklist for platform engineers"),
    (
        "p",
        "Work through this list in your first two weeks. Your onboarding buddy signs off each "
        "section. You join the on-call rotation as a shadow in week three.",
    ),
    ("h2", "Week one: access and tools"),
    ("li", "Request shell access to the staging database hosts through the identity provider."),
    ("li", "Install the haiku command-line tools and run a search against the staging databases."),
    ("li", "Read the paging policy, the severity levels and the escalation paths."),
    ("h2", "Week two: operations"),
    ("li", "Take part in a restore drill with the current on-call primary."),
    ("li", "Tag a staging database, make a change, and restore the tag."),
    ("li", "Read the three most recent incident reviews."),
    ("h2", "Before your first shift"),
    (
        "p",
        "Confirm you receive a test page, that you can open every runbook linked from the "
        "paging alerts, and that you know who your secondary is.",
    ),
]

DR_PLAN: list[Block] = [
    ("h1", "Disaster recovery plan"),
    (
        "p",
        "This plan covers the loss of the primary region that hosts the search platform. It "
        "sets two targets: a recovery point objective (RPO) of 24 hours and a recovery time "
        "objective (RTO) of 4 hours.",
    ),
    ("h2", "What we recover"),
    (
        "p",
        "The databases are restored from the latest nightly backup in the backup account. "
        "Documents added after that backup are re-ingested from their source folders, which are "
        "replicated separately, so the effective data loss for sourced documents is close to zero.",
    ),
    ("h2", "Recovery steps"),
    ("li", "Declare a SEV-1 and name an incident commander."),
    ("li", "Provision database hosts in the standby region from the infrastructure templates."),
    ("li", "Restore each database from the newest backup and verify counts with haiku-rag info."),
    ("li", "Start the ingester; its first sweep re-ingests files changed since the backup."),
    ("li", "Point query clients at the new hosts and post a status page update."),
    ("h2", "Testing the plan"),
    (
        "p",
        "The full plan is rehearsed twice a year in the standby region. The monthly restore "
        "drill exercises the most important step, restoring a database, far more often.",
    ),
]

CAPACITY: list[Block] = [
    ("h1", "Capacity planning"),
    (
        "p",
        "Capacity is reviewed every quarter from three measurements: storage used per "
        "database, ingestion throughput, and query latency at the 95th percentile.",
    ),
    ("h2", "Storage"),
    (
        "p",
        "A chunk with a 384-dimensional float32 vector costs about 1.5 KB for the vector plus its "
        "text and metadata, so a million chunks need roughly 3 to 4 GB before old versions. "
        "Keep at least 40 percent of each volume free so that compaction has room to rewrite "
        "files.",
    ),
    ("h2", "Ingestion"),
    (
        "p",
        "Ingestion is bound by embedding on CPU. When the daily volume of new documents would "
        "take more than a quarter of the day to embed, add workers, move embedding to a GPU "
        "host with an OpenAI-compatible endpoint, or split the database so that separate "
        "ingesters on separate machines share the load.",
    ),
    ("h2", "Queries"),
    (
        "p",
        "Query processes are stateless readers and scale horizontally. If p95 latency exceeds "
        "500 ms, first check that vector indexes exist on the large databases, then add readers.",
    ),
]

DOCUMENTS: dict[str, list[Block]] = {
    "papers/ivf-pq-indexes.docx": IVF_PQ,
    "papers/write-ahead-logging.docx": WAL,
    "papers/retrieval-augmented-generation.pdf": RAG,
    "papers/embedding-throughput.pdf": EMBED_CACHE,
    "handbook/incident-review-ingest-stall.docx": INCIDENT_REVIEW,
    "handbook/onboarding-checklist.docx": ONBOARDING,
    "handbook/disaster-recovery-plan.pdf": DR_PLAN,
    "handbook/capacity-planning.pdf": CAPACITY,
}


def write_docx(blocks: list[Block], path: Path) -> None:
    doc = DocxDocument()
    props = doc.core_properties
    props.title = blocks[0][1]
    props.author = AUTHOR
    props.last_modified_by = AUTHOR
    props.created = FIXED_TIME
    props.modified = FIXED_TIME
    props.revision = 1
    for kind, text in blocks:
        if kind == "h1":
            doc.add_heading(text, level=1)
        elif kind == "h2":
            doc.add_heading(text, level=2)
        elif kind == "li":
            doc.add_paragraph(text, style="List Bullet")
        else:
            doc.add_paragraph(text)
    buffer = io.BytesIO()
    doc.save(buffer)
    path.write_bytes(_with_fixed_zip_times(buffer.getvalue()))


def _with_fixed_zip_times(data: bytes) -> bytes:
    """Rewrite a .docx archive with fixed entry times; python-docx stamps the current time."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=FIXED_TIME.timetuple()[:6])
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = info.external_attr
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


def write_pdf(blocks: list[Block], path: Path) -> None:
    styles = getSampleStyleSheet()
    story: list = []
    bullets: list[ListItem] = []

    def flush_bullets() -> None:
        if bullets:
            story.append(ListFlowable(list(bullets), bulletType="bullet", leftIndent=12))
            bullets.clear()

    for kind, text in blocks:
        if kind == "li":
            bullets.append(ListItem(Paragraph(text, styles["BodyText"])))
            continue
        flush_bullets()
        style = {"h1": "Heading1", "h2": "Heading2"}.get(kind, "BodyText")
        story.append(Paragraph(text, styles[style]))
        if kind == "p":
            story.append(Spacer(1, 4))
    flush_bullets()
    template = SimpleDocTemplate(
        str(path),
        pagesize=A4,
        leftMargin=2.5 * cm,
        rightMargin=2.5 * cm,
        title=blocks[0][1],
        author=AUTHOR,
        invariant=1,
    )
    template.build(story)


def main() -> None:
    for relative, blocks in DOCUMENTS.items():
        path = DOCS / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".docx":
            write_docx(blocks, path)
        else:
            write_pdf(blocks, path)
        print(f"wrote {path.relative_to(DOCS.parent.parent)} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
