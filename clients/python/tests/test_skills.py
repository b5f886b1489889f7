import base64

import pytest

from agentmem import APIError, Client, Skill, SkillFile


def test_skill_lifecycle(client, unique):
    slug = f"deploy-checklist-{unique}"
    skill = client.skills.create(name=slug, slug=slug, description="Steps to deploy a web service safely", content="# Deploy\n1. Run the tests", tags=[unique])
    assert isinstance(skill, Skill) and (skill.version, skill.visibility) == (1, "private")

    assert client.skills.get(slug=slug).id == skill.id
    found = client.skills.search("how do I ship the service to production", tags=[unique])
    assert [s.id for s in found.skills] == [skill.id] and found.skills[0].similarity is not None
    assert [s.id for s in client.skills.list(tags=[unique]).skills] == [skill.id]

    updated = client.skills.update(skill.id, expected_version=1, content="# Deploy\n1. Run the tests\n2. Tag the release")
    assert updated.version == 2
    with pytest.raises(APIError) as stale:
        client.skills.update(skill.id, expected_version=1, description="stale")
    assert (stale.value.status, stale.value.code) == (409, "version_conflict")

    deprecated = client.skills.deprecate(skill.id, message="use the release skill")
    assert deprecated.state == "deprecated"


def test_import_a_directory_and_export_it_back(client, unique, tmp_path):
    source = tmp_path / "pdf-tools"
    (source / "scripts").mkdir(parents=True)
    (source / "SKILL.md").write_text(f"---\nname: pdf-{unique}\ndescription: Fill and merge PDF forms\n---\n# PDF\nRun scripts/merge.sh.\n")
    (source / "scripts" / "merge.sh").write_text("pdftk a.pdf b.pdf cat output out.pdf\n")
    (source / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")

    imported = client.skills.import_dir(source, tags=[unique])
    assert imported.created and imported.skill.name == f"pdf-{unique}"
    assert sorted(f.path for f in imported.skill.files) == ["logo.png", "scripts/merge.sh"]

    target = client.skills.export_dir(tmp_path / "exported", slug=f"pdf-{unique}")
    assert (target / "SKILL.md").read_text().startswith(f"---\nname: pdf-{unique}\n")
    assert (target / "scripts" / "merge.sh").read_text() == "pdftk a.pdf b.pdf cat output out.pdf\n"
    assert (target / "logo.png").read_bytes() == b"\x89PNG\r\n\x1a\n\x00\xff"

    export = client.skills.export(slug=f"pdf-{unique}")
    png = next(f for f in export.files if f.path == "logo.png")
    assert base64.b64decode(png.base64) == b"\x89PNG\r\n\x1a\n\x00\xff"


def test_marketplace_publish_search_install_fork_report_appeal(client, base_url, new_key, unique):
    slug = f"changelog-{unique}"
    client.skills.create(name=slug, slug=slug, description="Write a changelog entry from merged pull requests", content="# Changelog\nGroup by type.")
    published = client.skills.publish(slug=slug)
    assert published.skill.visibility == "public" and published.terms_version

    other_key, _ = new_key("reader")
    with Client(base_url=base_url, api_key=other_key) as other:
        hits = other.marketplace.search(f"changelog from pull requests {unique}", limit=20)
        summary = next(s for s in hits.skills if s.slug == slug)
        detail = other.marketplace.get(summary.id)
        assert detail.content == "# Changelog\nGroup by type." and detail.author_handle == summary.author_handle
        assert other.marketplace.get(slug=slug, author_handle=summary.author_handle).id == summary.id

        installed = other.marketplace.install(summary.id)
        assert installed.created and installed.skill.installed_from.id == summary.id

        fork = other.marketplace.fork(summary.id, slug=f"fork-{unique}")
        assert fork.skill.visibility == "public" and fork.skill.fork_of == summary.id
        with pytest.raises(APIError) as locked:
            other.skills.unpublish(fork.skill.id)
        assert (locked.value.status, locked.value.code) == (409, "COPYLEFT_LOCKED")

        report = other.marketplace.report(summary.id, reason="spam", message="test report")
        assert report.report.skill_id == summary.id
        assert other.marketplace.terms().version == published.terms_version

    with pytest.raises(APIError) as conflict:
        client.marketplace.appeal(published.skill.id, message="it was not removed")
    assert (conflict.value.status, conflict.value.code) == (409, "APPEAL_CONFLICT")

    assert client.skills.unpublish(slug=slug).id == published.skill.id
