"""The `haiku-rag` CLI: scope rules, labels, errors (docs/cli.md); in process where only output and
exit status count, real processes for import-time checks and shell completion."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from rag_support import HAIKU_RAG, config_data
from rag_support import invoke as cli
from rag_support import invoke_all as cli_all

from support import copy_database, write_config


@pytest.fixture(scope="module")
def home(built, papers_tagged, tmp_path_factory):
    root = tmp_path_factory.mktemp("cli-scope")
    data = root / "data"
    configs = {
        "two": config_data(data, {"papers": built["papers"], "wiki": built["wiki"]}),
        "one": config_data(data, {"papers": built["papers"]}),
        "tagged": config_data(
            data,
            {"papers": papers_tagged["path"], "snap": {"location": str(papers_tagged["path"]), "tag": "r1"}},
        ),
        "missing": config_data(data, {"papers": root / "absent" / "papers.lancedb", "wiki": built["wiki"]}),
    }
    paths = {name: write_config(root / f"{name}.yaml", data) for name, data in configs.items()}
    return {"root": root, **paths}


def test_an_unknown_database_name_exits_1_naming_it(home):
    by_name, by_alias = cli_all(
        (("--db-name", "nope", "list"), {"config": home["two"]}),
        (("--database", "nope", "list"), {"config": home["two"]}),
    )
    for result in (by_name, by_alias):
        assert result.returncode == 1
        assert result.stderr.startswith("Error:") and "nope" in result.stderr
        assert "Traceback" not in result.stderr


def test_one_database_commands_need_a_selection_only_when_several_are_configured(home):
    two, one = cli_all((("info",), {"config": home["two"]}), (("list", "--json"), {"config": home["one"]}))
    assert two.returncode == 1
    assert "papers" in two.stderr and "wiki" in two.stderr and "--db-name" in two.stderr
    assert one.returncode == 0, one.stderr
    assert {d["source"] for d in json.loads(one.stdout)} == {"papers"}


def test_list_over_a_set_lists_every_database_labelling_each_document(home):
    text, as_json = cli_all((("list",), {"config": home["two"]}), (("list", "--json"), {"config": home["two"]}))
    assert text.returncode == 0, text.stderr
    labels = [line.strip() for line in text.stdout.splitlines() if line.strip().startswith("database: ")]
    assert sorted(labels) == ["database: papers"] * 3 + ["database: wiki"] * 3
    assert sorted(d["source"] for d in json.loads(as_json.stdout)) == ["papers"] * 3 + ["wiki"] * 3


def test_list_format_short_prints_one_line_per_document_grouped_by_database_over_a_set(home):
    two, one = cli_all(
        (("list", "--format", "short"), {"config": home["two"]}),
        (("list", "--format", "short"), {"config": home["one"]}),
    )
    lines = two.stdout.splitlines()
    papers_rows, wiki_rows = lines[1:4], lines[5:]
    assert (
        two.returncode, len(lines), lines[0], lines[4],
        all(row.startswith("  ") and len(row.split("\t")) == 3 for row in papers_rows + wiki_rows),
        sorted(row.split("\t")[1] for row in wiki_rows),
        sorted(row.split("\t")[1] for row in one.stdout.splitlines()),
    ) == (
        0, 8, "papers:", "wiki:", True,
        ["Cooking pasta", "Machine learning", "Plate tectonics"],
        ["Neural networks", "Photosynthesis", "Volcanoes"],
    ), two.stdout + two.stderr + one.stderr


def test_doctor_over_a_set_checks_every_database_and_the_shared_embedder(home, built, wiki_other_dim, tmp_path):
    mixed = write_config(tmp_path / "mixed.yaml", config_data(
        tmp_path / "data", {"papers": built["papers"], "wiki": wiki_other_dim, "gone": tmp_path / "gone.lancedb"}
    ))
    healthy, broken = cli_all(
        (("doctor", "--skip-providers", "--json"), {"config": home["two"]}),
        (("doctor", "--skip-providers"), {"config": mixed}),
    )
    assert healthy.returncode == 0, healthy.stdout + healthy.stderr
    checks = json.loads(healthy.stdout)
    assert {(c["database"], c["status"]) for c in checks if c["name"] == "database"} == {("papers", "ok"), ("wiki", "ok")}
    assert {c["name"]: c["status"] for c in checks}["embedders across databases"] == "ok"
    assert broken.returncode == 1
    lines = broken.stdout.splitlines()
    assert any(line.startswith("fail  [gone] database: ") and "--db-name gone init" in line for line in lines)
    assert any(line.startswith("fail  [wiki] embedder: ") for line in lines)
    assert any(line.startswith("fail  embedders across databases: ") and "'papers' and 'wiki'" in line for line in lines)


def test_search_labels_results_only_when_it_spans_several_databases(home, built):
    spanning, narrowed = cli_all(
        (("search", "learning from data"), {"config": home["two"]}),
        # --db-name after the command, as haiku-ingester takes it
        (("search", "-s", "fts", "neural networks data", "--db-name", "papers"), {"config": home["two"]}),
    )
    assert spanning.returncode == 0, spanning.stderr
    labels = [line for line in spanning.stdout.splitlines() if line.startswith("database: ")]
    results = [line for line in spanning.stdout.splitlines() if line[:1].isdigit() and ". " in line]
    assert len(labels) == len(results) == 5
    assert {line.split(": ")[1] for line in labels} == {"papers", "wiki"}
    assert narrowed.returncode == 0, narrowed.stderr
    assert "Neural networks" in narrowed.stdout and "database:" not in narrowed.stdout
    assert not any(title in narrowed.stdout for title in built["wiki_docs"])


def test_db_and_db_name_together_are_refused(home, tmp_path):
    result = cli("--db-name", "papers", "list", "--db", str(tmp_path / "x.lancedb"), config=home["two"])
    assert result.returncode == 1 and "not both" in result.stderr


def test_db_opens_that_path_whatever_is_configured(home, built, tmp_path):
    path = copy_database(built["wiki"], tmp_path / "foo.lancedb")
    result = cli("list", "--db", str(path), "--json", config=home["two"])
    assert result.returncode == 0, result.stderr
    documents = json.loads(result.stdout)
    assert {d["title"] for d in documents} == set(built["wiki_docs"]) and {d["source"] for d in documents} == {"foo"}


def test_settings_and_init_config_open_no_database(home, tmp_path):
    settings, init_config = cli_all(
        (("settings",), {"config": home["two"]}),
        (("init-config", "out.yaml"), {"config": home["two"], "cwd": tmp_path}),
    )
    assert settings.returncode == 0 and "papers" in settings.stdout
    assert init_config.returncode == 0 and (tmp_path / "out.yaml").is_file()
    again = cli("init-config", "out.yaml", config=home["two"], cwd=tmp_path)
    assert again.returncode == 1 and "already exists" in again.stderr


def test_settings_mask_secrets(tmp_path):
    config = write_config(tmp_path / "secret.yaml", config_data(
        tmp_path / "data",
        embeddings={"model": {"provider": "openai", "name": "e", "vector_dim": 8, "api_key": "sk-very-secret"}},
        lancedb={"storage_options": {"aws_secret_access_key": "hush", "region": "eu-west-1"}},
    ))
    result = cli("settings", config=config)
    assert result.returncode == 0, result.stderr
    assert "sk-very-secret" not in result.stdout and "hush" not in result.stdout
    assert "***" in result.stdout and "eu-west-1" in result.stdout


def test_init_creates_only_the_named_database_and_is_idempotent(tmp_path):
    papers, wiki = tmp_path / "new" / "papers.lancedb", tmp_path / "new" / "wiki.lancedb"
    config = write_config(tmp_path / "c.yaml", config_data(tmp_path / "data", {"papers": papers, "wiki": wiki}))
    first = cli("--db-name", "papers", "init", config=config)
    assert first.returncode == 0, first.stderr
    assert "initialized" in first.stdout and papers.is_dir() and not wiki.exists()
    second = cli("--db-name", "papers", "init", config=config)
    assert second.returncode == 0 and "already exists" in second.stdout


def test_a_tagged_entry_reads_but_refuses_lifecycle_commands_and_another_tag(home):
    listed, vacuumed, retagged = cli_all(
        (("--db-name", "snap", "list", "--json"), {"config": home["tagged"]}),
        (("--db-name", "snap", "vacuum"), {"config": home["tagged"]}),
        (("--db-name", "snap", "list", "--at", "other"), {"config": home["tagged"]}),
    )
    assert listed.returncode == 0, listed.stderr
    assert len(json.loads(listed.stdout)) == 3
    assert vacuumed.returncode == 1 and "tag 'r1'" in vacuumed.stderr
    assert retagged.returncode == 1 and "Error:" in retagged.stderr


def test_at_needs_one_database_and_reads_it_at_the_tag(home):
    on_set, at_tag, live = cli_all(
        (("search", "glaciers", "--at", "r1"), {"config": home["tagged"]}),
        (("--db-name", "papers", "search", "-s", "fts", "glaciers valleys", "--at", "r1"), {"config": home["tagged"]}),
        (("--db-name", "papers", "search", "-s", "fts", "glaciers valleys", "--json"), {"config": home["tagged"]}),
    )
    assert on_set.returncode == 1 and "--at" in on_set.stderr
    assert at_tag.returncode == 0 and "No results found." in at_tag.stdout
    assert live.returncode == 0, live.stderr
    assert [(r["document_title"], r["source"]) for r in json.loads(live.stdout)] == [("Glaciers", "papers")]


def test_a_missing_configured_database_suggests_init_without_showing_its_location(home):
    listed, info = cli_all(
        (("--db-name", "papers", "list"), {"config": home["missing"]}),
        (("--db-name", "papers", "info"), {"config": home["missing"]}),
    )
    for result in (listed, info):
        assert result.returncode == 1
        # one wording, a command that works over a set, no Python API
        assert result.stderr == (
            "Error: database 'papers' does not exist; create it with `haiku-rag --db-name papers init`\n"
        )


def test_info_shows_the_configured_location(home, built):
    text, as_json = cli_all(
        (("--db-name", "papers", "info"), {"config": home["two"]}),
        (("--db-name", "wiki", "info", "--json"), {"config": home["two"]}),
    )
    assert text.returncode == 0, text.stderr
    assert f"path: {built['papers']}" in text.stdout.splitlines()
    assert "documents: 3" in text.stdout
    report = json.loads(as_json.stdout)
    assert report["name"] == "wiki" and report["documents"] == 3


def test_get_prints_a_document_and_an_absent_one_exits_1(home, built):
    doc = built["papers_docs"]["Volcanoes"]
    found, absent = cli_all(
        (("--db-name", "papers", "get", doc.id, "--json"), {"config": home["two"]}),
        (("--db-name", "papers", "get", "no-such-id"), {"config": home["two"]}),
    )
    assert found.returncode == 0 and json.loads(found.stdout)["title"] == "Volcanoes"
    assert absent.returncode == 1 and "Document with id no-such-id not found." in absent.stderr


def test_get_over_a_set_names_the_database_holding_the_id(home, built):
    doc = built["papers_docs"]["Volcanoes"]
    held, nowhere = cli_all(
        (("get", doc.id), {"config": home["two"]}),
        (("get", "no-such-id"), {"config": home["two"]}),
    )
    assert held.returncode == 1 and "Traceback" not in held.stderr
    assert held.stderr.strip() == (
        "Error: lancedb.databases names papers, wiki; get reads a single database, "
        f"and document {doc.id} is in database 'papers': rerun with --db-name papers"
    )
    assert nowhere.returncode == 1
    assert "none of them holds document no-such-id" in nowhere.stderr


@pytest.mark.parametrize(
    "args",
    [("--bogus", "list"), ("add", "x"), ("search", "q", "-s", "bogus"), ("vacuum", "--retention-seconds", "-1"),
     ("list", "--db", "/"), ("list", "--limit", "0")],
    ids=["unknown-option", "add-is-unknown", "bad-choice", "negative-retention", "db-without-stem", "list-limit-0"],
)
def test_usage_errors_exit_2(home, args):
    result = cli(*args, config=home["one"])
    assert result.returncode == 2, (result.stdout, result.stderr)


@pytest.mark.parametrize("args", [("search", ""), ("search", "   "), ("ask", " ")], ids=["empty", "blank", "ask-blank"])
def test_an_empty_or_blank_query_is_a_usage_error_before_any_database_opens(home, args):
    # The configured papers database is missing: opening it would exit 1, not 2.
    result = cli(*args, config=home["missing"])
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "empty" in result.stderr and "Traceback" not in result.stderr


_CHECK_IMPORTS = """
import os, sys


