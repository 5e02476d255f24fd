#!/usr/bin/env bash
# The haiku demo: ingest two folders into two databases, tag one, and search
# across them live and at the tag. Run from a fresh clone with `make demo`
# (which installs .venv and sets HF_HUB_OFFLINE=1); everything it writes goes
# to ./demo-data/, which it deletes first.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
CONFIG=examples/haiku.demo.yaml
DATA=demo-data
# Console logs even when piped (e.g. `make demo | tee demo.log`): one line per job.
INGESTER=(.venv/bin/haiku-ingester --config "$CONFIG" --log-format console)
RAG=(.venv/bin/haiku-rag --config "$CONFIG")

for tool in .venv/bin/haiku-ingester .venv/bin/haiku-rag; do
    if [[ ! -x $tool ]]; then
        echo "demo: $tool is missing; run 'make install' first" >&2
        exit 1
    fi
done

step() {
    printf '\n\033[1m== %s\033[0m\n' "$*"
}

# Echo a command the way a user would type it, run it, and say how long it took.
show() {
    local shown=("$@") began=$SECONDS
    shown[0]=${shown[0]#.venv/bin/}
    printf '$'
    printf ' %q' "${shown[@]}"
    printf '\n'
    "$@"
    printf '\033[2m(%d s)\033[0m\n' $((SECONDS - began))
}

started=$SECONDS

step "Starting from a clean ./$DATA"
rm -rf "$DATA"
mkdir -p "$DATA/inbox"
echo "sample documents: $(find examples/docs/papers -type f | wc -l) in examples/docs/papers," \
    "$(find examples/docs/handbook -type f | wc -l) in examples/docs/handbook" \
    "(markdown, html, docx, pdf, pptx, xlsx, and a scanned pdf read by OCR)"

step "Ingesting both folders into the papers and handbook databases (one sweep, then exit)"
show "${INGESTER[@]}" run-batch

step "What the handbook database holds"
show "${RAG[@]}" --db-name handbook list --limit 5
show "${RAG[@]}" --db-name handbook info

step "Tagging the papers database as v1"
show "${RAG[@]}" --db-name papers tag create v1
show "${RAG[@]}" --db-name papers tag list

step "A paper arrives after the tag; the ingester picks up only the new file"
cp examples/late-arrivals/learned-sparse-retrieval.md "$DATA/inbox/"
show "${INGESTER[@]}" run-batch --db-name papers

step "Federated search over papers, handbook and papers-v1: each result names its database (papers and papers-v1 share the chunks unchanged since v1)"
show "${RAG[@]}" search "what to do when the disk fills up with old versions"

step "The scanned notice has no text layer: OCR read it, and a full-text search finds it"
show "${RAG[@]}" --db-name handbook search -s fts "fire drill north stairwell" --limit 2

step "Slides and spreadsheets are searchable too"
show "${RAG[@]}" --db-name handbook search "who is the escalation manager in week 4" --limit 2

step "Search one database: papers, live"
show "${RAG[@]}" --db-name papers search "expanding terms for sparse retrieval" --limit 3

step "The same search on papers as it was at tag v1 (--at): the late paper is not there"
show "${RAG[@]}" --db-name papers search "expanding terms for sparse retrieval" --limit 3 --at v1

step "The same snapshot through the configured entry papers-v1 (location + tag)"
show "${RAG[@]}" --db-name papers-v1 search "expanding terms for sparse retrieval" --limit 3

step "A PDF chunk drawn on its page: the answer's source, boxed (one PNG per page the chunk touches)"
chunk=$("${RAG[@]}" --db-name handbook search "how much storage does a chunk take" --limit 1 --json \
    --filter "uri LIKE '%capacity-planning.pdf'" \
    | .venv/bin/python -c 'import json, sys; print(json.load(sys.stdin)[0]["chunk_id"])')
show "${RAG[@]}" --db-name handbook visualize "$chunk" -o "$DATA/visualized"

step "Done in $((SECONDS - started)) s"
echo "The databases are in ./$DATA. Try more with:"
echo "  .venv/bin/haiku-rag --config $CONFIG search \"your question\""
