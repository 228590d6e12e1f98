"""`browser`: Playwright driving Chromium (Debian's, launched by path) with sessions kept per worker process.

A `session` keeps one page alive in this worker process between executions; pin the
steps of one session to the same worker with `target` (run browser workers with
concurrency 1, or give each its own --hostname). A `profile` keeps a persistent user-data
dir on this host, so cookies survive restarts. Idle sessions close after
TOOLFLEET_BROWSER_IDLE_S seconds (default 600).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field, HttpUrl

from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError, ToolTimeout
from toolfleet.settings import get_settings
from workers.context import save_artifact

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-quic", "--disable-sync", "--disable-dev-shm-usage"]
_SESSION = Field(default=None, pattern=r"^[\w.-]{1,100}$", description="keep the page alive under this name")
_TIMEOUT = Field(default=30, gt=0, le=300, description="seconds to wait")


class NavigateParams(Params):
    url: HttpUrl
    session: str | None = _SESSION
    profile: str | None = Field(default=None, pattern=r"^[\w.-]{1,100}$",
                                description="persistent user-data dir on this host (cookies survive restarts)")
    wait_until: Literal["load", "domcontentloaded", "networkidle", "commit"] = "load"
    timeout_s: float = _TIMEOUT


class SelectorParams(Params):
    selector: str = Field(min_length=1, description="a Playwright selector, e.g. 'text=Pricing' or '#submit'")
    session: str = Field(pattern=r"^[\w.-]{1,100}$")
    timeout_s: float = _TIMEOUT


class TypeParams(SelectorParams):
    text: str
    delay_ms: float = Field(default=0, ge=0, le=1000, description="pause between keys, for human-like typing")
    clear: bool = Field(default=False, description="empty the field first")


class PressParams(Params):
    key: str = Field(min_length=1, description="e.g. Enter, Tab, Control+A")
    selector: str | None = None
    session: str = Field(pattern=r"^[\w.-]{1,100}$")
    timeout_s: float = _TIMEOUT


class WaitForParams(Params):
    session: str = Field(pattern=r"^[\w.-]{1,100}$")
    selector: str | None = None
    state: Literal["attached", "detached", "visible", "hidden"] = "visible"
    url: str | None = Field(default=None, description="wait until the page URL matches this glob")
    timeout_s: float = _TIMEOUT


class PageParams(Params):
    """Read the session's page, or open `url` in a throwaway page when no session is given."""

    session: str | None = _SESSION
    url: HttpUrl | None = None
    timeout_s: float = _TIMEOUT


class ContentParams(PageParams):
    include_html: bool = False
    max_chars: int = Field(default=200_000, ge=100, le=5_000_000)


class ScreenshotParams(PageParams):
    full_page: bool = False
    selector: str | None = None
    name: str = Field(default="screenshot.png", pattern=r"^[\w.-]{1,100}\.png$")


class CloseParams(Params):
    session: str = Field(pattern=r"^[\w.-]{1,100}$")


TOOL = ToolSpec(
    "browser",
    "Browser automation with Chromium: navigate to web pages, click, type, press keys, wait for elements, "
    "read page content and links, take screenshots; sessions keep a page open between steps",
    "browser",
    actions={"navigate": NavigateParams, "click": SelectorParams, "type": TypeParams, "press": PressParams,
             "wait_for": WaitForParams, "get_content": ContentParams, "get_links": PageParams,
             "screenshot": ScreenshotParams, "close_session": CloseParams},
    weight=0.8,
    time_limit_s=300,
)


@dataclass
class _Session:
    context: Any
    page: Any
    profile: str | None
    last_used: float


_state: dict[str, Any] = {"pw": None, "browser": None, "pid": None}
_sessions: dict[str, _Session] = {}


def _playwright() -> Any:
    if _state["pid"] != os.getpid():  # a forked pool process starts its own
        _state.update(pw=None, browser=None, pid=os.getpid())
        _sessions.clear()
    if _state["pw"] is None:
        from playwright.sync_api import sync_playwright

        _state["pw"] = sync_playwright().start()
    return _state["pw"]


def _chromium_path() -> str:
    path = get_settings().chromium_path
    if not os.path.exists(path):
        raise ExecutableError(f"Chromium not found at {path}; install Debian's `chromium` package or set "
                              "TOOLFLEET_CHROMIUM_PATH")
    return path


def _browser() -> Any:
    if _state["browser"] is None or not _state["browser"].is_connected():
        _state["browser"] = _playwright().chromium.launch(executable_path=_chromium_path(), headless=True,
                                                          args=CHROMIUM_ARGS)
    return _state["browser"]


def _close_idle() -> None:
    idle = float(os.environ.get("TOOLFLEET_BROWSER_IDLE_S", "600"))
    now = time.monotonic()
    for name in [n for n, s in _sessions.items() if now - s.last_used > idle]:
        _close(name)


def _close(name: str) -> None:
    session = _sessions.pop(name)
    try:
        session.context.close()
    except Exception:  # already gone with its browser
        pass


def _new_context(profile: str | None) -> Any:
    if profile:
        folder = get_settings().state_path() / "browser-profiles" / profile
        folder.mkdir(parents=True, exist_ok=True)
        return _playwright().chromium.launch_persistent_context(
            str(folder), executable_path=_chromium_path(), headless=True, args=CHROMIUM_ARGS)
    return _browser().new_context()


