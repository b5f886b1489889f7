"""A skill on disk: a directory with SKILL.md and the files it bundles (scripts, references, assets)."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import List, Tuple, Union

from .types import SkillExport, SkillFile

MANIFEST = "SKILL.md"


def read_skill_dir(directory: Union[str, "os.PathLike[str]"]) -> Tuple[str, List[SkillFile]]:
    """SKILL.md's text and every other file under the directory (UTF-8 as text, anything else as base64)."""
    root = Path(directory)
    manifest = root / MANIFEST
    if not manifest.is_file():
        raise FileNotFoundError(f"{manifest} does not exist: a skill directory holds a SKILL.md")
    files = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p != manifest):
        data = path.read_bytes()
        relative = path.relative_to(root).as_posix()
        try:
            files.append(SkillFile(path=relative, text=data.decode("utf-8")))
        except UnicodeDecodeError:
            files.append(SkillFile(path=relative, base64=base64.b64encode(data).decode("ascii")))
    return manifest.read_text(encoding="utf-8"), files


def write_skill_dir(export: SkillExport, directory: Union[str, "os.PathLike[str]"]) -> Path:
    """Writes an export as SKILL.md and its files under `directory` (created if missing); returns the directory."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    (root / export.filename).write_text(export.content, encoding="utf-8")
    for file in export.files:
        target = (root / file.path).resolve()
        # A bundled file's path comes from the server: never write outside the directory.
        if root.resolve() not in target.parents:
            raise ValueError(f"skill file path {file.path!r} leaves the export directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        if file.base64 is not None:
            target.write_bytes(base64.b64decode(file.base64))
        else:
            target.write_text(file.text or "", encoding="utf-8")
    return root
