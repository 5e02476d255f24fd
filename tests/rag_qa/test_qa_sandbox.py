"""execute_code: the selected databases' documents only, isolated (docs/sandbox.md)."""

from __future__ import annotations

import json
import socket
import threading

import pytest
from qa_scripted_model import answer, call, last_tool_result

from haiku.rag.qa import ask
from haiku.rag.sandbox import execute_code


async def test_two_selected_databases_sharing_a_document_id_are_refused_naming_both(open_client):
    async with open_client("papers", "mirror") as client:
        with pytest.raises(ValueError, match="papers and mirror"):
            await execute_code(client, "1")


async def test_over_one_selected_database_the_sandbox_sees_only_its_documents(open_client, qa_databases):
    async with open_client("papers", "wiki") as client:
        result = await execute_code(client, "import os\nsorted(os.listdir('/documents'))", sources=["wiki"])
    assert result.output == repr(sorted(qa_databases.documents["wiki"].values()))


async def test_sandbox_metadata_json_has_no_source_field(open_client, qa_databases):
    doc_id = qa_databases.doc("wiki", "Honey bees")
    code = f"import json\nsorted(json.load(open('/documents/{doc_id}/metadata.json')))"
    async with open_client("papers", "wiki") as client:
        result = await execute_code(client, code)
    assert result.output == repr(["created_at", "id", "metadata", "title", "updated_at", "uri"])


async def test_sandbox_documents_hold_content_and_chunks(open_client, qa_databases):
    doc_id = qa_databases.doc("papers", "Photosynthesis")
    code = (
        "import json\n"
        f"d = '/documents/{doc_id}'\n"
        "rows = [json.loads(l) for l in open(d + '/chunks.jsonl')]\n"
        "('thylakoid' in open(d + '/content.txt').read(), [r['id'] for r in rows])"
    )
    async with open_client("papers") as client:
        result = await execute_code(client, code)
    assert result.output == repr((True, qa_databases.chunks["papers"]["Photosynthesis"]))


async def test_sandbox_search_results_name_their_source(open_client):
    code = "sorted({hit['source'] for hit in search('bees and vaccines', limit=10)})"
    async with open_client("papers", "wiki") as client:
        result = await execute_code(client, code)
    assert result.output == repr(["papers", "wiki"])


async def test_sandbox_list_documents_interleaves_databases_with_their_source(open_client):
    async with open_client("papers", "wiki") as client:
        result = await execute_code(client, "[d['source'] for d in list_documents()]")
    assert result.output == repr(["papers", "wiki", "papers", "wiki", "papers"])


async def test_sandbox_filter_narrows_the_mount(open_client, qa_databases):
    async with open_client("papers", "wiki") as client:
        result = await execute_code(client, "import os\nos.listdir('/documents')", filter="title = 'Volcanoes'")
    assert result.output == repr([qa_databases.doc("wiki", "Volcanoes")])


async def test_sandbox_code_cannot_reach_the_network():
    from haiku.rag.sandbox._process import run_in_jail

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    accepted: list[object] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
    code = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
        "    result = 'connected'\n"
        "except OSError as e:\n"
        "    result = type(e).__name__\n"
        "result"
    )
    try:
        outcome = await _run(run_in_jail, code)
    finally:
        listener.close()
    assert (outcome.value, accepted) == ("'OSError'", [])


async def test_sandbox_code_cannot_read_host_files(repo_root, qa_databases, tmp_path):
    from pathlib import Path

    from haiku.rag.sandbox._process import run_in_jail

    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    targets = [repo_root / "Makefile", qa_databases.locations["papers"], Path("/etc/passwd"), secret, Path("/proc/1")]
    assert all(t.exists() for t in targets)
    code = "import os\n[os.path.exists(p) for p in " + json.dumps([str(t) for t in targets]) + "]"
    outcome = await _run(run_in_jail, code)
    assert outcome.value == repr([False] * len(targets))


async def test_sandbox_code_cannot_write_the_documents(open_client, qa_databases):
    doc_id = qa_databases.doc("wiki", "Volcanoes")
    async with open_client("wiki") as client:
        result = await execute_code(client, f"open('/documents/{doc_id}/content.txt', 'w')")
    assert result.error is not None and "Read-only file system" in result.error


async def test_sandbox_code_cannot_write_the_python_runtime():
    import sys

    from haiku.rag.sandbox._process import run_in_jail

    code = f"open({sys.base_prefix + '/haiku-sandbox-probe'!r}, 'w')"
    outcome = await _run(run_in_jail, code)
    assert outcome.error is not None and "Read-only file system" in outcome.error


async def test_sandbox_code_cannot_regain_privileges():
    from haiku.rag.sandbox._process import run_in_jail

    code = "import os\ntry:\n    os.chroot('/tmp')\n    _ = 'escaped'\nexcept PermissionError:\n    _ = 'refused'\n_"
    outcome = await _run(run_in_jail, code)
    assert outcome.value == "'refused'"