def report():
    heavy = sorted({m.split(".")[0] for m in sys.modules} & {"torch", "sentence_transformers", "docling"})
    print("HEAVY=" + ",".join(heavy), file=sys.stderr)


leave = os._exit
os._exit = lambda code: (report(), leave(code))  # a command ends the process without unwinding
from haiku.rag.cli import main
sys.argv = ["haiku-rag", *sys.argv[1:]]
main()
"""


def test_help_list_info_and_tag_list_import_no_model_library(home):
    program = [sys.executable, "-c", _CHECK_IMPORTS]
    results = cli_all(
        (("--help",), {"config": home["two"], "program": program}),
        (("--db-name", "papers", "list"), {"config": home["two"], "program": program}),
        (("--db-name", "papers", "info"), {"config": home["two"], "program": program}),
        (("--db-name", "papers", "tag", "list"), {"config": home["two"], "program": program}),
    )
    for result in results:
        assert result.returncode == 0, result.stderr
        assert "HEAVY=\n" in result.stderr or result.stderr.rstrip().endswith("HEAVY="), result.stderr


def test_a_bad_filter_exits_1_before_the_model_loads(home):
    program = [sys.executable, "-c", _CHECK_IMPORTS]
    result = cli("search", "bread", "--filter", "content = 'x'", config=home["two"], program=program)
    assert result.returncode == 1
    assert result.stderr.startswith("Error: invalid document filter \"content = 'x'\": no field named content. A filter")
    assert result.stderr.rstrip().endswith("HEAVY="), result.stderr


def test_a_filter_failing_on_the_rows_or_holding_two_statements_exits_1_in_one_line(home):
    failing, two_statements = cli_all(
        (("list", "--filter", "CAST(title AS INT) = 1"), {"config": home["two"]}),
        (("--db-name", "papers", "list", "--filter", "1=1; DROP TABLE documents"), {"config": home["two"]}),
    )
    assert failing.returncode == 1 and two_statements.returncode == 1
    assert failing.stderr.startswith(
        "Error: document filter 'CAST(title AS INT) = 1' failed on the stored documents: cast error: "
    ), failing.stderr
    assert two_statements.stderr.startswith(
        "Error: invalid document filter '1=1; DROP TABLE documents': text after ';' would be ignored"
    ), two_statements.stderr
    for result in (failing, two_statements):
        assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == "", result.stderr
        assert ".rs:" not in result.stderr and "/root" not in result.stderr


def test_shell_completion_is_offered_and_completes_commands_and_options(tmp_path):
    help_text = cli("--help").stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text
    program = [str(HAIKU_RAG)]

    def complete(words: str) -> list[str]:
        env = {**os.environ, "_HAIKU_RAG_COMPLETE": "complete_bash", "COMP_WORDS": words,
               "COMP_CWORD": str(len(words.split()) - 1)}
        done = subprocess.run(program, capture_output=True, text=True, timeout=60, env=env)
        return done.stdout.split()

    assert complete("haiku-rag cre") == ["create-index"]
    assert complete("haiku-rag search --search-ty") == ["--search-type"]


def test_version():
    result = cli("--version")
    assert result.returncode == 0 and result.stdout.startswith("haiku-rag version ")
