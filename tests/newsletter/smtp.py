"""A real SMTP server for tests: aiosmtpd on a free local port, recording what it accepts.

``refuse`` maps an address to the answers its RCPT gets, in order ("451 …" temporarily, "550 …"
permanently); once the list is used up the address is accepted (a 5xx entry can repeat
forever with ``always=True``).
"""

from __future__ import annotations

import email
import socket
import threading
from collections import Counter
from dataclasses import dataclass, field
from email import policy

from aiosmtpd.controller import Controller

from tests.support.waiting import wait_until


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Received:
    rcpt: list[str]
    content: bytes

    def message(self):
        return email.message_from_bytes(self.content, policy=policy.default)


@dataclass
class Recorder:
    keep_content: bool = True
    received: list[Received] = field(default_factory=list)
    refuse: dict[str, list[str]] = field(default_factory=dict)
    refuse_always: dict[str, str] = field(default_factory=dict)
    count: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        key = address.lower()
        with self.lock:
            if key in self.refuse_always:
                return self.refuse_always[key]
            plan = self.refuse.get(key)
            if plan:
                return plan.pop(0)
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            self.count += 1
            if self.keep_content:
                self.received.append(Received(list(envelope.rcpt_tos), envelope.content))
            else:
                self.received.append(Received(list(envelope.rcpt_tos), b""))
        return "250 Message accepted for delivery"

    def recipients(self) -> Counter:
        with self.lock:
            return Counter(addr.lower() for item in self.received for addr in item.rcpt)

    def wait_for(self, count: int, timeout: float = 60) -> None:
        wait_until(
            lambda: self.count >= count,
            timeout=timeout,
            interval=0.02,
            message=lambda: f"only {self.count} of {count} messages arrived",
        )


class SmtpServer:
    def __init__(self, recorder: Recorder | None = None) -> None:
        self.recorder = recorder or Recorder()
        self.port = free_port()
        self.controller = Controller(self.recorder, hostname="127.0.0.1", port=self.port)

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def start(self) -> SmtpServer:
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()

    def restart(self) -> None:
        """Listen again on the same port, with the same recorder (after ``stop``)."""
        self.controller = Controller(self.recorder, hostname="127.0.0.1", port=self.port)
        self.controller.start()
