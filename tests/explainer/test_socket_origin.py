"""The learner's socket opens only from the app's own pages: same host and port, or APP_ORIGIN exactly."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator

from explainer.socket_origin import origin_allowed

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize(
    ("origin", "host", "allowed"),
    [
        ("http://127.0.0.1:8000", "127.0.0.1:8000", True),
        ("http://localhost", "localhost", True),
        ("https://localhost", "localhost", True),  # a proxy that ends TLS: port 443 either way
        ("http://127.0.0.1:8001", "127.0.0.1:8000", False),  # another port of the same host shares its cookies
        ("http://localhost:8000", "127.0.0.1:8000", False),
        ("http://evil.example", "evil.example", False),  # not an allowed host
        ("null", "127.0.0.1:8000", False),  # a sandboxed page
        (None, "127.0.0.1:8000", False),
        ("http://127.0.0.1:99999", "127.0.0.1:8000", False),  # not a port at all
    ],
)
def test_a_socket_is_allowed_only_from_its_own_origin(origin, host, allowed):
    assert origin_allowed(origin, host) is allowed


def test_with_app_origin_set_only_that_origin_may_open_a_socket(settings):
    settings.APP_ORIGIN = "https://explainer.example"
    settings.PAGE_ORIGIN = "https://pages.explainer.example"
    settings.ALLOWED_HOSTS = ["explainer.example", "pages.explainer.example"]
    assert origin_allowed("https://explainer.example", "explainer.example")
    assert not origin_allowed("https://explainer.example:8443", "explainer.example")
    assert not origin_allowed("https://pages.explainer.example", "explainer.example")
    assert not origin_allowed("http://explainer.example", "explainer.example")


async def test_the_asgi_app_refuses_a_socket_from_another_port(session_key):
    from explainer.asgi import application

    def socket(origin: bytes):
        headers = [(b"origin", origin), (b"host", b"127.0.0.1:8000"), (b"cookie", f"sessionid={session_key}".encode())]
        return WebsocketCommunicator(application, "/ws/explain/", headers=headers)

    elsewhere = socket(b"http://127.0.0.1:8001")
    connected, _ = await elsewhere.connect(timeout=10)
    assert not connected
    home = socket(b"http://127.0.0.1:8000")
    connected, _ = await home.connect(timeout=10)  # the first socket of the process waits for the library index
    assert connected
    assert (await home.receive_json_from(timeout=5))["type"] == "hello"
    await home.disconnect()
