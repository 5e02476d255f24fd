"""Command-line latency: whole `haiku-rag` processes, as an analyst waits for them.

    python bench/cli.py [--scifact PATH] [--runs N] [--before PATH] [--json PATH] [--prepare-only]

SciFact (every document one chunk, vectors from the shared embedding cache)
is loaded once into one database, into three and into 25 (bench/search.py's layouts,
cached under ``bench/.cache/search``). Then every command below runs as a
fresh process ``--runs`` times (at least 7), the commands interleaved in a
shuffled order each round so that load falls on all of them alike:

- baselines: ``python -c pass`` and ``python -c "import torch"``;
- ``--help``, ``list``, ``info``, ``tag list``, ``history``, ``settings`` on one database;
- ``search`` hybrid, fts and vector over one database and over three, hybrid and fts over 25 (limit 10),
  each run with the next SciFact query, so the full-text word counts kept between
  processes are only reused where real queries share words (the counts cache is
  emptied when the run starts);
- ``inspect`` over three databases, in a pseudo-terminal of 40 x 140, until its
  first screen is painted (the databases, and the first one's documents listed:
  its hidden ``--exit-after-first-screen`` option quits right after that paint).

``--only NAME`` (repeatable) times just those rows (with the baselines); their figures go
to ``bench/results/cli-only.json`` unless ``--json`` says otherwise, and docs/benchmarks.md
is left as it is (its table holds one full run).

Each checkout's packages are compiled to bytecode first, as an installation
has them (``compile_sources``). ``--before PATH`` times the same commands from another checkout of the
repository (its ``packages/*/src`` put first on ``PYTHONPATH``, the same
virtual environment) in the same rounds: the figures before a change, measured
beside the figures after it. Each command's top imports (``-X importtime``,
cumulative) are recorded once.

Results: ``bench/results/cli.json`` and the "## Command-line latency" section of
docs/benchmarks.md. Run alone: the benchmark takes ``/tmp/haiku_bench.lock``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.beir import load_beir  # noqa: E402
from bench.bench_lock import alone  # noqa: E402
from bench.docs_section import write_section  # noqa: E402
from bench.embed_cache import EmbeddingCache  # noqa: E402
from bench.search import build_layout  # noqa: E402

CACHE = REPO / "bench" / ".cache"
RESULTS = REPO / "bench" / "results" / "cli.json"
DOCS = REPO / "docs" / "benchmarks.md"
SECTION = "## Command-line latency"
LAYOUTS = {"single": 1, "split3": 3, "split25": 25}
# What the issue asks of each command (median seconds on an idle 2-core machine).
TARGETS = {
    "search hybrid, 3 dbs": 1.5,
    "search fts, 3 dbs": 1.0,
    "list": 0.7,
    "info": 0.7,
    "tag list": 0.7,
    "history": 0.7,
    "settings": 0.7,
    "--help": 0.7,
    "inspect, 3 dbs": 1.0,
}
# Rows that run in a pseudo-terminal (a screen needs one) and are left out of the import report.
IN_TERMINAL = {"inspect, 3 dbs"}


WHY = """Where the time went, and what took it away (docs/cli.md, "Start-up time"): before, a
search imported torch and transformers and loaded the model to embed one query (3-10 s on this
machine), and every command imported LanceDB whole (about a second: the generated REST namespace
client, pandas, the `overrides` package's import-time checks, the user-defined-function API, every
hosted embedding function). Now a query is embedded by the model's ONNX export on onnxruntime (one
thread, no weight prepacking, the graph optimised at export: the session opens in about 0.01 s
instead of 0.15 s), LanceDB is imported without those parts, the file-lock library loads only for a
write, `--help` imports no database library, structlog loads only when
something is logged at a shown level, the federated full-text word counts are kept between
processes, and a search counts a query word no stored chunk spells with a query instead of loading the
full-text tokenizer (the `lance` package, 50-100 ms; nearly every SciFact query has such a word in one
of three databases). Every checkout is timed with its packages' bytecode written, as an installation
has it. What remains is Python, typer, pydantic, pyarrow/numpy, LanceDB itself and the ONNX session.
`inspect` spent about 0.45 s of its run leaving: Textual's wait for its input thread, which looks at
its stop flag between 0.1 s waits on the terminal and then waits 0.1 s more (0.1-0.2 s), and the
interpreter freeing every module it loaded (about 0.2 s); the inspector's driver no longer waits for
that thread, and every command ends with `os._exit` once it has closed what it opened
(`haiku.core.process_exit`: `list` and the searches 0.07-0.09 s faster). Its chunk
counts, one read of a document's chunks per document started before the first paint, are one read of
the chunks' document ids per thousand documents, after it. What remains is Python, typer, pyarrow,
LanceDB, Textual's import (0.1 s) and its first layout and paints (0.15 s)."""


