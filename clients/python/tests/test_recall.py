import pytest

from agentmem import RecallItem, RecallReceipt, RecallResult


@pytest.fixture(scope="module")
def stored(client):
    tag = "recall-fixture"
    client.memories.create(
        memories=[
            {"content": "The user prefers dark mode in every editor", "type": "preference", "tags": [tag]},
            {"content": "Production deploys need a second reviewer", "type": "directive", "tags": [tag, "deploy"]},
            {"content": "The staging database lives in eu-west-1", "type": "fact", "tags": [tag], "confidence": 0.4},
        ]
    )
    return tag


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid"])
def test_every_mode_returns_typed_items_and_a_receipt(client, stored, mode):
    result = client.recall(query="which colour theme does the user want in the editor", mode=mode, limit=2, tags=[stored])
    assert isinstance(result, RecallResult)
    assert isinstance(result.receipt, RecallReceipt) and result.receipt.search_mode == mode
    assert result.receipt.returned == len(result.memories) <= 2
    top = result.memories[0]
    assert isinstance(top, RecallItem)
    assert top.content == "The user prefers dark mode in every editor"
    assert isinstance(top.similarity, float) and top.why is not None and top.why.final_score is not None
    assert result.meta is not None and result.meta.tokens > 0


def test_filters_and_the_audit_trail(client, stored):
    directives = client.recall(query="deploys", types=["directive"], tags=[stored])
    assert [m.type for m in directives.memories] == ["directive"]
    assert directives.receipt.filters_applied.types == ["directive"]

    confident = client.recall(query="where is the staging database", tags=[stored], min_confidence=0.5)
    assert all(m.confidence >= 0.5 for m in confident.memories)
    assert confident.receipt.filtered.low_confidence >= 1

    without_receipt = client.recall(query="deploys", tags=[stored], include_receipt=False)
    assert without_receipt.receipt is None

    trace = client.recall.trace(directives.meta.trace_id)
    assert trace.query == "deploys" and trace.returned_ids == [m.id for m in directives.memories]
    assert any(t.trace_id == trace.trace_id for t in client.recall.traces(page_size=50).traces)


def test_stats(client, stored):
    stats = client.stats()
    assert stats.memories_stored >= 3 and stats.recalls_used >= 1
    assert stats.rate_limits is not None and stats.rate_limits.sustained_per_second > 0
    assert stats.period_start is not None
    assert client.stats.history().resets_at is not None
