"""client.recall(...) and its audit trail (client.recall.trace, client.recall.traces); client.stats()."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ._call import Call
from ._json import from_json, to_json
from .types import (
    MemoryType,
    RecallResult,
    RecallTrace,
    RecallTracePage,
    SearchMode,
    Severity,
    Stats,
    UsageHistory,
)


class Recall:
    def __init__(self, send: Callable[[Call[Any]], Any]) -> None:
        self._send = send

    def __call__(
        self,
        query: str,
        *,
        mode: Optional[SearchMode] = None,
        limit: Optional[int] = None,
        containers: Optional[List[str]] = None,
        types: Optional[List[MemoryType]] = None,
        tags: Optional[List[str]] = None,
        severity: Optional[Severity] = None,
        metadata: Optional[Dict[str, Any]] = None,
        min_confidence: Optional[float] = None,
        threshold: Optional[float] = None,
        max_tokens: Optional[int] = None,
        created_after: Optional[str] = None,
        created_before: Optional[str] = None,
        valid_at: Optional[str] = None,
        include_receipt: Optional[bool] = None,
        include_expired: Optional[bool] = None,
        include_shadowed: Optional[bool] = None,
    ) -> RecallResult:
        """The memories most relevant to `query`; `mode` is semantic, keyword or hybrid (the default)."""
        body = to_json(
            dict(
                query=query, search_mode=mode, limit=limit, containers=containers, types=types, tags=tags,
                severity=severity, metadata=metadata, min_confidence=min_confidence, threshold=threshold,
                max_tokens=max_tokens, created_after=created_after, created_before=created_before, valid_at=valid_at,
                include_receipt=include_receipt, include_expired=include_expired, include_shadowed=include_shadowed,
            )
        )
        return self._send(Call("POST", "/api/v1/agent/recall", lambda d: from_json(RecallResult, d), body))

    def trace(self, trace_id: str) -> RecallTrace:
        """The audit record of one recall (its id is `result.meta.trace_id`)."""
        return self._send(Call("GET", f"/api/v1/agent/recall/traces/{trace_id}", lambda d: from_json(RecallTrace, d)))

    def traces(
        self,
        *,
        container: Optional[str] = None,
        created_after: Optional[str] = None,
        created_before: Optional[str] = None,
        page_size: Optional[int] = None,
        page_token: Optional[str] = None,
    ) -> RecallTracePage:
        params = {
            "container": container, "createdAfter": created_after, "createdBefore": created_before,
            "pageSize": page_size, "pageToken": page_token,
        }
        return self._send(Call("GET", "/api/v1/agent/recall/traces", lambda d: from_json(RecallTracePage, d), params=params))


class StatsResource:
    def __init__(self, send: Callable[[Call[Any]], Any]) -> None:
        self._send = send

    def __call__(self) -> Stats:
        """Usage and plan limits; does not count against quota."""
        return self._send(Call("GET", "/api/v1/agent/stats", lambda d: from_json(Stats, d)))

    def history(self) -> UsageHistory:
        return self._send(Call("GET", "/api/v1/agent/stats/history", lambda d: from_json(UsageHistory, d)))
