"""client.memories: create (one or a batch), get, update, delete, versions, shadowed, list."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from ._call import Call
from ._json import from_json, to_json
from .types import (
    CreateMemoriesResult,
    DeleteMemoryResult,
    Memory,
    MemoryInput,
    MemoryPage,
    MemorySource,
    MemoryType,
    Severity,
)

BASE = "/api/v1/agent/memories"


class Memories:
    def __init__(self, send: Callable[[Call[Any]], Any]) -> None:
        self._send = send

    def create(
        self,
        content: Optional[str] = None,
        type: Optional[MemoryType] = None,
        *,
        memories: Optional[Sequence[Union[MemoryInput, Dict[str, Any]]]] = None,
        containers: Optional[List[str]] = None,
        tags: Optional[List[str]] = None,
        source: Optional[MemorySource] = None,
        valid_from: Optional[str] = None,
        valid_until: Optional[str] = None,
        metadata: Optional[Dict[str, Any]] = None,
        confidence: Optional[float] = None,
        severity: Optional[Severity] = None,
        supersedes: Optional[List[str]] = None,
        dry_run: Optional[bool] = None,
        idempotency_key: Optional[str] = None,
    ) -> CreateMemoriesResult:
        """Stores one memory (`content`, `type`, ...) or a batch (`memories=[...]`, all or nothing).

        `idempotency_key` makes a retry of the same request within 24 hours return the first answer."""
        body = to_json(
            dict(
                memories=memories, content=content, type=type, containers=containers, tags=tags, source=source,
                valid_from=valid_from, valid_until=valid_until, metadata=metadata, confidence=confidence,
                severity=severity, supersedes=supersedes, dry_run=dry_run,
            )
        )
        headers = {"idempotency-key": idempotency_key} if idempotency_key else None
        return self._send(Call("POST", BASE, lambda d: from_json(CreateMemoriesResult, d), body, headers=headers))

    def get(self, id: str, *, version: Optional[int] = None) -> Memory:
        return self._send(Call("GET", f"{BASE}/{id}", lambda d: from_json(Memory, d), params={"version": version}))

    def update(
        self,
        id: str,
        *,
        content: Optional[str] = None,
        type: Optional[MemoryType] = None,
        containers: Optional[List[str]] = None,
        tags: Optional[List[str]] = None,
        source: Optional[MemorySource] = None,
        valid_from: Optional[str] = None,
        valid_until: Optional[str] = None,
        metadata: Optional[Dict[str, Any]] = None,
        confidence: Optional[float] = None,
        severity: Optional[Severity] = None,
        supersedes: Optional[List[str]] = None,
    ) -> Memory:
        """Changes the given fields; the memory gets a new version."""
        body = to_json(
            dict(
                content=content, type=type, containers=containers, tags=tags, source=source, valid_from=valid_from,
                valid_until=valid_until, metadata=metadata, confidence=confidence, severity=severity,
                supersedes=supersedes,
            )
        )
        return self._send(Call("PATCH", f"{BASE}/{id}", lambda d: from_json(Memory, d), body))

    def delete(self, id: str) -> DeleteMemoryResult:
        return self._send(Call("DELETE", f"{BASE}/{id}", lambda d: from_json(DeleteMemoryResult, d)))

    def versions(self, id: str) -> List[Memory]:
        """Every version of a memory, oldest first."""
        parse = lambda d: [from_json(Memory, m) for m in d.get("versions", [])]  # noqa: E731
        return self._send(Call("GET", f"{BASE}/{id}/versions", parse))

    def shadowed(self, id: str, *, page_size: Optional[int] = None, page_token: Optional[str] = None) -> MemoryPage:
        """The older memories that this one shadows."""
        params = {"pageSize": page_size, "pageToken": page_token}
        return self._send(Call("GET", f"{BASE}/{id}/shadowed", lambda d: from_json(MemoryPage, d), params=params))

    def list(
        self,
        *,
        containers: Optional[List[str]] = None,
        types: Optional[List[MemoryType]] = None,
        tags: Optional[List[str]] = None,
        state: Optional[str] = None,
        created_after: Optional[str] = None,
        created_before: Optional[str] = None,
        metadata: Optional[Dict[str, Any]] = None,
        page_size: Optional[int] = None,
        page_token: Optional[str] = None,
    ) -> MemoryPage:
        """One page of memories, filtered; pass `page_token=page.next_page_token` for the next one."""
        params = {
            "containers": containers, "types": types, "tags": tags, "state": state,
            "createdAfter": created_after, "createdBefore": created_before,
            "metadata": json.dumps(metadata) if metadata is not None else None,
            "pageSize": page_size, "pageToken": page_token,
        }
        return self._send(Call("GET", BASE, lambda d: from_json(MemoryPage, d), params=params))
