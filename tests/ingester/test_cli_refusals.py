"""What haiku-ingester refuses before it writes anything (docs/ingester.md), the command run in
process; the import-time probe and shell completion start real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from ingester_support import CLI, fs_source, write_ingester_config
from ingester_support import invoke as run_cli


@pytest.fixture
def folders(tmp_path):
    for name in ("A", "B"):
        (tmp_path / name).mkdir()
    return tmp_path


def two_databases(tmp, *, a_loc="a.lancedb", b_loc="b.lancedb", a_src=None, b_src=None, ingested=("a", "b")):
    sources = {"a": [a_src or fs_source(tmp / "A")], "b": [b_src or fs_source(tmp / "B")]}
    return write_ingester_config(
        tmp / "cfg.yaml",
        data_dir=tmp / "data",
        databases={"a": tmp / a_loc, "b": tmp / b_loc},
        ingested={name: sources[name] for name in ingested},
    )


def test_two_ingested_databases_at_one_location_are_refused(folders):
    result = run_cli(["run-batch"], config=two_databases(folders, b_loc="a.lancedb"))
    assert result.returncode == 1 and "one location" in result.stderr


def test_a_location_reached_through_a_symlink_counts_as_the_same_location(folders):
    (folders / "a.lancedb").mkdir()
    (folders / "alias.lancedb").symlink_to(folders / "a.lancedb")
    result = run_cli(["run-batch"], config=two_databases(folders, b_loc="alias.lancedb"))
    assert result.returncode == 1 and "one location" in result.stderr


def test_duplicate_source_ids_are_refused_naming_the_id(folders):
    config = two_databases(
        folders, a_src=fs_source(folders / "A", id="shared"), b_src=fs_source(folders / "B", id="shared")
    )
    result = run_cli(["run-batch", "--db-name", "a"], config=config)
    assert result.returncode == 1 and "shared" in result.stderr.splitlines()[-1]


def test_run_batch_with_no_ingested_database_is_refused(folders):
    result = run_cli(["run-batch"], config=two_databases(folders, ingested=()))
    assert result.returncode == 1 and "nothing to ingest" in result.stderr


def test_an_unknown_db_name_exits_1_naming_it(folders):
    result = run_cli(["run-batch", "--db-name", "nope"], config=two_databases(folders))
    assert result.returncode == 1 and result.stderr.startswith("Error:") and "nope" in result.stderr


def test_a_tagged_entry_in_ingester_databases_is_refused(folders):
    config = folders / "tagged.yaml"
    config.write_text(
        f"lancedb:\n  databases:\n    snap: {{location: {folders / 'a.lancedb'}, tag: t1}}\n"
        f"ingester:\n  databases:\n    snap:\n      sources: [{{root: {folders / 'A'}}}]\n"
    )
    result = run_cli(["run-batch"], config=config)
    assert result.returncode == 1 and "tag 't1'" in result.stderr


def test_expected_errors_print_no_traceback(folders):
    result = run_cli(["run-batch", "--db-name", "nope"], config=two_databases(folders))
    assert "Traceback" not in result.stderr


def test_a_missing_config_file_is_an_error_naming_it(folders):
    result = run_cli(["status"], config=folders / "absent.yaml")
    assert result.returncode == 1 and "absent.yaml" in result.stderr


def test_an_unknown_option_is_a_usage_error():
    assert run_cli(["run-batch", "--frobnicate"]).returncode == 2


def test_an_unknown_command_is_a_usage_error():
    assert run_cli(["ingest-everything"]).returncode == 2


def test_status_json_reports_every_ingested_database_before_any_run(folders):
    result = run_cli(["status", "--json"], config=two_databases(folders))
    report = json.loads(result.stdout)
    assert [d["name"] for d in report["databases"]] == ["a", "b"] and report["queue_exists"] is False


def test_help_loads_no_torch_sentence_transformers_or_docling():
    code = (
        "import sys\n"
        "from haiku.ingester import cli, app, batch, daemon, status, rebuild\n"
        "sys.argv = ['haiku-ingester', '--help']\n"
        "try:\n    cli.main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'sentence_transformers', 'docling'))\n"
        "print('HEAVY:' + ','.join(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "HEAVY:"


@pytest.mark.parametrize("flag", ["--version", "-v"])
def test_version_alone_prints_the_version(flag):
    result = run_cli([flag])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("haiku-ingester version ")


def test_dash_h_is_help():
    result = run_cli(["-h"])
    assert result.returncode == 0 and "run-batch" in result.stdout


def test_shell_completion_is_offered_and_completes_commands():
    help_text = run_cli(["--help"]).stdout
    assert "--install-completion" in help_text and "--show-completion" in help_text
    env = {"_HAIKU_INGESTER_COMPLETE": "complete_bash", "COMP_WORDS": "haiku-ingester run", "COMP_CWORD": "1"}
    done = subprocess.run(CLI, capture_output=True, text=True, timeout=60, env={**os.environ, **env})
    assert done.stdout.split() == ["run-batch"]


def test_run_batch_with_a_missing_root_creates_nothing_and_names_the_root_once(tmp_path):
    (tmp_path / "A").mkdir()
    missing = tmp_path / "not-mounted"
    config = write_ingester_config(
        tmp_path / "cfg.yaml",
        data_dir=tmp_path / "var" / "data",
        databases={"a": tmp_path / "var" / "a.lancedb", "papers": tmp_path / "var" / "papers.lancedb"},
        ingested={"a": [fs_source(tmp_path / "A")], "papers": [fs_source(missing, id="papers-folder")]},
    )
    result = run_cli(["run-batch"], config=config)
    [line] = result.stderr.strip().splitlines()
    assert result.returncode == 1 and line.startswith("Error: source papers-folder of database 'papers': ")
    assert line.count(str(missing)) == 1 and "does not exist" in line
    assert line.count("papers-folder") == 1 and line.count("'papers'") == 1
    assert not (tmp_path / "var").exists()  # no database, no queue, no data folder


def test_status_prints_the_queue_path_normalised(folders):
    config = write_ingester_config(
        folders / "cfg.yaml",
        data_dir=folders / "A" / ".." / "data",
        databases={"a": folders / "a.lancedb"},
        ingested={"a": [fs_source(folders / "A")]},
    )
    text = run_cli(["status"], config=config).stdout.splitlines()[0]
    report = json.loads(run_cli(["status", "--json"], config=config).stdout)
    assert text == f"queue: {folders / 'data' / 'ingester.db'} (not created yet)"
    assert report["queue"] == str(folders / "data" / "ingester.db")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--engine", "spark"], "--engine spark: the engines are local, ray"),
        (["--engine", "local", "--address", "ray://h:10001"], "use it with --engine ray"),
    ],
)
def test_a_bad_engine_choice_for_one_run_is_one_error_line(folders, args, words):
    result = run_cli(["run-batch", *args], config=two_databases(folders))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [f"Error: {result.stderr.strip()[len('Error: '):]}"]
    assert words in result.stderr and "Traceback" not in result.stderr


def test_an_unset_picture_model_key_is_refused_before_any_database_is_created(folders):
    config = write_ingester_config(
        folders / "cfg.yaml",
        data_dir=folders / "data",
        databases={"a": folders / "a.lancedb"},
        ingested={"a": [fs_source(folders / "A")]},
        processing={
            "pictures": "description",
            "picture_model": {"base_url": "http://127.0.0.1:9/v1", "name": "v", "api_key_env": "HAIKU_TEST_UNSET_KEY"},
        },
    )
    result = run_cli(["run-batch"], config=config)
    assert result.returncode == 1
    assert "api_key_env names HAIKU_TEST_UNSET_KEY" in result.stderr.strip().splitlines()[-1]
    assert not (folders / "a.lancedb").exists()
