"""`feed_github`: issues, pull requests and notifications through the GitHub REST API."""

from __future__ import annotations

import json
import os
from typing import Any, Literal

from pydantic import Field

from executables._http import fetch
from registry.definitions import Params, ToolSpec
from toolfleet.errors import ExecutableError

_REPO = Field(pattern=r"^[\w.-]+/[\w.-]+$", description="owner/name")


class ListParams(Params):
    repo: str = _REPO
    state: Literal["open", "closed", "all"] = "open"
    limit: int = Field(default=30, ge=1, le=100)


class NotificationsParams(Params):
    all: bool = Field(default=False, description="include notifications already read")
    limit: int = Field(default=30, ge=1, le=50)


TOOL = ToolSpec(
    "feed_github",
    "GitHub feed: list a repository's issues and pull requests, and your notifications (GITHUB_TOKEN; "
    "GITHUB_API_URL for GitHub Enterprise)",
    "feeds",
    actions={"issues": ListParams, "pull_requests": ListParams, "notifications": NotificationsParams},
    requires_env=["GITHUB_TOKEN"],
    weight=0.6,
    time_limit_s=60,
)


def _get(path: str, params: dict[str, Any]) -> Any:
    base = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    headers = {"authorization": f"Bearer {os.environ['GITHUB_TOKEN']}", "accept": "application/vnd.github+json",
               "x-github-api-version": "2022-11-28"}
    response, body = fetch(f"{base}{path}", timeout_s=30, max_bytes=20_000_000, headers=headers, params=params)
    if response.status_code >= 400:
        try:
            message = json.loads(body).get("message", "")
        except ValueError:
            message = body[:200].decode("utf-8", "replace")
        raise ExecutableError(f"GitHub answered HTTP {response.status_code} for {path}: {message}")
    return json.loads(body)


def _user(u: dict[str, Any] | None) -> str | None:
    return u.get("login") if u else None


def _issues(p: ListParams) -> dict[str, Any]:
    data = _get(f"/repos/{p.repo}/issues", {"state": p.state, "per_page": p.limit})
    issues = [{"number": i["number"], "title": i["title"], "state": i["state"], "url": i.get("html_url"),
               "author": _user(i.get("user")), "labels": [lb["name"] for lb in i.get("labels", [])],
               "comments": i.get("comments"), "updated_at": i.get("updated_at")}
              for i in data if "pull_request" not in i]
    return {"repo": p.repo, "issues": issues}


def _pulls(p: ListParams) -> dict[str, Any]:
    data = _get(f"/repos/{p.repo}/pulls", {"state": p.state, "per_page": p.limit})
    return {"repo": p.repo, "pull_requests": [
        {"number": x["number"], "title": x["title"], "state": x["state"], "url": x.get("html_url"),
         "author": _user(x.get("user")), "draft": x.get("draft", False), "updated_at": x.get("updated_at")}
        for x in data]}


def _notifications(p: NotificationsParams) -> dict[str, Any]:
    data = _get("/notifications", {"all": str(p.all).lower(), "per_page": p.limit})
    return {"notifications": [
        {"id": n["id"], "reason": n.get("reason"), "unread": n.get("unread"),
         "title": n.get("subject", {}).get("title"), "type": n.get("subject", {}).get("type"),
         "repo": n.get("repository", {}).get("full_name"), "updated_at": n.get("updated_at")} for n in data]}


run = TOOL.dispatcher({"issues": _issues, "pull_requests": _pulls, "notifications": _notifications})
