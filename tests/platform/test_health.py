"""/healthz reports the database, the cache and the broker."""

import json
import socket

import pytest

from tests.platform.helpers import fetch
from tests.support.celery_worker import worker_env


@pytest.mark.django_db
def test_healthz_all_services_answer(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "failing": [],
        "database": "ok",
        "cache": "ok",
        "broker": "ok",
    }
    assert "no-cache" in response["Cache-Control"]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.django_db(transaction=True)
def test_healthz_names_the_broker_when_redis_is_closed():
    env = worker_env({"REDIS_URL": f"redis://127.0.0.1:{_closed_port()}/0"})
    response = fetch("/healthz", env, secure=False)
    body = json.loads(response["body"])
    assert response["status"] == 503
    assert body["status"] == "down"
    assert "broker" in body["failing"]
    assert body["broker"].startswith("down: ")
    assert body["database"] == "ok"
