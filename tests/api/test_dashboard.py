"""The dashboard in real headless Chromium: load it, run a tool from the form, watch the result, open it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from executables.browser.browser import CHROMIUM_ARGS
from tests.conftest import ROOT, ApiProc
from toolfleet.settings import get_settings

ARTIFACTS = ROOT / "tests" / "artifacts"


@pytest.fixture(scope="module")
def page() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=get_settings().chromium_path, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 1400})
        yield page
        browser.close()


def test_dashboard_runs_a_tool_and_shows_the_record(page, api: ApiProc, internal_worker) -> None:  # type: ignore[no-untyped-def]
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(api.url + "/")
    page.wait_for_selector("body[data-ready='1']", timeout=20_000)
    assert page.title() == "toolfleet"

    diag = page.locator(".tool[data-tool='diag']")
    assert "available" in diag.locator(".badge").inner_text()
    assert "runs on: testhost" in diag.inner_text()
    secretive = page.locator(".tool[data-tool='secretive']").inner_text()
    assert "TF_TEST_TOKEN" in secretive or "vaulthost" in secretive

    diag.locator("button", has_text="run").click()
    page.select_option("#run-action", "echo")
    page.fill("#run-params input[name='message']", '{"hello": "dashboard"}')
    page.click("#run-submit")
    page.wait_for_selector("#run-result .status-succeeded", timeout=20_000)
    result = page.inner_text("#run-result")
    assert "diag.echo" in result and '"hello": "dashboard"' in result and "@testhost" in result

    page.select_option("#run-action", "fail")
    page.fill("#run-params input[name='message']", "shown in red")
    page.click("#run-submit")
    page.wait_for_selector("#run-result .status-failed", timeout=20_000)
    assert "ExecutableError: shown in red" in page.inner_text("#run-result")

    page.select_option("#run-action", "sleep")
    page.click("#run-submit")  # `seconds` left empty: the API's 422 is shown, nothing runs
    page.wait_for_selector("#run-result .error", timeout=20_000)
    assert "seconds" in page.inner_text("#run-result") and "required" in page.inner_text("#run-result")

    first_row = page.locator("#exec-table tbody tr").first
    first_row.wait_for()
    first_row.click()
    page.wait_for_selector("#exec-detail .status", timeout=10_000)
    assert "diag." in page.inner_text("#exec-detail")

    page.fill("#discover-q", "run a shell command")
    page.click("#discover-form button")
    page.wait_for_selector("#discover-results li")
    assert page.locator("#discover-results li").first.inner_text().startswith("terminal")

    page.locator(".tool[data-tool='diag'] button", has_text="source").click()
    page.locator("#source-code", has_text="def _sleep").wait_for(timeout=10_000)
    assert "executables.internal.diag" in page.inner_text("#source-title")
    page.click("#source-dialog form button")

    assert "internal" in page.inner_text("#worker-table")
    flower = page.get_attribute("#flower-link", "href")
    assert flower and flower.startswith("http://") and flower.endswith(":5555")
    ARTIFACTS.mkdir(exist_ok=True)
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)
    assert Path(ARTIFACTS / "dashboard.png").stat().st_size > 10_000
    assert errors == []


def test_dashboard_reviews_a_plan_and_edits_a_runtime_tool(page, api: ApiProc, internal_worker) -> None:  # type: ignore[no-untyped-def]
    import httpx

    with httpx.Client(base_url=api.url, timeout=30) as c:
        plan = c.post("/api/plans", json={"goal": "dashboard review", "review": "before_each_block", "blocks": [
            {"call_tool": "diag", "action": "echo", "params": {"message": "from the dashboard"}}]}).json()
        c.delete("/api/form/tools/dash_tool")
        code = "def run(action, params):\n    return {'v': 1} if action == 'go' else None\n"
        assert c.post("/api/form/tools", json={"name": "dash_tool", "category": "internal", "actions": ["go"],
                                               "code": code}).status_code == 201
    page.goto(api.url + "/?view=plans#plans")  # a new document, not just a new hash
    page.wait_for_selector("body[data-ready='1']", timeout=20_000)
    page.locator(f"#plan-table tr[data-id='{plan['plan_id']}']").click()
    page.locator("#plan-detail .plan-state", has_text="REVIEW").wait_for(timeout=10_000)
    page.click("#plan-detail button.approve")
    page.locator("#plan-detail .plan-state", has_text="DONE").wait_for(timeout=20_000)
    assert "from the dashboard" in page.inner_text("#plan-detail")

    page.locator(".tool[data-tool='dash_tool'] button", has_text="edit").click()
    page.fill("#source-edit", "def run(action, params):\n    return {'v': 2} if action == 'go' else None\n")
    page.click("#source-save")
    page.locator("#source-message", has_text="version 2").wait_for(timeout=20_000)
    page.fill("#source-edit", "import os\ndef run(action, params):\n    return os.getcwd() if action == 'go' else 1\n")
    page.click("#source-save")
    page.locator("#source-message", has_text="import-not-allowed").wait_for(timeout=20_000)
    page.click("#source-dialog form button")
    with httpx.Client(base_url=api.url, timeout=30) as c:
        assert c.get("/api/form/tools/dash_tool").json()["version"] == 2
