"""What describing pictures costs per picture (docs/pictures.md, "Cache, failures and cost").

    python bench/pictures.py [--pictures 32] [--latency-ms 0 50] [--json]

The vision model is the tests' scripted endpoint on 127.0.0.1
(tests/ingester/vision_server.py), so the figures are haiku's own overhead
per picture (PNG to data URL, the HTTP round trip, reading the answer, the
cache write) plus the latency the endpoint is told to add, at concurrency 1
and 4; then the cost of a picture found in the cache. A real model adds its
own seconds per picture on top, divided by the concurrency it can serve.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "tests" / "ingester"))

from vision_server import VisionServer  # noqa: E402

from haiku.core.config.models import PictureModelConfig  # noqa: E402
from haiku.ingester.pipeline.describe import PictureDescriber, VisionModel  # noqa: E402
from haiku.ingester.pipeline.description_cache import DescriptionCache  # noqa: E402


def pictures(count: int) -> dict[str, bytes]:
    from PIL import Image

    out = {}
    for i in range(count):
        buffer = io.BytesIO()
        Image.new("RGB", (400, 300), (i % 256, (7 * i) % 256, 99)).save(buffer, format="PNG")
        out[f"#/pictures/{i}"] = buffer.getvalue()
    return out


async def measure(server: VisionServer, images: dict[str, bytes], concurrency: int, cache: Path) -> dict[str, float]:
    config = PictureModelConfig(base_url=server.base_url, name="bench", concurrency=concurrency)
    describer = PictureDescriber(VisionModel(config), DescriptionCache(cache))
    try:
        started = time.perf_counter()
        first = await describer.describe(images)
        asked = time.perf_counter() - started
        started = time.perf_counter()
        again = await describer.describe(images)
        cached = time.perf_counter() - started
    finally:
        await describer.aclose()
    assert len(first.descriptions) == len(images) and again.asked == 0
    return {"ms_per_picture": 1000 * asked / len(images), "cached_ms_per_picture": 1000 * cached / len(images)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pictures", type=int, default=32)
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[0.0, 50.0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    images = pictures(args.pictures)
    rows = []
    server = VisionServer()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for latency in args.latency_ms:
                server.delay_s = latency / 1000
                for concurrency in (1, 4):
                    cache = Path(tmp) / f"cache-{latency}-{concurrency}.db"
                    figures = await measure(server, images, concurrency, cache)
                    rows.append({"latency_ms": latency, "concurrency": concurrency, **figures})
    finally:
        server.close()
    if args.json:
        print(json.dumps({"pictures": args.pictures, "rows": rows}, indent=2))
        return
    print(f"{args.pictures} pictures of 400x300 px")
    print("endpoint latency | concurrency | ms per picture | ms per cached picture")
    for row in rows:
        print(
            f"{row['latency_ms']:>13.0f} ms | {row['concurrency']:>11} | {row['ms_per_picture']:>14.2f} | "
            f"{row['cached_ms_per_picture']:>21.3f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