async def test_sandbox_code_running_past_the_timeout_is_stopped(open_client):
    async with open_client("wiki", sandbox={"timeout_s": 1}) as client:
        result = await execute_code(client, "while True:\n    pass")
    assert (result.timed_out, "sandbox.timeout_s" in (result.error or "")) == (True, True)


async def test_sandbox_output_is_cut_at_max_output_chars(open_client):
    async with open_client("wiki", sandbox={"max_output_chars": 100}) as client:
        result = await execute_code(client, "print('x' * 5000)")
    assert (len(result.output), result.truncated) == (100, True)


async def test_sandbox_exception_returns_its_traceback(open_client):
    async with open_client("wiki") as client:
        result = await execute_code(client, "x = 1\n1 / 0")
    assert result.error is not None and result.error.rstrip().endswith("ZeroDivisionError: division by zero")


async def test_the_execute_code_tool_reports_a_shared_document_id_to_the_model(open_client, model):
    model.play(call("execute_code", code="1"), answer("Could not run."))
    async with open_client("papers", "mirror") as client:
        await ask(client, "Count documents?")
    assert "papers and mirror" in last_tool_result(model.requests[1])


async def test_the_execute_code_tool_mounts_only_the_question_sources(open_client, model):
    model.play(call("execute_code", code="import os\nlen(os.listdir('/documents'))"), answer("Two."))
    async with open_client("papers", "mirror", "wiki") as client:
        await ask(client, "How many documents?", sources=["wiki"])
    assert last_tool_result(model.requests[1]) == "2"


async def _run(run_in_jail, code: str):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "documents").mkdir()
        return await run_in_jail(Path(tmp), code, handlers={}, timeout_s=10, max_output_chars=1000)


async def test_without_unshare_execute_code_refuses_to_run_code_unisolated(open_client, monkeypatch):
    from haiku.rag.sandbox import SandboxUnavailableError, _process

    monkeypatch.setattr(_process.shutil, "which", lambda name: None)
    async with open_client("wiki") as client:
        with pytest.raises(SandboxUnavailableError, match="unshare"):
            await execute_code(client, "print('unisolated')")


async def test_sandbox_output_printed_before_a_timeout_is_kept(open_client):
    async with open_client("wiki", sandbox={"timeout_s": 2}) as client:
        result = await execute_code(client, "print('reached step one')\nwhile True:\n    pass")
    assert result.timed_out and result.output == "reached step one\n"
    assert "reached step one" in result.render() and "sandbox.timeout_s" in result.render()


async def test_a_huge_final_expression_is_cut_at_max_output_chars_not_reported_as_garbage(open_client):
    async with open_client("wiki", sandbox={"max_output_chars": 1000}) as client:
        result = await execute_code(client, "'y' * (100 * 1024 * 1024)")
    assert result.error is None, result.error
    assert (len(result.output), result.truncated) == (1000, True)
    assert result.output.startswith("'yyy")


# Code that reaches for haiku's side of the sandbox: it writes control messages of its own to
# every descriptor it holds (docs/sandbox.md, "Bounds").
_EVERY_DESCRIPTOR = (
    "import os\n"
    "def everywhere(line):\n"
    "    for fd in range(3, 64):\n"
    "        try:\n"
    "            os.write(fd, line)\n"
    "        except OSError:\n"
    "            pass\n"
)


async def test_code_cannot_fake_that_the_sandbox_could_not_isolate_it(open_client):
    code = _EVERY_DESCRIPTOR + "everywhere(b'{\"op\": \"failed\", \"error\": \"forged by the code\"}\\n')\n'after'"
    async with open_client("wiki") as client:
        result = await execute_code(client, code)  # not SandboxUnavailableError
    assert "forged" not in result.render()
    assert result.error is not None and result.error.startswith("Error: the code was stopped: it wrote to the sandbox")


@pytest.mark.slow
async def test_code_flooding_haikus_channel_is_stopped_with_a_clear_error_and_haiku_keeps_little(open_client):
    import resource

    code = _EVERY_DESCRIPTOR + (
        "import json\n"
        "line = (json.dumps({'op': 'out', 'text': 'x' * 1_000_000}) + '\\n').encode()\n"
        "while True:\n"
        "    everywhere(line)\n"
    )
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    async with open_client("wiki", sandbox={"timeout_s": 20, "max_output_chars": 1000}) as client:
        result = await execute_code(client, code)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - peak_before
    assert not result.timed_out
    assert result.error is not None and "the code was stopped: it sent more than" in result.error
    assert (len(result.output), result.truncated) == (1000, True)
    assert grown < 100 * 1024**2, f"haiku grew by {grown / 1024**2:.0f} MB"
