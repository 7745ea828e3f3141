"""Repository checklists: listed in .assay.toml, read from the BASE revision of real git repos."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.checklists import applicable_items, resolve_catalogs
from assay.config import ChecklistsConfig, parse_repo_config
from assay.errors import ConfigError

from ._helpers import RTP_EXAMPLE, DictReader, make_pr_repo, snapshot_of

_CONFIG = '[checklists]\nfiles = [".assay/rtp-llm-checklist.toml"]\n'
_RTP = RTP_EXAMPLE.read_text(encoding="utf-8")


def test_the_rtp_llm_example_loads_as_a_repository_checklist_between_general_and_python(
    tmp_path: Path,
) -> None:
    repo = make_pr_repo(
        tmp_path,
        {".assay.toml": _CONFIG, ".assay/rtp-llm-checklist.toml": _RTP, "app/a.py": "x = 1\n"},
        {"app/a.py": "x = 2\n"},
    )
    with snapshot_of(repo) as snapshot:
        config = parse_repo_config(snapshot.repo_config_text).checklists
        catalogs = resolve_catalogs(config, snapshot.base)

    names = [catalog.name for catalog in catalogs]
    assert names[:3] == ["general", "rtp-llm", "python"]
    rtp = catalogs[1]
    assert rtp.source == "base:.assay/rtp-llm-checklist.toml"
    assert [item.id for _, item in rtp.entries()] == ["R.I.1", "R.I.2"]
    ids = {item.item_id for item in applicable_items(catalogs, snapshot.files)}
    assert {"R.I.1", "R.I.2", "G.6.1.1", "P.B.1"} <= ids


def test_a_pull_request_that_edits_its_checklist_is_judged_by_the_base_version(
    tmp_path: Path,
) -> None:
    weakened = _RTP.replace("同一功能用统一工具函数", "随便写").replace(
        'id = "R.I.2"', 'id = "R.I.9"'
    )
    repo = make_pr_repo(
        tmp_path,
        {".assay.toml": _CONFIG, ".assay/rtp-llm-checklist.toml": _RTP, "app/a.py": "x = 1\n"},
        {
            ".assay/rtp-llm-checklist.toml": weakened,
            ".assay.toml": "[checklists]\nenabled = false\n",
            "app/a.py": "x = 2\n",
        },
    )
    with snapshot_of(repo) as snapshot:
        assert ".assay/rtp-llm-checklist.toml" in {f.path for f in snapshot.files}
        config = parse_repo_config(snapshot.repo_config_text).checklists
        catalogs = resolve_catalogs(config, snapshot.base)
        at_head = snapshot.head.read(".assay/rtp-llm-checklist.toml")

    assert at_head is not None and "随便写" in at_head.decode("utf-8")
    assert config.enabled  # the PR's own .assay.toml is not read either
    rtp = next(catalog for catalog in catalogs if catalog.name == "rtp-llm")
    texts = {item.id: item.text.zh for _, item in rtp.entries()}
    assert texts == {
        "R.I.1": "同一功能用统一工具函数",
        "R.I.2": _RTP_R_I_2_ZH,
    }


_RTP_R_I_2_ZH = (
    "删除或重命名内部 file、registry entry、model name、metric enum、op binding、plugin symbol "
    "时，必须全仓搜索消费者，并提供替代实现、迁移说明或 smoke 覆盖；只有暴露到 "
    "HTTP/RPC/config/persisted format 时才按外部兼容性处理"
)


def test_a_checklist_added_by_the_pull_request_itself_is_not_there_yet(tmp_path: Path) -> None:
    repo = make_pr_repo(
        tmp_path,
        {".assay.toml": _CONFIG, "app/a.py": "x = 1\n"},
        {".assay/rtp-llm-checklist.toml": _RTP, "app/a.py": "x = 2\n"},
    )
    with snapshot_of(repo) as snapshot:
        config = parse_repo_config(snapshot.repo_config_text).checklists
        with pytest.raises(ConfigError, match="does not exist at the base revision"):
            resolve_catalogs(config, snapshot.base)


def test_builtin_selection_skip_items_and_disabling() -> None:
    reader = DictReader({"team.toml": _RTP})

    only_general = resolve_catalogs(ChecklistsConfig(builtin=("general",)), reader)
    none = resolve_catalogs(ChecklistsConfig(enabled=False), reader)
    skipped = resolve_catalogs(
        ChecklistsConfig(
            builtin=("general",), files=("team.toml",), skip_items=("R.I.1", "R.I.2", "G.6.1.21")
        ),
        reader,
    )

    assert [c.name for c in only_general] == ["general"]
    assert none == ()
    assert [c.name for c in skipped] == ["general"]  # the emptied repository catalog is gone
    assert "G.6.1.21" not in {item.id for _, item in skipped[0].entries()}


def test_a_repository_catalog_with_a_builtin_name_replaces_it() -> None:
    replacement = _RTP.replace('name = "rtp-llm"', 'name = "python"')
    catalogs = resolve_catalogs(
        ChecklistsConfig(files=("python.toml",)), DictReader({"python.toml": replacement})
    )

    python = next(catalog for catalog in catalogs if catalog.name == "python")
    assert python.source == "base:python.toml"
    assert len(list(python.entries())) == 2


@pytest.mark.parametrize(
    ("config", "files", "message"),
    [
        (ChecklistsConfig(builtin=("kotlin",)), {}, r"builtin names unknown catalog\(s\) kotlin"),
        (
            ChecklistsConfig(files=("../outside.toml",)),
            {},
            r"must be a relative path inside the repository",
        ),
        (
            ChecklistsConfig(files=("/etc/checklist.toml",)),
            {},
            r"must be a relative path inside the repository",
        ),
        (
            ChecklistsConfig(files=("team.toml",)),
            {"team.toml": _RTP.replace('id = "R.I.1"', 'id = "G.6.1.5"')},
            r"base:team\.toml: item id 'G\.6\.1\.5' is also used by builtin:general\.toml",
        ),
        (
            ChecklistsConfig(files=("a.toml", "b.toml")),
            {"a.toml": _RTP, "b.toml": _RTP},
            r"base:b\.toml: catalog name 'rtp-llm' is also used by base:a\.toml",
        ),
        (
            ChecklistsConfig(files=("team.toml",)),
            {"team.toml": _RTP.replace(', zh = "代码质量"', "")},
            r"base:team\.toml: sections\[0\] \(section code-quality\)\.title\.zh: Field required",
        ),
    ],
)
def test_configuration_errors_name_the_file(
    config: ChecklistsConfig, files: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        resolve_catalogs(config, DictReader(files))


def test_repo_config_reads_the_checklists_table() -> None:
    config = parse_repo_config(
        "[checklists]\n"
        'files = ["a.toml"]\nbuiltin = ["general", "python"]\nskip_items = ["P.G.5"]\n'
    )

    assert config.checklists == ChecklistsConfig(
        files=("a.toml",), builtin=("general", "python"), skip_items=("P.G.5",)
    )
    with pytest.raises(ConfigError, match=r"checklists\.file: Extra inputs"):
        parse_repo_config('[checklists]\nfile = "a.toml"\n')
