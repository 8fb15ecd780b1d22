"""Requests per second of the capstone chapter page against a trivial view, side by side.

    .venv/bin/python bench/chapter_page.py [--runs 5] [--seconds 3] [--concurrency 4]
                                           [--workers 2] [--port 8103] [--attempts 50]

Prepares a database of its own under ``var/bench-courses`` (migrate, collectstatic, the demo
course), starts ``python -m gunicorn bench.chapter_page:application`` on loopback with
production settings (``DEBUG=0``), then alternates the two targets for ``--runs`` rounds and
prints every round, the medians, the spread (min–max) and the ratio of the medians. The quality
bar is a ratio of at least 0.3. ``DATABASE_URL`` / ``REDIS_URL`` are passed through if set.

Then the same for a signed-in learner with progress (``--attempts`` answers on every chapter,
labels checked, the capstone passed), through their session cookie: the capstone and the
dashboard against ``/bench/trivial-user/``, a view that loads ``request.user`` (the session and
user queries) and answers with the email; the bar is 0.5×.

This module is also the WSGI application gunicorn serves: the site's own URLs plus
``/bench/trivial/`` and ``/bench/trivial-user/``. Those URLs exist only here, never in the site.
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
DASHBOARD = "/courses/dashboard/"
TRIVIAL = "/bench/trivial/"
TRIVIAL_USER = "/bench/trivial-user/"
LEARNER_SETUP = """
import os
from django.contrib.auth import get_user_model
from importlib import import_module
from django.conf import settings
SessionStore = import_module(settings.SESSION_ENGINE).SessionStore
from django.utils import timezone
from courses.models import Chapter, ChapterProgress, QuizAttempt
attempts = int(os.environ["BENCH_ATTEMPTS"])
user, _ = get_user_model().objects.get_or_create(
    email="bench-learner@example.com", defaults={"username": "bench-learner"}
)
QuizAttempt.objects.filter(user=user).delete()
for chapter in Chapter.objects.all():
    questions = list(chapter.questions.all())
    for n in range(attempts):
        question = questions[n % len(questions)]
        choice = question.choices.all()[n % question.choices.count()]
        QuizAttempt.objects.create(
            user=user, question=question, choice=choice, correct=choice.is_correct
        )
    ChapterProgress.objects.update_or_create(
        user=user, chapter=chapter, defaults={"finished_at": timezone.now()}
    )
session = SessionStore()
session["_auth_user_id"] = str(user.pk)
session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
session["_auth_user_hash"] = user.get_session_auth_hash()
session.create()
print(session.session_key)
"""


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

    def trivial_user(request: HttpRequest) -> HttpResponse:
        return HttpResponse(getattr(request.user, "email", "") or "anonymous")

    globals()["urlpatterns"] = [
        path(TRIVIAL.strip("/") + "/", trivial),
        path(TRIVIAL_USER.strip("/") + "/", trivial_user),
        *site_urlpatterns,
    ]
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


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
        capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout


def _get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
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


def measure(
    port: int,
    path: str,
    *,
    seconds: float,
    concurrency: int,
    headers: dict[str, str] | None = None,
) -> float:
    """Requests per second with ``concurrency`` clients for ``seconds``; non-200 fails."""
    result = run_load(port, [path], seconds=seconds, threads=concurrency, headers=headers)
    bad = {status: n for status, n in result.statuses.items() if status != 200}
    if bad or result.errors:
        raise RuntimeError(f"bad responses for {path}: {bad}, {result.errors} errors")
    return result.rps


def compare(
    port: int,
    targets: dict[str, str],
    baseline: str,
    *,
    runs: int,
    seconds: float,
    concurrency: int,
    headers: dict[str, str] | None = None,
) -> dict[str, list[float]]:
    """Alternate the targets for ``runs`` rounds (order flipped each round); rps per target."""
    for path in targets.values():  # warm every worker's caches
        measure(port, path, seconds=1.0, concurrency=concurrency, headers=headers)
    results: dict[str, list[float]] = {name: [] for name in targets}
    names = list(targets)
    for run in range(1, runs + 1):
        for name in names if run % 2 else names[::-1]:
            results[name].append(
                measure(port, targets[name], seconds=seconds, concurrency=concurrency,
                        headers=headers)
            )  # fmt: skip
        print(
            f"run {run}: " + "   ".join(f"{n} {results[n][-1]:7.1f} req/s" for n in names),
            flush=True,
        )
    return results


def report(results: dict[str, list[float]], baseline: str, bar: float) -> bool:
    base = statistics.median(results[baseline])
    ok = True
    for name, values in results.items():
        line = (
            f"  {name:22} median {statistics.median(values):7.1f} req/s "
            f"(min {min(values):.1f}, max {max(values):.1f})"
        )
        if name != baseline:
            ratio = statistics.median(values) / base
            ok &= ratio >= bar
            line += f"   {ratio:.2f}× (target ≥ {bar:.1f}) {'PASS' if ratio >= bar else 'FAIL'}"
        print(line)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8103)
    parser.add_argument("--attempts", type=int, default=50, help="answers per chapter")
    args = parser.parse_args()

    env = _env(args.port)
    Path(env["VAR_DIR"]).mkdir(parents=True, exist_ok=True)
    print(
        f"preparing {env['VAR_DIR']}: migrate, collectstatic, demo course, a learner …", flush=True
    )
    _manage(env, "migrate", "--no-input")
    _manage(env, "collectstatic", "--no-input")
    _manage(env, "load_content")
    session = _manage({**env, "BENCH_ATTEMPTS": str(args.attempts)}, "shell", "-c", LEARNER_SETUP)
    cookie = {"Cookie": f"sessionid={session.strip().splitlines()[-1]}"}

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
    common = {"runs": args.runs, "seconds": args.seconds, "concurrency": args.concurrency}
    try:
        _wait_ready(args.port, server)
        status, body = _get(args.port, CHAPTER)
        if status != 200 or b"Check yourself" not in body:
            raise RuntimeError(f"the chapter page answered {status}")
        status, who = _get(args.port, TRIVIAL_USER, cookie)
        if who != b"bench-learner@example.com":
            raise RuntimeError(f"the learner's session did not sign in: {status} {who[:80]!r}")
        print(
            f"gunicorn, {args.workers} sync workers, {args.concurrency} clients, "
            f"{args.seconds:g} s per measurement, chapter page {len(body) // 1024} KiB",
            flush=True,
        )
        print("\nanonymous reader")
        anonymous = compare(
            args.port, {"trivial view": TRIVIAL, "chapter": CHAPTER}, "trivial view", **common
        )
        print(f"\nsigned-in learner, {args.attempts} answers per chapter")
        signed_in = compare(
            args.port,
            {"trivial view + user": TRIVIAL_USER, "chapter": CHAPTER, "dashboard": DASHBOARD},
            "trivial view + user",
            headers=cookie,
            **common,
        )
    finally:
        server.terminate()
        server.wait(20)

    print("\nanonymous reader (target ≥ 0.3×)")
    ok = report(anonymous, "trivial view", 0.3)
    print("signed-in learner (target ≥ 0.5×)")
    ok &= report(signed_in, "trivial view + user", 0.5)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
