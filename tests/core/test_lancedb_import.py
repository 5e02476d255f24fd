"""LanceDB imported for a store without its REST namespace client, override checks or pandas.

(haiku.core._lancedb; docs/benchmarks.md "Command-line latency".) Each check
runs in a fresh interpreter: what a module import did cannot be undone.
"""

from __future__ import annotations

import subprocess
import sys

PRELUDE = (
    "import sys\n"
    "from haiku.core._lancedb import hide_pandas_from_lancedb, import_lancedb\n"
    "hide_pandas_from_lancedb()\n"
    "lancedb = import_lancedb()\n"
)


def _run(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PRELUDE + code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_rest_client_pandas_and_namespace_package_stay_unimported():
    loaded = _run(
        "names = ('lance_namespace_urllib3_client.api', 'lance_namespace_urllib3_client.api_client', 'pandas')\n"
        "print(*[name in sys.modules for name in names])\n"
        "print(type(sys.modules['lance_namespace']).__name__)\n"
    )
    assert loaded == ["False", "False", "False", "_DeferredPackage"]


def test_the_udf_api_and_hosted_embedding_functions_stay_unimported():
    out = _run(
        "hosted = [m for m in sys.modules if m.startswith('lancedb.embeddings.') "
        "and m.rsplit('.', 1)[1] not in ('base', 'registry', 'utils')]\n"
        "deferred = ('lancedb.functions', 'lancedb.namespace', 'lancedb.embeddings')\n"
        "print(*[type(sys.modules[name]).__name__ for name in deferred])\n"
        "print(len(hosted), lancedb.functions is sys.modules['lancedb.functions'])\n"
    )
    assert out == ["_DeferredPackage", "_DeferredPackage", "_DeferredPackage", "0", "True"]


def test_deferred_udf_names_and_registry_lookups_load_the_real_modules():
    out = _run(
        "import lancedb.db as db\n"
        "version = lancedb.FunctionVersion\n"
        "print(version.__name__, callable(version.from_json), type(sys.modules['lancedb.functions']).__name__)\n"
        "print(isinstance(object(), db.UdfDefinition))\n"
        "from lancedb.embeddings import get_registry\n"
        "print(get_registry().get('sentence-transformers').__name__)\n"
        "print(type(sys.modules['lancedb.embeddings']).__name__, lancedb.embeddings.OpenAIEmbeddings.__name__)\n"
        "print(lancedb.LanceNamespaceDBConnection.__name__, type(sys.modules['lancedb.namespace']).__name__)\n"
    )
    assert out == [
        "FunctionVersion", "True", "module", "False",
        "SentenceTransformerEmbeddings", "module", "OpenAIEmbeddings", "LanceNamespaceDBConnection", "module",
    ]


def test_a_deferred_name_loads_the_real_package_when_used():
    out = _run(
        "import lancedb.db as db\n"
        "response = db.ListNamespacesResponse(namespaces=['a'], page_token=None)\n"
        "import lance_namespace\n"
        "print(response.namespaces, type(response).__module__, type(lance_namespace).__name__)\n"
        "import lance_namespace_urllib3_client as client\n"
        "print(issubclass(lance_namespace.LanceNamespace, object), client.ApiClient.__name__)\n"
    )
    assert out == [
        "['a']", "lance_namespace_urllib3_client.models.list_namespaces_response", "module", "True", "ApiClient"
    ]


def test_the_override_decorator_is_restored_and_methods_stay_marked():
    out = _run(
        "import overrides\n"
        "real = sys.modules['overrides.overrides']\n"
        "from lancedb.db import LanceDBConnection\n"
        "print(overrides.override is real.override, LanceDBConnection.table_names.__override__)\n"
    )
    assert out == ["True", "True"]


def test_pandas_still_imports_for_whoever_asks_after():
    out = _run(
        "import pyarrow as pa\n"
        "frame = pa.table({'x': [1, 2]}).to_pandas()\n"
        "print(type(frame).__name__, int(frame['x'].sum()))\n"
    )
    assert out == ["DataFrame", "3"]


def test_a_database_written_and_searched_through_the_deferred_import(tmp_path):
    out = _run(
        "import asyncio\n"
        "async def main():\n"
        f"    db = await lancedb.connect_async({str(tmp_path / 'x.lancedb')!r})\n"
        "    table = await db.create_table('t', data=[{'vector': [1.0, 0.0], 'text': 'a'}, "
        "{'vector': [0.0, 1.0], 'text': 'b'}])\n"
        "    rows = await table.query().nearest_to([0.0, 1.0]).limit(1).to_list()\n"
        "    print(rows[0]['text'], 'pandas' in sys.modules)\n"
        "asyncio.run(main())\n"
    )
    assert out == ["b", "False"]


_EMPTY_PARTITIONS = (
    "import asyncio, random\n"
    "from lancedb.index import IvfSq\n"
    "async def main():\n"
    "    db = await lancedb.connect_async(sys.argv[1])\n"
    "    rng = random.Random(0)\n"
    "    rows = lambda start, n: [{'id': start + i, 'vector': [rng.gauss(0, 1) for _ in range(8)]} for i in range(n)]\n"
    "    table = await db.create_table('t', data=rows(0, 600))\n"
    "    await table.create_index('vector', config=IvfSq(num_partitions=32))\n"
    "    await table.add(rows(1000, 3))\n"
    "    (await table.to_lance()).optimize.optimize_indices(num_indices_to_merge=0)\n"
    "    print(await table.count_rows())\n"
    "asyncio.run(main())\n"
)


def _index_a_small_write(tmp_path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import os

    full_env = {k: v for k, v in os.environ.items() if k != "LANCE_LOG"} | env
    return subprocess.run(
        [sys.executable, "-c", PRELUDE + _EMPTY_PARTITIONS, str(tmp_path / "x.lancedb")],
        capture_output=True, text=True, timeout=120, env=full_env,
    )


def test_indexing_a_small_write_does_not_warn_once_per_empty_partition(tmp_path):
    done = _index_a_small_write(tmp_path, {})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["603"]
    assert "is empty" not in done.stderr


def test_a_users_own_lance_log_setting_is_kept(tmp_path):
    done = _index_a_small_write(tmp_path, {"LANCE_LOG": "warn"})
    assert done.returncode == 0, done.stderr
    assert "is empty, skipping" in done.stderr
