"""Typed request and response objects of the REST API (field names in snake_case)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Optional

MemoryType = Literal["fact", "lesson", "directive", "preference", "contact", "bookmark"]
MemorySource = Literal["direct", "conversation", "capture", "extraction", "compaction"]
Severity = Literal["low", "medium", "high", "critical"]
SearchMode = Literal["semantic", "keyword", "hybrid"]
Maturity = Literal["experimental", "beta", "stable"]
ReportReason = Literal["spam", "malware", "copyright", "illegal", "impersonation", "other"]


def _list() -> Any:
    return field(default_factory=list)


def _dict() -> Any:
    return field(default_factory=dict)


# Memories


@dataclass
class MemoryInput:
    """One memory to create (in a batch: `client.memories.create(memories=[MemoryInput(...), ...])`)."""

    content: str
    type: MemoryType
    containers: Optional[List[str]] = None
    tags: Optional[List[str]] = None
    source: Optional[MemorySource] = None
    valid_from: Optional[str] = None
    valid_until: Optional[str] = None
    metadata: Optional[Dict[str, Any]] = None
    confidence: Optional[float] = None
    severity: Optional[Severity] = None
    supersedes: Optional[List[str]] = None


@dataclass
class Provenance:
    source: Optional[str] = None
    key_id: Optional[str] = None


@dataclass
class Contradiction:
    memory_id: str = ""
    conflicts_with: str = ""
    snippet: str = ""
    score: float = 0.0
    reason: str = ""
    shadowed: bool = False
    rule: Optional[str] = None


@dataclass
class Memory:
    id: str = ""
    content: str = ""
    type: str = ""
    containers: List[str] = _list()
    tags: List[str] = _list()
    source: Optional[str] = None
    valid_from: Optional[str] = None
    valid_until: Optional[str] = None
    metadata: Dict[str, Any] = _dict()
    confidence: float = 1.0
    version: int = 1
    created_at: Optional[str] = None
    updated_at: Optional[str] = None
    provenance: Optional[Provenance] = None
    severity: Optional[str] = None
    state: Optional[str] = None
    superseded_by: Optional[str] = None
    superseded_at: Optional[str] = None
    contradictions: List[Contradiction] = _list()


@dataclass
class ShadowedMemory:
    memory_id: str = ""
    rule: str = ""
    reason: str = ""
    snippet: str = ""


@dataclass
class KeptBesideMemory:
    memory_id: str = ""
    snippet: str = ""
    reason: str = ""


@dataclass
class CreateMemoryResult:
    id: str = ""
    duplicate_of: Optional[str] = None
    supersedes: List[str] = _list()
    outcome: str = ""
    shadowed: List[ShadowedMemory] = _list()
    kept_beside: List[KeptBesideMemory] = _list()
    summary: str = ""


@dataclass
class CreateMemoriesResult:
    ids: List[str] = _list()
    memories: List[Memory] = _list()
    contradictions: List[Contradiction] = _list()
    results: List[CreateMemoryResult] = _list()
    dry_run: bool = False


@dataclass
class DeleteMemoryResult:
    id: str = ""
    versions_deleted: int = 0
    restored: List[str] = _list()


@dataclass
class MemoryPage:
    memories: List[Memory] = _list()
    next_page_token: Optional[str] = None


# Recall


@dataclass
class RecallWhy:
    cosine: Optional[float] = None
    bm25: Optional[float] = None
    relevance: Optional[float] = None
    informativeness: Optional[float] = None
    query_coverage: Optional[float] = None
    recency_boost: Optional[float] = None
    severity_multiplier: Optional[float] = None
    confidence_multiplier: Optional[float] = None
    final_score: Optional[float] = None
    matched_via: Optional[str] = None
    keyword_matches: List[str] = _list()
    rerank_applied: bool = False
    rerank_score: Optional[float] = None
    validity_state: Optional[str] = None
    inherited_from: Optional[str] = None


@dataclass
class SupersedeEntry:
    memory_id: str = ""
    snippet: str = ""
    superseded_at: Optional[str] = None


@dataclass
class RecallItem:
    id: str = ""
    content: str = ""
    type: str = ""
    similarity: float = 0.0
    confidence: float = 1.0
    containers: List[str] = _list()
    valid_until: Optional[str] = None
    why: Optional[RecallWhy] = None
    supersedes: List[SupersedeEntry] = _list()
    tags: List[str] = _list()
    severity: Optional[str] = None
    created_at: Optional[str] = None
    valid_from: Optional[str] = None
    metadata: Dict[str, Any] = _dict()


@dataclass
class RecallFiltered:
    below_threshold: int = 0
    deduplicated: int = 0
    low_confidence: int = 0
    outside_validity_window: int = 0
    over_token_budget: int = 0
    shadowed: int = 0


@dataclass
class RecallFiltersApplied:
    containers: List[str] = _list()
    types: List[str] = _list()
    severity: Optional[str] = None
    min_confidence: float = 0.0
    tags: List[str] = _list()
    metadata: Dict[str, Any] = _dict()


@dataclass
class RecallReceipt:
    search_mode: str = ""
    threshold: float = 0.0
    rerank_applied: bool = False
    candidates_considered: int = 0
    returned: int = 0
    filtered: Optional[RecallFiltered] = None
    filters_applied: Optional[RecallFiltersApplied] = None


@dataclass
class RecallMeta:
    tokens: int = 0
    search_ms: float = 0.0
    total_ms: float = 0.0
    trace_id: Optional[str] = None


@dataclass
class RecallResult:
    memories: List[RecallItem] = _list()
    receipt: Optional[RecallReceipt] = None
    meta: Optional[RecallMeta] = None


@dataclass
class TraceCandidate:
    id: str = ""
    cosine: Optional[float] = None
    bm25: Optional[float] = None
    final_score: Optional[float] = None
    matched_via: Optional[str] = None
    outcome: str = ""


@dataclass
class RecallTrace:
    trace_id: str = ""
    created_at: Optional[str] = None
    key_id: Optional[str] = None
    query: str = ""
    containers: List[str] = _list()
    request: Dict[str, Any] = _dict()
    candidates: List[TraceCandidate] = _list()
    returned_ids: List[str] = _list()
    receipt: Optional[RecallReceipt] = None
    meta: Optional[RecallMeta] = None
    embed_ms: Optional[float] = None


@dataclass
class RecallTracePage:
    traces: List[RecallTrace] = _list()
    next_page_token: Optional[str] = None


# Stats


@dataclass
class PlanLimits:
    memories_stored: Optional[int] = None
    recalls_per_month: Optional[int] = None
    cost_units_per_month: Optional[float] = None
    skills_stored: Optional[int] = None


@dataclass
class RemainingQuota:
    memories_stored: Optional[int] = None
    recalls: Optional[int] = None
    cost_units: Optional[float] = None
    skills_stored: Optional[int] = None


@dataclass
class RateLimits:
    sustained_per_second: float = 0.0
    burst_per_second: float = 0.0
    burst_seconds: float = 0.0
    concurrency: int = 0
    source: str = ""


@dataclass
class Stats:
    plan: str = ""
    period_start: Optional[str] = None
    resets_at: Optional[str] = None
    memories_stored: int = 0
    recalls_used: int = 0
    cost_used: float = 0.0
    limits: Optional[PlanLimits] = None
    remaining: Optional[RemainingQuota] = None
    rate_limits: Optional[RateLimits] = None
    skills_stored: int = 0


@dataclass
class UsageDay:
    date: str = ""
    recalls: int = 0
    cost_units: float = 0.0


@dataclass
class UsageHistory:
    period_start: Optional[str] = None
    resets_at: Optional[str] = None
    days: List[UsageDay] = _list()


# Skills


@dataclass
class SkillFile:
    """A file bundled with a skill: `text` for UTF-8 files, `base64` for binary ones."""

    path: str = ""
    text: Optional[str] = None
    base64: Optional[str] = None


@dataclass
class LineageEntry:
    id: str = ""
    slug: str = ""
    author_handle: str = ""
    version: int = 0


@dataclass
class InstalledFrom:
    id: str = ""
    version: int = 0


@dataclass
class Skill:
    id: str = ""
    slug: str = ""
    name: str = ""
    description: str = ""
    content: str = ""
    tags: List[str] = _list()
    containers: List[str] = _list()
    maturity: Optional[str] = None
    visibility: Optional[str] = None
    state: Optional[str] = None
    deprecated_at: Optional[str] = None
    deprecation_message: Optional[str] = None
    replaced_by: Optional[str] = None
    version: int = 1
    created_at: Optional[str] = None
    updated_at: Optional[str] = None
    license: Optional[str] = None
    compatibility: Optional[str] = None
    allowed_tools: List[str] = _list()
    metadata: Dict[str, Any] = _dict()
    files: List[SkillFile] = _list()
    source: Optional[str] = None
    extra_frontmatter: Dict[str, Any] = _dict()
    similarity: Optional[float] = None
    fork_of: Optional[str] = None
    lineage: List[LineageEntry] = _list()
    installed_from: Optional[InstalledFrom] = None
    listing_state: Optional[str] = None


@dataclass
class SkillSearchMeta:
    embed_ms: float = 0.0
    search_ms: float = 0.0
    total_ms: float = 0.0


@dataclass
class SkillSearchResult:
    skills: List[Skill] = _list()
    meta: Optional[SkillSearchMeta] = None


@dataclass
class SkillPage:
    skills: List[Skill] = _list()
    next_page_token: Optional[str] = None


@dataclass
class ImportWarning:
    field: str = ""
    message: str = ""


@dataclass
class ImportSkillResult:
    skill: Skill = field(default_factory=Skill)
    created: bool = False
    warnings: List[ImportWarning] = _list()


@dataclass
class SkillExport:
    """A skill as SKILL.md (`filename`, `content`) and its bundled files."""

    filename: str = "SKILL.md"
    content: str = ""
    files: List[SkillFile] = _list()


@dataclass
class PublishSkillResult:
    skill: Skill = field(default_factory=Skill)
    terms_version: str = ""


# Marketplace


@dataclass
class MarketplaceSkillSummary:
    id: str = ""
    slug: str = ""
    author_handle: str = ""
    name: str = ""
    description: str = ""
    installs: int = 0
    forks: int = 0
    similarity: Optional[float] = None
    version: int = 0
    tags: List[str] = _list()
    published_at: Optional[str] = None


@dataclass
class MarketplaceSkill:
    id: str = ""
    slug: str = ""
    author_handle: str = ""
    name: str = ""
    description: str = ""
    content: str = ""
    tags: List[str] = _list()
    version: int = 0
    license: Optional[str] = None
    compatibility: Optional[str] = None
    allowed_tools: List[str] = _list()
    metadata: Dict[str, Any] = _dict()
    files: List[SkillFile] = _list()
    maturity: Optional[str] = None
    installs: int = 0
    forks: int = 0
    published_at: Optional[str] = None
    updated_at: Optional[str] = None
    fork_of: Optional[str] = None
    lineage: List[LineageEntry] = _list()
    listing_state: Optional[str] = None
    deprecated: bool = False


@dataclass
class MarketplaceSearchResult:
    skills: List[MarketplaceSkillSummary] = _list()
    next_page_token: Optional[str] = None
    meta: Optional[SkillSearchMeta] = None


@dataclass
class InstallSkillResult:
    skill: Skill = field(default_factory=Skill)
    created: bool = False


@dataclass
class Report:
    id: str = ""
    skill_id: str = ""
    reason: str = ""
    message: Optional[str] = None
    status: str = ""
    created_at: Optional[str] = None


@dataclass
class ReportSkillResult:
    report: Report = field(default_factory=Report)
    created: bool = False


@dataclass
class Appeal:
    id: str = ""
    skill_id: str = ""
    message: str = ""
    status: str = ""
    created_at: Optional[str] = None
    decided_at: Optional[str] = None
    decision_note: Optional[str] = None


@dataclass
class AppealResult:
    appeal: Appeal = field(default_factory=Appeal)


@dataclass
class MarketplaceTerms:
    version: str = ""
    content: str = ""


# Transport


@dataclass
class RateLimit:
    """The X-RateLimit headers of the latest answer: requests the key can send at once, those left, and the
    whole seconds until the bucket is full again."""

    limit: Optional[int] = None
    remaining: Optional[int] = None
    reset: Optional[int] = None
