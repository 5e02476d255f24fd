"""`analyze`: a question answered by code the model runs in the sandbox (docs/qa.md, "Analyze")."""

from __future__ import annotations

import json

import pytest
from qa_cli_support import invoke as run_cli
from qa_cli_support import write_qa_config
from qa_scripted_model import answer, call, last_tool_result

from haiku.rag.qa import analyze

COUNT = "len(list_documents())"


async def test_analyze_returns_the_answer_and_every_program_with_its_output(open_client, model):
    from haiku.rag.client import Program

    model.play(call("execute_code", code=COUNT), call("execute_code", code="print('bees')"), answer("Five."))
    async with open_client("papers", "wiki") as client:
        analysis = await analyze(client, "How many documents are there?")
    assert (analysis.question, analysis.answer, analysis.programs) == (
        "How many documents are there?",
        "Five.",
        [Program(code=COUNT, output="5"), Program(code="print('bees')", output="bees\n")],
    )


async def test_analyze_offers_the_model_execute_code_only(open_client, model):
    model.play(answer("Nothing to run."))
    async with open_client("papers", "wiki") as client:
        await analyze(client, "How many?")
    assert [t["function"]["name"] for t in model.requests[0]["tools"]] == ["execute_code"]


async def test_analyze_over_sources_mounts_only_their_documents(open_client, model, qa_databases):
    model.play(call("execute_code", code="import os\nsorted(os.listdir('/documents'))"), answer("Two."))
    async with open_client("papers", "wiki") as client:
        analysis = await analyze(client, "Which documents?", sources=["wiki"])
    assert analysis.programs[0].output == repr(sorted(qa_databases.documents["wiki"].values()))


async def test_a_failing_program_is_kept_with_its_error_and_shown_to_the_model(open_client, model):
    model.play(call("execute_code", code="1/0"), answer("It failed."))
    async with open_client("wiki") as client:
        analysis = await analyze(client, "Divide?")
    program = analysis.programs[0]
    assert ("ZeroDivisionError" in (program.error or ""), "ZeroDivisionError" in last_tool_result(model.requests[1])) == (
        True,
        True,
    )


async def test_analyze_over_databases_sharing_a_document_id_is_refused_before_the_model_is_asked(
    open_client, model
):
    from haiku.rag.sandbox import SharedDocumentIdError

    model.play(answer("Should not be asked."))
    async with open_client("papers", "mirror") as client:
        with pytest.raises(SharedDocumentIdError, match="papers and mirror"):
            await analyze(client, "How many?")
    assert model.requests == []


async def test_analyze_with_an_unknown_source_is_refused_before_the_model_is_asked(open_client, model):
    from haiku.core.errors import UnknownDatabaseError

    async with open_client("papers", "wiki") as client:
        with pytest.raises(UnknownDatabaseError, match="nope"):
            await analyze(client, "How many?", sources=["nope"])
    assert model.requests == []


def _config(tmp_path, qa_databases, scripted_model, *names):
    databases = {n: qa_databases.locations[n] for n in names}
    return str(write_qa_config(tmp_path / "haiku.rag.yaml", databases, scripted_model.base_url, tmp_path / "data"))


def test_analyze_json_prints_the_answer_and_the_programs(tmp_path, qa_databases, model):
    model.play(call("execute_code", code=COUNT), answer("Five documents."))
    done = run_cli("--config", _config(tmp_path, qa_databases, model, "papers", "wiki"), "analyze", "How many?", "--json")
    assert (done.returncode, json.loads(done.stdout or "null")) == (
        0,
        {
            "question": "How many?",
            "answer": "Five documents.",
            "programs": [{"code": COUNT, "output": "5", "error": None}],
        },
    ), done.stderr


def test_analyze_prints_the_answer_then_each_program_and_its_output(tmp_path, qa_databases, model):
    model.play(call("execute_code", code=COUNT), answer("Two documents."))
    done = run_cli("--config", _config(tmp_path, qa_databases, model, "papers", "wiki"), "--db-name", "wiki",
                   "analyze", "How many?")
    assert (done.returncode, done.stdout.splitlines()) == (
        0,
        ["Question: How many?", "", "Two documents.", "", "Program 1:", f"    {COUNT}", "Output:", "    2"],
    ), done.stderr


def test_analyze_over_a_shared_document_id_exits_1_naming_both_databases(tmp_path, qa_databases, model):
    done = run_cli("--config", _config(tmp_path, qa_databases, model, "papers", "mirror"), "analyze", "How many?")
    assert (done.returncode, done.stderr.startswith("Error: "), "papers and mirror" in done.stderr) == (1, True, True)
