"""Bytes on the wire for a first view of the main pages, in Chromium, under gunicorn (DEBUG=0).

    .venv/bin/python bench/page_weight.py [--runs 5] [--port 8105] [--lighthouse]

Prepares a database of its own under ``var/bench-pages`` (migrate, collectstatic, the demo
content, a learner with progress on the capstone), serves ``platform.wsgi`` with production
settings, then for each page opens a fresh browser context (an empty cache, as a first visit)
and adds up what every response moved over the network: headers plus the body as encoded on the
wire (gzip for pages, precompressed files for static). Prints every run, the median and the
spread (min–max) per page and the target: the chapter at most 100 KB, other pages 60 KB.

With ``--lighthouse`` it also runs Lighthouse (npm ``lighthouse``, found in ``tools/node`` or on
PATH) against Debian's Chromium with its mobile defaults, ``--runs`` times per page, and prints
the median performance and accessibility scores and largest contentful paint (targets: ≥ 95,
100, ≤ 2.0 s). The dashboard and the review page are measured signed in, through the learner's
session cookie.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._load import Gunicorn  # noqa: E402

CHROMIUM = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
PAGES = {
    "home": ("/", 60),
    "chapter": ("/courses/reading-ml-papers/capstone-three-equations/", 100),
    "note": ("/notebook/scaled-dot-product-attention/", 60),
    "dashboard": ("/courses/dashboard/", 60),
    "review": ("/review/", 60),
    "search": ("/search/?q=softmax", 60),
}
SIGNED_IN = {"dashboard", "review"}
LEARNER_SETUP = """
from django.contrib.auth import get_user_model
from importlib import import_module
from django.conf import settings
SessionStore = import_module(settings.SESSION_ENGINE).SessionStore
from courses.models import Chapter, ChapterProgress, QuizAttempt
from django.utils import timezone
user, _ = get_user_model().objects.get_or_create(
    email="bench-learner@example.com", defaults={"username": "bench-learner"}
)
chapter = Chapter.objects.get(slug="capstone-three-equations")
for question in chapter.questions.all():
    choice = question.choices.filter(is_correct=True).first()
    QuizAttempt.objects.get_or_create(user=user, question=question, choice=choice, correct=True)
ChapterProgress.objects.update_or_create(
    user=user, chapter=chapter,
    defaults={"check_passed_at": timezone.now(), "finished_at": timezone.now()},
)
session = SessionStore()
session["_auth_user_id"] = str(user.pk)
session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
session["_auth_user_hash"] = user.get_session_auth_hash()
session.create()
print(session.session_key)
"""


def _env(port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("VAR_DIR", str(ROOT / "var" / "bench-pages"))
    env.update(
        DEBUG="0",
        SECRET_KEY=os.environ.get("BENCH_SECRET_KEY", secrets.token_urlsafe(50)),
        ALLOWED_HOSTS="127.0.0.1",
        SITE_URL=f"http://127.0.0.1:{port}",
        SECURE_SSL_REDIRECT="0",
        SECURE_HSTS_SECONDS="0",
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


def first_view_bytes(browser, base: str, path: str, session: str | None) -> tuple[int, dict]:
    """Bytes moved for one first view: every response's headers and encoded body."""
    context = browser.new_context()
    if session:
        context.add_cookies([{"name": "sessionid", "value": session, "url": base}])
    page = context.new_page()
    responses = []
    page.on("response", lambda response: responses.append(response))
    page.goto(base + path, wait_until="networkidle")
    total, parts = 0, {}
    for response in responses:
        sizes = response.request.sizes()
        moved = sizes["responseHeadersSize"] + sizes["responseBodySize"]
        total += moved
        name = response.url.removeprefix(base).split("?")[0] or "/"
        parts[name] = parts.get(name, 0) + moved
    context.close()
    return total, parts


