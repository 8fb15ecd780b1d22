"""Requests per second of the capstone chapter page against a trivial view, side by side.

    .venv/bin/python bench/chapter_page.py [--runs 5] [--seconds 3] [--concurrency 4]
                                           [--workers 2] [--port 8103]

Prepares a database of its own under ``var/bench-courses`` (migrate, collectstatic, the demo
course), starts ``python -m gunicorn bench.chapter_page:application`` on loopback with
production settings (``DEBUG=0``), then alternates the two targets for ``--runs`` rounds and
prints every round, the medians, the spread (min–max) and the ratio of the medians. The quality
bar is a ratio of at least 0.3. ``DATABASE_URL`` / ``REDIS_URL`` are passed through if set.

This module is also the WSGI application gunicorn serves: the site's own URLs plus
``/bench/trivial/``, a view that answers "ok" through the same middleware. That URL exists only
here, never in the site.
"""

from __future__ import annotations

import argparse
import http.client
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._load import run_load  # noqa: E402

CHAPTER = "/courses/reading-ml-papers/capstone-three-equations/"
TRIVIAL = "/bench/trivial/"


# --- the WSGI application (imported by gunicorn) --------------------------------------------


def _application():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "platform.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.wsgi import get_wsgi_application
    from django.http import HttpRequest, HttpResponse
    from django.urls import path

    from platform.urls import urlpatterns as site_urlpatterns

    def trivial(request: HttpRequest) -> HttpResponse:
        return HttpResponse("ok", content_type="text/plain")

    globals()["urlpatterns"] = [path(TRIVIAL.strip("/") + "/", trivial), *site_urlpatterns]
    settings.ROOT_URLCONF = __name__
    return get_wsgi_application()


if __name__ != "__main__":
    application = _application()


# --- the runner -----------------------------------------------------------------------------


def _env(port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("VAR_DIR", str(ROOT / "var" / "bench-courses"))
    env.update(
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="127.0.0.1",
        SITE_URL=f"http://127.0.0.1:{port}",
        SECURE_SSL_REDIRECT="0",
        LOG_LEVEL="WARNING",
        PYTHONPATH=str(ROOT),
    )
    return env


def _manage(env: dict[str, str], *args: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True
    )


def _get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _wait_ready(port: int, server: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("gunicorn exited before it answered")
        try:
            if _get(port, TRIVIAL)[0] == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError("gunicorn did not answer")


def measure(port: int, path: str, *, seconds: float, concurrency: int) -> float:
    """Requests per second with ``concurrency`` clients for ``seconds``; non-200 fails."""
    result = run_load(port, [path], seconds=seconds, threads=concurrency)
    bad = {status: n for status, n in result.statuses.items() if status != 200}
    if bad or result.errors:
        raise RuntimeError(f"bad responses for {path}: {bad}, {result.errors} errors")
    return result.rps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8103)
    args = parser.parse_args()

    env = _env(args.port)
    Path(env["VAR_DIR"]).mkdir(parents=True, exist_ok=True)
    print(f"preparing {env['VAR_DIR']}: migrate, collectstatic, demo course …", flush=True)
    _manage(env, "migrate", "--no-input")
    _manage(env, "collectstatic", "--no-input")
    _manage(env, "load_content")

    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "bench.chapter_page:application",
            f"--bind=127.0.0.1:{args.port}",
            f"--workers={args.workers}",
            "--log-level=warning",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    try:
        _wait_ready(args.port, server)
        status, body = _get(args.port, CHAPTER)
        if status != 200 or b"Check yourself" not in body:
            raise RuntimeError(f"the chapter page answered {status}")
        for path in (TRIVIAL, CHAPTER):  # warm every worker's caches
            measure(args.port, path, seconds=1.0, concurrency=args.concurrency)
        results: dict[str, list[float]] = {TRIVIAL: [], CHAPTER: []}
        print(
            f"gunicorn, {args.workers} sync workers, {args.concurrency} clients, "
            f"{args.seconds:g} s per measurement, chapter page {len(body) // 1024} KiB",
            flush=True,
        )
        for run in range(1, args.runs + 1):
            order = (TRIVIAL, CHAPTER) if run % 2 else (CHAPTER, TRIVIAL)
            for path in order:
                rps = measure(args.port, path, seconds=args.seconds, concurrency=args.concurrency)
                results[path].append(rps)
            print(
                f"run {run}: trivial {results[TRIVIAL][-1]:7.1f} req/s   "
                f"chapter {results[CHAPTER][-1]:7.1f} req/s",
                flush=True,
            )
    finally:
        server.terminate()
        server.wait(20)

    trivial, chapter = results[TRIVIAL], results[CHAPTER]
    ratio = statistics.median(chapter) / statistics.median(trivial)
    print(
        f"trivial view:  median {statistics.median(trivial):7.1f} req/s "
        f"(min {min(trivial):.1f}, max {max(trivial):.1f})"
    )
    print(
        f"chapter page:  median {statistics.median(chapter):7.1f} req/s "
        f"(min {min(chapter):.1f}, max {max(chapter):.1f})"
    )
    print(f"ratio of medians: {ratio:.2f} (target ≥ 0.30) {'PASS' if ratio >= 0.3 else 'FAIL'}")
    return 0 if ratio >= 0.3 else 1


if __name__ == "__main__":
    sys.exit(main())