def log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def write_config(root: Path, parts: int) -> Path:
    """A configuration file naming the layout's databases (as bench/search.py builds them)."""
    databases = "\n".join(f"    part{i:02d}: {root / f'part{i:02d}.lancedb'}" for i in range(parts))
    path = root / "cli.yaml"
    path.write_text(
        f"storage:\n  data_dir: {root / 'data'}\n  auto_vacuum: false\nlancedb:\n  databases:\n{databases}\n",
        encoding="utf-8",
    )
    return path


async def prepare(scifact: Path) -> tuple[dict[str, Path], list[str]]:
    """The layouts' configuration files and the judged queries (embedding what the cache lacks)."""
    from haiku.core.config import AppConfig
    from haiku.core.embedders import get_embedder

    dataset = load_beir(scifact)
    docs = dataset.corpus
    embedder = get_embedder(AppConfig())
    cache = EmbeddingCache.for_embedder(CACHE / "embeddings", embedder)
    embedded = cache.fill([d.full_text for d in docs], embedder.encode, log=log)  # type: ignore[attr-defined]
    log(f"embedded {embedded} new texts ({len(cache)} cached)")
    from haiku.core.store import STORE_SCHEMA_VERSION

    configs = {}
    for name, parts in LAYOUTS.items():
        # Per store schema: a checkout timed with --before reads databases its own code wrote.
        root = CACHE / "search" / f"scifact-{len(docs)}-schema{STORE_SCHEMA_VERSION}" / name
        await build_layout(root, parts, docs, cache)
        configs[name] = write_config(root, parts)
    return configs, list(dataset.judged_queries.values())


def prepare_for(code_root: Path, scifact: Path) -> dict[str, Path]:
    """The layouts as another checkout's code writes them (this script, run with its PYTHONPATH)."""
    done = subprocess.run(
        [sys.executable, __file__, "--scifact", str(scifact), "--prepare-only", "--print-configs"],
        env=_env(code_root), capture_output=True, text=True, timeout=7200,
    )
    if done.returncode != 0:
        raise RuntimeError(f"preparing the databases of {code_root} failed: {done.stderr.strip()[-800:]}")
    return {name: Path(path) for name, path in json.loads(done.stdout.strip().splitlines()[-1]).items()}


def commands(haiku_rag: str, configs: dict[str, Path]) -> dict[str, list[str]]:
    one = ["--config", str(configs["single"]), "--db-name", "part00"]
    three = ["--config", str(configs["split3"])]
    many = ["--config", str(configs["split25"])]
    python = sys.executable
    table: dict[str, list[str]] = {
        "python -c pass": [python, "-c", "pass"],
        "python -c 'import torch'": [python, "-c", "import torch"],
        "--help": [haiku_rag, "--help"],
        "list": [haiku_rag, *one, "list", "--limit", "10"],
        "info": [haiku_rag, *one, "info"],
        "tag list": [haiku_rag, *one, "tag", "list"],
        "history": [haiku_rag, *one, "history"],
        "settings": [haiku_rag, *one, "settings"],
    }
    for search_type in ("hybrid", "fts", "vector"):
        table[f"search {search_type}, 1 db"] = [haiku_rag, *one, "search", "-s", search_type, "-l", "10", "{query}"]
        table[f"search {search_type}, 3 dbs"] = [haiku_rag, *three, "search", "-s", search_type, "-l", "10", "{query}"]
    for search_type in ("hybrid", "fts"):  # whole-process federation: 25 databases against 3
        table[f"search {search_type}, 25 dbs"] = [haiku_rag, *many, "search", "-s", search_type, "-l", "10", "{query}"]
    table["inspect, 3 dbs"] = [haiku_rag, *three, "inspect", "--exit-after-first-screen"]
    return table


