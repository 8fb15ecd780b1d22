"""Benchmark the widget endpoints and the kernels.

1. Requests per second of each widget fragment (htmx GET) under gunicorn on loopback, side by side
   with the same endpoint with the computation removed. The baseline is a second gunicorn serving
   bench/widgets_baseline.py: the same site, whose widget registry hands back numbers computed
   once per worker process for each input. A baseline request goes through the same middleware
   and form validation, builds the same tables and SVG and renders the same template; only the
   numpy work is gone. Rounds alternate compute / baseline per endpoint so that background load
   hits both alike.
2. The time of each kernel at its largest allowed input, in this process.

Run from the repository root:  .venv/bin/python bench/widgets.py [--rounds 5] [--seconds 2]
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
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._load import Gunicorn, run_load, summary  # noqa: E402

BASELINE_APP = "bench.widgets_baseline:application()"

# (label, path, query): defaults as a learner first sees them, and the largest allowed inputs.
ENDPOINTS = [
    ("attention (defaults: 4 tokens, d=8)", "/widgets/attention/", {}),
    (
        "attention (largest: 64 tokens, d_k=d_v=256, causal)",
        "/widgets/attention/",
        {"tokens": 64, "d_k": 256, "d_v": 256, "causal": "on", "temperature": 0.5},
    ),
    ("softmax (defaults)", "/widgets/softmax/", {}),
    ("softmax (largest: 32 logits)", "/widgets/softmax/", {"logits": " ".join(["1.5"] * 32)}),
    ("norms (defaults)", "/widgets/norms/", {}),
    (
        "norms (largest: 256 entries)",
        "/widgets/norms/",
        {"x": " ".join(str(i) for i in range(256))},
    ),
    ("adam (defaults: 200 steps)", "/widgets/adam/", {}),
    ("adam (largest: 5,000 steps, θ⁴)", "/widgets/adam/", {"steps": 5000, "objective": "quartic"}),
    ("rope (defaults)", "/widgets/rope/", {}),
    (
        "rope (largest: d_k=256, 16 positions)",
        "/widgets/rope/",
        {"d_k": 256, "heads": 1, "positions": " ".join(str(i * 7) for i in range(16))},
    ),
    ("cross-entropy (defaults: 3 logits)", "/widgets/cross-entropy/", {}),
    (
        "cross-entropy (largest: 32 logits)",
        "/widgets/cross-entropy/",
        {"logits": " ".join(str(i / 4) for i in range(32)), "target": 31},
    ),
    ("multi-head (defaults: 5 tokens, d_model=8, 2 heads)", "/widgets/multi-head/", {}),
    (
        "multi-head (largest: 16 tokens, d_model=256, 8 heads, causal)",
        "/widgets/multi-head/",
        {"tokens": 16, "d_model": 256, "heads": 8, "causal": "on"},
    ),
    ("adamw (defaults: 200 steps)", "/widgets/adamw/", {}),
    (
        "adamw (largest: 5,000 steps, θ⁴)",
        "/widgets/adamw/",
        {"steps": 5000, "objective": "quartic"},
    ),
]


def kernel_cases():
    import numpy as np

    from courses.widgets import kernels

    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(3, 64, 256))
    mask = kernels.causal_mask(64)
    x = rng.normal(size=256)
    q = rng.normal(size=(16, 256))
    W = rng.normal(size=(4, 256, 256)) / 16.0
    mask16 = kernels.causal_mask(16)
    return {
        "attention 64×256, causal": lambda: kernels.attention(Q, K, V, mask=mask, temperature=0.5),
        "softmax 256 logits, τ=0.01": lambda: kernels.softmax(x, temperature=0.01),
        "layer_norm 256": lambda: kernels.layer_norm(x, gamma=2.0, beta=1.0),
        "rms_norm 256": lambda: kernels.rms_norm(x, gamma=2.0),
        "adam 5,000 steps (θ²)": lambda: kernels.adam(lambda t: 2.0 * t, 3.0, 5000, lr=0.1),
        "adam 5,000 steps (θ⁴)": lambda: kernels.adam(lambda t: 4.0 * t * t * t, 3.0, 5000, lr=0.1),
        "rope 64×256": lambda: kernels.rope(Q),
        "rope 16 positions × 256": lambda: kernels.rope(q, np.arange(16) * 7.0),
        "log_softmax 256 logits": lambda: kernels.log_softmax(x),
        "cross_entropy 64×256": lambda: kernels.cross_entropy(Q, np.arange(64)),
        "multi_head_attention 16×256, 8 heads, causal": lambda: kernels.multi_head_attention(
            Q[:16], *W, heads=8, mask=mask16
        ),
        "adamw 5,000 steps (θ⁴)": lambda: kernels.adamw(
            lambda t: 4.0 * t * t * t, 3.0, 5000, lr=0.1, weight_decay=0.1
        ),
    }


def bench_kernels(runs: int, calls: int) -> list[tuple[str, list[float]]]:
    out = []
    for name, fn in kernel_cases().items():
        fn()  # warm up
        per_run = []
        for _ in range(runs):
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            per_run.append(1000 * (time.perf_counter() - t0) / calls)
        out.append((name, per_run))
    return out


def fetch(port: int, url: str, headers: dict[str, str]) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", url, headers=headers)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def prepare(var_dir: Path, env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input", "-v0"],
        cwd=ROOT,
        env={**os.environ, **env},
        check=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--port", type=int, default=8111, help="the baseline uses port + 1")
    parser.add_argument("--skip-http", action="store_true")
    args = parser.parse_args()

    print("Kernels at their largest allowed input")
    print("(ms per call; median (min–max) of 7 runs, each the mean of 20 calls)")
    for name, times in bench_kernels(runs=7, calls=20):
        mark = "ok" if statistics.median(times) < 5 else "OVER 5 ms"
        print(f"  {name:<32} {summary([t for t in times]):>24}  {mark}")
    if args.skip_http:
        return

    var_dir = ROOT / "var" / "bench-widgets"
    env = {
        "VAR_DIR": str(var_dir),
        "DATABASE_URL": f"sqlite:///{var_dir / 'db.sqlite3'}",
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(60),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "0",
        "LOG_LEVEL": "ERROR",
        "REDIS_URL": "",
        # Two workers on two cores: one BLAS thread each, so small matmuls never oversubscribe.
        "OPENBLAS_NUM_THREADS": "1",
    }
    prepare(var_dir, env)
    base_port = args.port + 1
    print(
        f"\nWidget fragments under gunicorn (2 gthread workers × 4 threads) on 127.0.0.1:"
        f"{args.port}, the baseline on :{base_port}; {args.threads} keep-alive client threads, "
        f"{args.seconds:g} s per run, {args.rounds} rounds; requests/s median (min–max)"
    )
    print(f"  {'endpoint':<52} {'compute':>22} {'baseline':>22} {'ratio':>16}")
    ok = True
    htmx = {"HX-Request": "true"}
    with Gunicorn(args.port, env=env), Gunicorn(base_port, env=env, app=BASELINE_APP):
        for label, path, query in ENDPOINTS:
            url = path + ("?" + urlencode(query) if query else "")
            # Both servers must answer with the same fragment, or the comparison is void.
            if fetch(args.port, url, htmx) != fetch(base_port, url, htmx):
                print(f"  {label}: the baseline's answer differs from the real one")
                ok = False
            # Warm both (imports, the baseline's numbers) before timing.
            for port in (args.port, base_port):
                run_load(port, [url], seconds=0.5, threads=2, headers=htmx)
            real, base = [], []
            statuses = set()
            for _ in range(args.rounds):
                for port, bucket in ((args.port, real), (base_port, base)):
                    r = run_load(
                        port, [url], seconds=args.seconds, threads=args.threads, headers=htmx
                    )
                    statuses |= set(r.statuses)
                    bucket.append(r.rps)
            ratios = [a / b for a, b in zip(real, base, strict=True)]
            ratio = statistics.median(ratios)
            ok &= ratio >= 0.8
            flag = "" if statuses == {200} else f"  statuses {sorted(statuses)}!"
            print(
                f"  {label:<52} {summary(real):>22} {summary(base):>22} "
                f"{ratio:>5.2f} ({min(ratios):.2f}–{max(ratios):.2f}){flag}"
            )
    print("\nall endpoints ≥ 0.8× baseline" if ok else "\nSOME ENDPOINT BELOW 0.8× baseline")


if __name__ == "__main__":
    main()
