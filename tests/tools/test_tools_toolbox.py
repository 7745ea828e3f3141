"""The toolbox: function definitions, dispatch of whatever the model sends, call records."""

from __future__ import annotations

import json

import pytest

from assay.tools import TOOL_NAMES, Toolbox, ToolLimits, Workspace, tool_definitions


def test_definitions_are_openai_functions_generated_from_the_argument_models(
    toolbox: Toolbox,
) -> None:
    definitions = toolbox.definitions

    assert [definition["function"]["name"] for definition in definitions] == list(TOOL_NAMES)
    assert all(definition["type"] == "function" for definition in definitions)
    read_file = definitions[0]["function"]
    assert "At most 400 lines or 40000 bytes per call" in read_file["description"]
    assert read_file["parameters"] == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "path": {
                "type": "string",
                "description": "File path relative to the repository root, e.g. 'src/app.py'.",
            },
            "start": {
                "type": "integer",
                "minimum": 1,
                "default": 1,
                "description": "First line to show (1-based).",
            },
            "end": {
                "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
                "default": None,
                "description": "Last line to show (inclusive); omit it to show as much as the "
                "limit allows.",
            },
        },
        "required": ["path"],
    }
    git_show = definitions[3]["function"]["parameters"]
    assert git_show["properties"]["rev"]["enum"] == ["head", "base"]
    assert "title" not in json.dumps(definitions)


def test_definitions_are_stable_across_toolboxes(workspace: Workspace) -> None:
    first = json.dumps(Toolbox(workspace).definitions, sort_keys=True)
    second = json.dumps(Toolbox(workspace, ripgrep=None).definitions, sort_keys=True)

    assert first == second == json.dumps(tool_definitions(), sort_keys=True)


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("nope", "{}", "unknown tool 'nope'; the tools are read_file, grep, list_files, git_show"),
        ("", "{}", "unknown tool ''"),
        ("read_file", '{"path": "src/calc.py"', "the arguments are not valid JSON (Expecting"),
        ("read_file", "[1, 2]", "the arguments must be a JSON object, not list"),
        ("read_file", "{}", "invalid arguments:\n- path: Field required"),
        ("read_file", '{"path": 12}', "invalid arguments:\n- path: Input should be a valid string"),
        (
            "read_file",
            '{"path": "a", "start": 0}',
            "- start: Input should be greater than or equal",
        ),
        ("read_file", '{"file": "a"}', "- path: Field required\n- file: Extra inputs are not"),
        ("grep", '{"pattern": "x", "max_results": "many"}', "- max_results: Input should be"),
        ("list_files", "[" * 100_000, "the arguments are not valid JSON"),
    ],
)
def test_malformed_calls_are_answered_with_an_error_not_raised(
    toolbox: Toolbox, name: str, arguments: str, error: str
) -> None:
    result = toolbox.dispatch(name, arguments)

    assert not result.ok
    assert result.text.startswith("error: ")
    assert error in result.text
    assert toolbox.records == (result.record,)


def test_empty_or_null_arguments_mean_no_arguments(toolbox: Toolbox) -> None:
    assert toolbox.dispatch("list_files", "").ok
    assert toolbox.dispatch("list_files", "null").ok


def test_every_call_is_recorded(toolbox: Toolbox) -> None:
    toolbox.read_file("src/calc.py", end=1)
    toolbox.dispatch("grep", '{"pattern": "needle", "path_glob": "src"}')
    toolbox.read_file("../x")

    records = toolbox.records
    assert [(record.tool, record.ok) for record in records] == [
        ("read_file", True),
        ("grep", True),
        ("read_file", False),
    ]
    assert records[0].arguments == '{"path": "src/calc.py", "start": 1, "end": 1}'
    assert records[1].arguments == '{"pattern": "needle", "path_glob": "src"}'
    assert records[0].error is None
    assert records[2].error is not None and records[2].error.startswith("'..' is refused")
    assert records[0].output_chars == len("src/calc.py, lines 1-1 of 6:\n   1 | def add(a, b):")
    assert all(record.duration_ms >= 0 for record in records)


def test_answers_are_bounded_whatever_the_tool(workspace: Workspace) -> None:
    toolbox = Toolbox(workspace, limits=ToolLimits(output_max_chars=200))

    results = [toolbox.read_file("big.txt"), toolbox.grep("needle"), toolbox.list_files()]

    for result in results:
        assert len(result.text) <= 200
        assert result.text.endswith("[output cut at 200 characters]")
        assert result.record.output_chars == len(result.text)


def test_the_public_surface_is_listed() -> None:
    # The order is ruff's (RUF022: constants, classes, functions), checked by the linter.
    import assay.tools

    public = sorted(
        name
        for name, value in vars(assay.tools).items()
        if not name.startswith("_") and name != "annotations" and type(value).__name__ != "module"
    )
    assert sorted(assay.tools.__all__) == public
