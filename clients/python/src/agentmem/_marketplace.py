"""client.marketplace: public skills of every author (search, get, install, fork, report, appeal, terms)."""

from __future__ import annotations

from typing import Any, Callable, List, Optional

from ._call import Call
from ._json import from_json, to_json
from .types import (
    AppealResult,
    InstallSkillResult,
    MarketplaceSearchResult,
    MarketplaceSkill,
    MarketplaceTerms,
    PublishSkillResult,
    ReportReason,
    ReportSkillResult,
)

BASE = "/api/v1/agent/marketplace"


class Marketplace:
    def __init__(self, send: Callable[[Call[Any]], Any]) -> None:
        self._send = send

    def search(
        self,
        query: Optional[str] = None,
        *,
        tags: Optional[List[str]] = None,
        sort: Optional[str] = None,
        limit: Optional[int] = None,
        page_token: Optional[str] = None,
    ) -> MarketplaceSearchResult:
        """Semantic search when `query` is given, otherwise by `sort` (popular or new)."""
        body = to_json(dict(query=query, tags=tags, sort=sort, limit=limit, page_token=page_token))
        return self._send(Call("POST", f"{BASE}/search", lambda d: from_json(MarketplaceSearchResult, d), body))

    def get(self, id: Optional[str] = None, *, slug: Optional[str] = None, author_handle: Optional[str] = None) -> MarketplaceSkill:
        """A public skill with its SKILL.md body, by id or by slug and author handle."""
        body = to_json(dict(id=id, slug=slug, author_handle=author_handle))
        return self._send(Call("POST", f"{BASE}/get", lambda d: from_json(MarketplaceSkill, d["skill"]), body))

    def install(self, id: str) -> InstallSkillResult:
        """Installs a public skill as your private, read-only copy."""
        return self._send(Call("POST", f"{BASE}/install", lambda d: from_json(InstallSkillResult, d), {"id": id}))

    def fork(self, id: str, *, slug: Optional[str] = None, name: Optional[str] = None) -> PublishSkillResult:
        """Forks a public skill: the fork is public for good, with the original in its lineage."""
        body = to_json(dict(id=id, slug=slug, name=name))
        return self._send(Call("POST", f"{BASE}/fork", lambda d: from_json(PublishSkillResult, d), body))

    def report(self, id: str, *, reason: ReportReason, message: Optional[str] = None) -> ReportSkillResult:
        body = to_json(dict(id=id, reason=reason, message=message))
        return self._send(Call("POST", f"{BASE}/report", lambda d: from_json(ReportSkillResult, d), body))

    def appeal(self, id: str, *, message: str) -> AppealResult:
        """Appeals the takedown of your own removed skill (one pending appeal at a time)."""
        body = {"id": id, "message": message}
        return self._send(Call("POST", f"{BASE}/appeal", lambda d: from_json(AppealResult, d), body))

    def terms(self) -> MarketplaceTerms:
        return self._send(Call("POST", f"{BASE}/terms", lambda d: from_json(MarketplaceTerms, d), {}))
