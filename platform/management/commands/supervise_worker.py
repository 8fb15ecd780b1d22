"""``manage.py supervise_worker [options] [-- celery worker options]``: a Celery worker that
comes back when it exits (see platform/supervise.py)."""

from __future__ import annotations

import argparse

from django.core.management.base import BaseCommand

from platform.supervise import Supervisor, celery_worker_command


class Command(BaseCommand):
    help = "Run a Celery worker (with beat) and restart it whenever it exits, with backoff."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--concurrency", type=int, default=2)
        parser.add_argument("--loglevel", default="INFO")
        parser.add_argument("--no-beat", action="store_true", help="run without embedded beat")
        parser.add_argument("--min-backoff", type=float, default=1.0)
        parser.add_argument("--max-backoff", type=float, default=30.0)
        parser.add_argument("--stop-timeout", type=float, default=20.0)
        parser.add_argument(
            "worker_args", nargs=argparse.REMAINDER, help="after --: more celery worker options"
        )

    def handle(self, *args, **options) -> None:
        extra = [a for a in options["worker_args"] if a != "--"]
        worker_args = [
            f"--concurrency={options['concurrency']}",
            f"--loglevel={options['loglevel']}",
            *([] if options["no_beat"] else ["--beat"]),
            *extra,
        ]
        supervisor = Supervisor(
            celery_worker_command(worker_args),
            min_backoff=options["min_backoff"],
            max_backoff=options["max_backoff"],
            stop_timeout=options["stop_timeout"],
        )
        supervisor.run()