def _env(code_root: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HAIKU_RAG_")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    if code_root is not None:
        sources = [str(p) for p in sorted((code_root / "packages").glob("*/src"))]
        env["PYTHONPATH"] = os.pathsep.join([*sources, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _timed_in_terminal(argv: list[str], env: dict[str, str], rows: int = 40, columns: int = 140) -> float:
    """A screen's whole process, in a pseudo-terminal whose output is read (and dropped) as it comes."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    tail = bytearray()

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            tail[:] = (tail + data)[-2000:]

    started = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
    os.close(slave)
    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        code = process.wait(timeout=300)
    finally:
        seconds = time.perf_counter() - started
        reader.join(timeout=2)
        os.close(master)
    if code != 0:
        raise RuntimeError(f"{' '.join(argv[:6])} … exited {code}: {tail.decode(errors='replace')[-400:]}")
    return seconds


def _timed(argv: list[str], env: dict[str, str], *, terminal: bool = False) -> float:
    if terminal:
        return _timed_in_terminal(argv, env)
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:6])} … exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return seconds


def top_imports(argv: list[str], env: dict[str, str], count: int = 5) -> list[list[Any]]:
    """The heaviest imports a command makes: (module, cumulative ms), top-level imports only."""
    program = [sys.executable, "-X", "importtime", "-m", "haiku.rag.cli", *argv[1:]]
    if not argv[0].endswith("haiku-rag"):
        program = [argv[0], "-X", "importtime", *argv[1:]]
    done = subprocess.run(program, env=env, capture_output=True, text=True, timeout=300)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|", 2)
        if name.startswith(" ") and not name.startswith("   "):  # depth 0: one space after the bar
            if cumulative.strip().isdigit():
                rows.append([name.strip(), round(int(cumulative) / 1000, 1)])
    return sorted(rows, key=lambda row: -row[1])[:count]


def measure(tables: dict[str, dict[str, list[str]]], queries: list[str], runs: int,
            sides: dict[str, dict[str, str]], data_dirs: list[Path]) -> dict[str, dict[str, list[float]]]:
    for data in data_dirs:  # counts kept between processes start empty, for every side alike
        shutil.rmtree(data / "cache", ignore_errors=True)
    times: dict[str, dict[str, list[float]]] = {side: {name: [] for name in tables[side]} for side in sides}
    order = [(side, name) for side in sides for name in tables[side]]
    rng = random.Random(7)
    for run in range(runs):
        rng.shuffle(order)
        query = queries[run % len(queries)]
        for side, name in order:
            if side != next(iter(sides)) and name.startswith("python"):
                continue  # baselines do not depend on the checkout
            argv = [query if part == "{query}" else part for part in tables[side][name]]
            times[side][name].append(_timed(argv, sides[side], terminal=name in IN_TERMINAL))
        log(f"round {run + 1}/{runs} done (load {os.getloadavg()[0]:.1f})")
    return times


def summarise(times: dict[str, dict[str, list[float]]]) -> dict[str, dict[str, dict[str, float]]]:
    return {
        side: {
            name: {"median_s": round(statistics.median(values), 3), "min_s": round(min(values), 3),
                   "max_s": round(max(values), 3), "runs": len(values)}
            for name, values in by_name.items() if values
        }
        for side, by_name in times.items()
    }


def report(summary: dict[str, Any], meta: dict[str, Any], imports: dict[str, list[list[Any]]]) -> str:
    after = summary["after"]
    before = summary.get("before", {})
    torch_s = after["python -c 'import torch'"]["median_s"]
    lines = [
        SECTION,
        "",
        f"`python bench/cli.py` ({meta['date']}; {meta['cpus']} cores, load {meta['load_start']} at the start and "
        f"{meta['load_end']} at the end; {meta['runs']} runs of each command, interleaved in shuffled rounds; "
        f"SciFact, {meta['documents']} documents, one chunk each; search limit 10, each run with the next judged "
        "query). Whole-process wall time, median seconds"
        + (f"; \"before\" is commit {meta['before_commit']}, timed in the same rounds." if before else "."),
        "",
        "| command | now | before | target |" if before else "| command | now | target |",
        "|---|---:|---:|---|" if before else "|---|---:|---|",
    ]
    for name, figures in after.items():
        target = TARGETS.get(name)
        verdict = ""
        if target is not None:
            verdict = f"≤ {target} s {'✓' if figures['median_s'] <= target else '✗'}"
        if name == "search hybrid, 3 dbs":
            verdict += f"; ≤ ½ import torch ({torch_s / 2:.2f} s) {'✓' if figures['median_s'] <= torch_s / 2 else '✗'}"
        old = before.get(name, {}).get("median_s")
        row = f"| `{name}` | {figures['median_s']:.2f} |"
        if before:
            row += f" {old:.2f} |" if old is not None else " — |"
        lines.append(f"{row} {verdict} |")
    lines += ["", WHY]
    lines += ["", "Heaviest imports of each command now (cumulative ms, top-level imports):", ""]
    for name, rows in imports.items():
        lines.append(f"- `{name}`: " + ", ".join(f"{module} {ms:.0f}" for module, ms in rows))
    return "\n".join(lines) + "\n"


def only(table: dict[str, list[str]], names: list[str], parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """The rows ``--only`` names, beside the baselines; every row when it names none."""
    unknown = [name for name in names if name not in table]
    if unknown:
        parser.error(f"--only: no row named {', '.join(map(repr, unknown))}; the rows are {', '.join(table)}")
    if not names:
        return table
    return {name: argv for name, argv in table.items() if name in names or name.startswith("python")}


def compile_sources(root: Path) -> None:
    """Write the bytecode of a checkout's packages, as an installation has it.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (this machine sets it), Python never
    writes the bytecode of an editable install, so every process would compile
    the haiku sources again (about 0.1 s of a command here): not what a user's
    installation costs (``make install`` compiles them once).
    """
    sources = [str(p) for p in sorted((root / "packages").glob("*/src"))]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *sources], check=True, capture_output=True)


def _commit(root: Path) -> str:
    done = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scifact", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--before", type=Path, default=None, help="another checkout, timed beside this one")
    parser.add_argument("--json", type=Path, default=RESULTS)
    parser.add_argument("--prepare-only", action="store_true", help="build the databases and stop")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    parser.add_argument("--print-configs", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="time only this row (repeatable), beside the baselines")
    parser.add_argument("--render-only", action="store_true", help="rewrite the docs section from --json, measure nothing")
    args = parser.parse_args()
    if args.runs < 7:
        parser.error("--runs must be at least 7")
    if args.only:
        args.no_docs = True
        if args.json == RESULTS:
            args.json = RESULTS.with_name("cli-only.json")

    if args.render_only:
        saved = json.loads(args.json.read_text(encoding="utf-8"))
        text = report(saved["results"], saved["meta"], saved["imports"])
        print(text)
        if not args.no_docs:
            write_section(DOCS, text)
        return
    configs, queries = asyncio.run(prepare(args.scifact))
    if args.prepare_only:
        if args.print_configs:
            print(json.dumps({name: str(path) for name, path in configs.items()}))
        return
    haiku_rag = str(Path(sys.executable).parent / "haiku-rag")
    table = only(commands(haiku_rag, configs), args.only, parser)
    sides = {"after": _env(None)}
    tables = {"after": table}
    data_dirs = [p.parent / "data" for p in configs.values()]
    if args.before is not None:
        sides["before"] = _env(args.before.resolve())
        before_configs = prepare_for(args.before.resolve(), args.scifact)
        tables["before"] = only(commands(haiku_rag, before_configs), args.only, parser)
        data_dirs += [p.parent / "data" for p in before_configs.values()]
    for root in [REPO, *([args.before.resolve()] if args.before is not None else [])]:
        compile_sources(root)
    with alone(log):
        load_start = " ".join(f"{x:.1f}" for x in os.getloadavg())
        subprocess.run([haiku_rag, "download-models"], env=sides["after"], capture_output=True, timeout=600)
        times = measure(tables, queries, args.runs, sides, data_dirs)
        load_end = " ".join(f"{x:.1f}" for x in os.getloadavg())
        imports = {
            name: top_imports([q if q != "{query}" else queries[0] for q in argv], sides["after"])
            for name, argv in table.items() if not name.startswith("python") and name not in IN_TERMINAL
        }
    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "cpus": os.cpu_count(),
        "load_start": load_start,
        "load_end": load_end,
        "runs": args.runs,
        "documents": len(load_beir(args.scifact).corpus),
        "commit": _commit(REPO),
        "before_commit": _commit(args.before) if args.before is not None else None,
    }
    summary = summarise(times)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"meta": meta, "results": summary, "imports": imports}, indent=2) + "\n")
    text = report(summary, meta, imports)
    print(text)
    if not args.no_docs:
        write_section(DOCS, text)


if __name__ == "__main__":
    main()