def _session(name: str) -> _Session:
    session = _sessions.get(name)
    if session is None:
        known = ", ".join(sorted(_sessions)) or "none"
        raise ExecutableError(f"unknown session {name!r} on this worker (open sessions here: {known}); start it "
                              "with navigate, and pin every step of a session to one host with `target`")
    session.last_used = time.monotonic()
    return session


def _timeouts(fn: Any) -> Any:
    """Turn Playwright's errors into toolfleet's: a TimeoutError is `timed_out`, others `failed`."""

    def wrapper(p: Any) -> Any:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        _close_idle()
        try:
            return fn(p)
        except PlaywrightTimeout as exc:
            raise ToolTimeout(f"browser: {str(exc).splitlines()[0]}") from None
        except PlaywrightError as exc:
            raise ExecutableError(f"browser: {str(exc).splitlines()[0]}") from None

    return wrapper


def _navigate(p: NavigateParams) -> dict[str, Any]:
    if p.session:
        session = _sessions.get(p.session)
        if session is None:
            context = _new_context(p.profile)
            page = context.pages[0] if context.pages else context.new_page()
            session = _Session(context, page, p.profile, time.monotonic())
            _sessions[p.session] = session
        page = session.page
        session.last_used = time.monotonic()
        response = page.goto(str(p.url), wait_until=p.wait_until, timeout=p.timeout_s * 1000)
        return {"url": page.url, "title": page.title(), "status": response.status if response else None,
                "session": p.session}
    context = _new_context(p.profile)
    try:
        page = context.pages[0] if context.pages else context.new_page()
        response = page.goto(str(p.url), wait_until=p.wait_until, timeout=p.timeout_s * 1000)
        return {"url": page.url, "title": page.title(), "status": response.status if response else None}
    finally:
        context.close()


def _with_page(p: PageParams, read: Any) -> Any:
    if p.session:
        page = _session(p.session).page
        if p.url:
            page.goto(str(p.url), timeout=p.timeout_s * 1000)
        return read(page)
    if not p.url:
        raise ExecutableError("give a session (opened with navigate) or a url to open")
    context = _browser().new_context()
    try:
        page = context.new_page()
        page.goto(str(p.url), timeout=p.timeout_s * 1000)
        return read(page)
    finally:
        context.close()


def _click(p: SelectorParams) -> dict[str, Any]:
    page = _session(p.session).page
    page.click(p.selector, timeout=p.timeout_s * 1000)
    return {"clicked": p.selector, "url": page.url, "title": page.title()}


def _type(p: TypeParams) -> dict[str, Any]:
    page = _session(p.session).page
    locator = page.locator(p.selector).first
    if p.clear:
        locator.fill("", timeout=p.timeout_s * 1000)
    locator.press_sequentially(p.text, delay=p.delay_ms, timeout=p.timeout_s * 1000)
    return {"typed": len(p.text), "selector": p.selector}


def _press(p: PressParams) -> dict[str, Any]:
    page = _session(p.session).page
    if p.selector:
        page.press(p.selector, p.key, timeout=p.timeout_s * 1000)
    else:
        page.keyboard.press(p.key)
    return {"pressed": p.key, "url": page.url}


def _wait_for(p: WaitForParams) -> dict[str, Any]:
    page = _session(p.session).page
    if p.selector:
        page.wait_for_selector(p.selector, state=p.state, timeout=p.timeout_s * 1000)
    if p.url:
        page.wait_for_url(p.url, timeout=p.timeout_s * 1000)
    if not p.selector and not p.url:
        page.wait_for_load_state("load", timeout=p.timeout_s * 1000)
    return {"url": page.url, "title": page.title()}


def _get_content(p: ContentParams) -> dict[str, Any]:
    def read(page: Any) -> dict[str, Any]:
        text = page.inner_text("body") if page.query_selector("body") else ""
        text = re.sub(r"\n{3,}", "\n\n", text)
        out = {"url": page.url, "title": page.title(), "text": text[: p.max_chars],
               "truncated": len(text) > p.max_chars}
        if p.include_html:
            out["html"] = page.content()[: p.max_chars]
        return out

    return _with_page(p, read)


def _get_links(p: PageParams) -> dict[str, Any]:
    def read(page: Any) -> dict[str, Any]:
        links = page.eval_on_selector_all(
            "a[href]", "els => els.map(e => ({text: (e.innerText || '').trim(), href: e.href}))")
        return {"url": page.url, "links": links}

    return _with_page(p, read)


def _screenshot(p: ScreenshotParams) -> dict[str, Any]:
    def shoot(page: Any) -> dict[str, Any]:
        if p.selector:
            png = page.locator(p.selector).first.screenshot(timeout=p.timeout_s * 1000)
        else:
            png = page.screenshot(full_page=p.full_page, timeout=p.timeout_s * 1000)
        return {"url": page.url, "title": page.title(), "artifact": save_artifact(p.name, png, "image/png")}

    return _with_page(p, shoot)


def _close_session(p: CloseParams) -> dict[str, Any]:
    _session(p.session)
    _close(p.session)
    return {"closed": p.session}


run = TOOL.dispatcher({
    "navigate": _timeouts(_navigate), "click": _timeouts(_click), "type": _timeouts(_type),
    "press": _timeouts(_press), "wait_for": _timeouts(_wait_for), "get_content": _timeouts(_get_content),
    "get_links": _timeouts(_get_links), "screenshot": _timeouts(_screenshot),
    "close_session": _timeouts(_close_session),
})