def lighthouse(base: str, path: str, session: str | None) -> dict[str, float]:
    binary = ROOT / "tools" / "node" / "node_modules" / ".bin" / "lighthouse"
    command = str(binary) if binary.exists() else shutil.which("lighthouse")
    if not command:
        raise SystemExit("lighthouse not found: npm install lighthouse in tools/node")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        args = [
            command, base + path, "--output=json", f"--output-path={out}", "--quiet",
            "--only-categories=performance,accessibility",
            "--chrome-flags=--headless=new --no-sandbox --disable-background-networking "
            "--disable-component-update",
        ]  # fmt: skip
        if session:
            args.append("--extra-headers=" + json.dumps({"Cookie": f"sessionid={session}"}))
        for attempt in range(3):  # Lighthouse's trace sometimes misses the navigation start
            done = subprocess.run(args, env={**os.environ, "CHROME_PATH": CHROMIUM})
            if done.returncode == 0:
                break
            print(f"  lighthouse failed on {path} (attempt {attempt + 1}), again", flush=True)
        else:
            raise SystemExit(f"lighthouse failed three times on {path}")
        report = json.loads(out.read_text())
    return {
        "performance": report["categories"]["performance"]["score"] * 100,
        "accessibility": report["categories"]["accessibility"]["score"] * 100,
        "lcp": report["audits"]["largest-contentful-paint"]["numericValue"] / 1000,
    }


def _spread(values: list[float], fmt: str = "{:.1f}") -> str:
    median = fmt.format(statistics.median(values))
    return f"{median} ({fmt.format(min(values))}–{fmt.format(max(values))})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--port", type=int, default=8105)
    parser.add_argument("--lighthouse", action="store_true")
    parser.add_argument("--lighthouse-runs", type=int, default=None, help="default: --runs")
    parser.add_argument("--show-parts", action="store_true", help="bytes per response, run 1")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    env = _env(args.port)
    Path(env["VAR_DIR"]).mkdir(parents=True, exist_ok=True)
    print(f"preparing {env['VAR_DIR']}: migrate, collectstatic, demo content, a learner …")
    _manage(env, "migrate", "--no-input")
    _manage(env, "collectstatic", "--no-input")
    _manage(env, "load_demo")
    session = _manage(env, "shell", "-c", LEARNER_SETUP).strip().splitlines()[-1]
    base = f"http://127.0.0.1:{args.port}"
    weights: dict[str, list[float]] = {name: [] for name in PAGES}
    scores: dict[str, list[dict[str, float]]] = {name: [] for name in PAGES}
    failed = []
    with Gunicorn(args.port, env=env), sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-background-networking", "--disable-component-update"],
        )
        for run in range(1, args.runs + 1):
            line = []
            for name, (path, _limit) in PAGES.items():
                who = session if name in SIGNED_IN else None
                total, parts = first_view_bytes(browser, base, path, who)
                weights[name].append(total / 1024)
                line.append(f"{name} {total / 1024:6.1f} KB")
                if args.show_parts and run == 1:
                    for part, size in sorted(parts.items(), key=lambda kv: -kv[1]):
                        print(f"    {name}: {size / 1024:7.1f} KB  {part}")
            print(f"run {run}: " + "   ".join(line), flush=True)
        browser.close()
        if args.lighthouse:
            for name, (path, _limit) in PAGES.items():
                for _ in range(args.lighthouse_runs or args.runs):
                    who = session if name in SIGNED_IN else None
                    scores[name].append(lighthouse(base, path, who))
    print("\nfirst view, KB on the wire: median (min–max) over", args.runs, "runs")
    for name, (path, limit) in PAGES.items():
        median = statistics.median(weights[name])
        verdict = "PASS" if median <= limit else "FAIL"
        failed += [] if median <= limit else [name]
        print(f"  {name:10} {_spread(weights[name]):>24}   target ≤ {limit} KB  {verdict}  {path}")
    if args.lighthouse:
        print("\nLighthouse (mobile): median (min–max)")
        for name, runs in scores.items():
            perf = [r["performance"] for r in runs]
            a11y = [r["accessibility"] for r in runs]
            lcp = [r["lcp"] for r in runs]
            print(
                f"  {name:10} performance {_spread(perf, '{:.0f}')}  "
                f"accessibility {_spread(a11y, '{:.0f}')}  LCP {_spread(lcp, '{:.2f}')} s"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
