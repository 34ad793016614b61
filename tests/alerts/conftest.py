"""Fixtures of the alert tests: a JSON webhook and an SMTP server on 127.0.0.1."""

from __future__ import annotations

import pytest
from aiosmtpd.controller import Controller

from tests.helpers.receivers import Mailbox, Receiver, free_port


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.stop()


@pytest.fixture
def smtp_server():
    mailbox = Mailbox()
    controller = Controller(mailbox, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield controller, mailbox
    controller.stop()
