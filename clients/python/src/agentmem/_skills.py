"""client.skills: your own skills (create, get, search, list, update, deprecate, import, export, publish)."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from ._call import Call
from ._json import from_json, to_json
from ._skill_dir import read_skill_dir, write_skill_dir
from .types import (
    ImportSkillResult,
    Maturity,
    PublishSkillResult,
    SearchMode,
    Skill,
    SkillExport,
    SkillFile,
    SkillPage,
    SkillSearchResult,
)

BASE = "/api/v1/agent/skills"


def _skill(data: Any) -> Skill:
    return from_json(Skill, data["skill"])


class Skills:
    def __init__(self, send: Callable[[Call[Any]], Any]) -> None:
        self._send = send

    def create(
        self,
        *,
        name: str,
        description: str,
        content: str,
        slug: Optional[str] = None,
        tags: Optional[List[str]] = None,
        containers: Optional[List[str]] = None,
        maturity: Optional[Maturity] = None,
        license: Optional[str] = None,
        compatibility: Optional[str] = None,
        allowed_tools: Optional[List[str]] = None,
        metadata: Optional[Dict[str, Any]] = None,
        files: Optional[Sequence[SkillFile]] = None,
    ) -> Skill:
        body = to_json(
            dict(
                name=name, description=description, content=content, slug=slug, tags=tags, containers=containers,
                maturity=maturity, license=license, compatibility=compatibility, allowed_tools=allowed_tools,
                metadata=metadata, files=files,
            )
        )
        return self._send(Call("POST", BASE, _skill, body))

    def get(self, id: Optional[str] = None, *, slug: Optional[str] = None, version: Optional[int] = None) -> Skill:
        """One of your skills by id or slug (the latest version unless `version` is given)."""
        return self._send(Call("POST", f"{BASE}/get", _skill, to_json(dict(id=id, slug=slug, version=version))))

    def search(
        self,
        query: str,
        *,
        limit: Optional[int] = None,
        tags: Optional[List[str]] = None,
        maturity: Optional[List[Maturity]] = None,
        containers: Optional[List[str]] = None,
        include_deprecated: Optional[bool] = None,
        mode: Optional[SearchMode] = None,
    ) -> SkillSearchResult:
        body = to_json(
            dict(
                query=query, limit=limit, tags=tags, maturity=maturity, containers=containers,
                include_deprecated=include_deprecated, search_mode=mode,
            )
        )
        return self._send(Call("POST", f"{BASE}/search", lambda d: from_json(SkillSearchResult, d), body))

    def list(
        self,
        *,
        tags: Optional[List[str]] = None,
        maturity: Optional[List[Maturity]] = None,
        visibility: Optional[List[str]] = None,
        containers: Optional[List[str]] = None,
        source: Optional[List[str]] = None,
        include_deprecated: Optional[bool] = None,
        page_size: Optional[int] = None,
        page_token: Optional[str] = None,
    ) -> SkillPage:
        body = to_json(
            dict(
                tags=tags, maturity=maturity, visibility=visibility, containers=containers, source=source,
                include_deprecated=include_deprecated, page_size=page_size, page_token=page_token,
            )
        )
        return self._send(Call("POST", f"{BASE}/list", lambda d: from_json(SkillPage, d), body))

    def update(
        self,
        id: Optional[str] = None,
        *,
        slug: Optional[str] = None,
        expected_version: Optional[int] = None,
        name: Optional[str] = None,
        description: Optional[str] = None,
        content: Optional[str] = None,
        tags: Optional[List[str]] = None,
        containers: Optional[List[str]] = None,
        maturity: Optional[Maturity] = None,
        license: Optional[str] = None,
        compatibility: Optional[str] = None,
        allowed_tools: Optional[List[str]] = None,
        metadata: Optional[Dict[str, Any]] = None,
        files: Optional[Sequence[SkillFile]] = None,
        update_mask: Optional[str] = None,
    ) -> Skill:
        """Changes the given fields in place and bumps the version; `expected_version` guards against a
        concurrent update (version_conflict)."""
        body = to_json(
            dict(
                id=id, slug=slug, expected_version=expected_version, name=name, description=description,
                content=content, tags=tags, containers=containers, maturity=maturity, license=license,
                compatibility=compatibility, allowed_tools=allowed_tools, metadata=metadata, files=files,
                update_mask=update_mask,
            )
        )
        return self._send(Call("POST", f"{BASE}/update", _skill, body))

    def deprecate(
        self,
        id: Optional[str] = None,
        *,
        slug: Optional[str] = None,
        message: Optional[str] = None,
        replaced_by: Optional[str] = None,
    ) -> Skill:
        body = to_json(dict(id=id, slug=slug, message=message, replaced_by=replaced_by))
        return self._send(Call("POST", f"{BASE}/deprecate", _skill, body))

    def import_manifest(
        self,
        content: str,
        *,
        files: Optional[Sequence[SkillFile]] = None,
        containers: Optional[List[str]] = None,
        tags: Optional[List[str]] = None,
    ) -> ImportSkillResult:
        """Creates or updates a skill from a SKILL.md text (front matter with name and description)."""
        body = to_json(dict(content=content, files=files, containers=containers, tags=tags))
        return self._send(Call("POST", f"{BASE}/import", lambda d: from_json(ImportSkillResult, d), body))

    def import_dir(
        self,
        directory: Union[str, "os.PathLike[str]"],
        *,
        containers: Optional[List[str]] = None,
        tags: Optional[List[str]] = None,
    ) -> ImportSkillResult:
        """Imports a skill directory: its SKILL.md and every file beside or below it."""
        content, files = read_skill_dir(directory)
        return self.import_manifest(content, files=files, containers=containers, tags=tags)

    def export(self, id: Optional[str] = None, *, slug: Optional[str] = None, version: Optional[int] = None) -> SkillExport:
        body = to_json(dict(id=id, slug=slug, version=version))
        return self._send(Call("POST", f"{BASE}/export", lambda d: from_json(SkillExport, d), body))

    def export_dir(
        self,
        directory: Union[str, "os.PathLike[str]"],
        id: Optional[str] = None,
        *,
        slug: Optional[str] = None,
        version: Optional[int] = None,
    ) -> "os.PathLike[str]":
        """Writes a skill as SKILL.md and its files into `directory`; returns the directory's path."""
        body = to_json(dict(id=id, slug=slug, version=version))
        parse = lambda d: write_skill_dir(from_json(SkillExport, d), directory)  # noqa: E731
        return self._send(Call("POST", f"{BASE}/export", parse, body))

    def publish(self, id: Optional[str] = None, *, slug: Optional[str] = None) -> PublishSkillResult:
        """Publishes a private skill to the public marketplace under the content terms."""
        body = to_json(dict(id=id, slug=slug))
        return self._send(Call("POST", f"{BASE}/publish-public", lambda d: from_json(PublishSkillResult, d), body))

    def unpublish(self, id: Optional[str] = None, *, slug: Optional[str] = None) -> Skill:
        return self._send(Call("POST", f"{BASE}/unpublish", _skill, to_json(dict(id=id, slug=slug))))
