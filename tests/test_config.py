"""The base config check (parsed, every TOML form) and the per-variant overlay."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from campaign.config import (
    DISCLOSURE_SETTINGS,
    load_base_config,
    parse_base_config,
    render_config,
    render_variant,
    resolved_disclosure,
    resolved_profile,
)
from campaign import inputs
from campaign.errors import UsageProblem

# Every way TOML can set runtime.tools.disclosure; each must be refused.
DISCLOSURE_FORMS = {
    "table": "[runtime.tools.disclosure]\nenabled = true\n",
    "dotted_top_level": "runtime.tools.disclosure.enabled = true\n",
    "dotted_under_runtime": "[runtime]\ntools.disclosure.enabled = true\n",
    "dotted_under_runtime_tools": "[runtime.tools]\ndisclosure.profile = 'coding'\n",
    "inline_nested": "runtime = {tools = {disclosure = {enabled = true}}}\n",
    "inline_under_runtime_tools": "[runtime.tools]\ndisclosure = {enabled = true, profile = 'coding'}\n",
    "inline_tools_under_runtime": "[runtime]\ntools = {disclosure = {profile = 'legacy'}}\n",
    "quoted_keys": "[\"runtime\".\"tools\".'disclosure']\nenabled = true\n",
    "quoted_dotted": "\"runtime\".'tools'.\"disclosure\".enabled = true\n",
    "array_of_tables": "[[runtime.tools.disclosure]]\nenabled = true\n",
    "subtable_only": "[runtime.tools.disclosure.extra]\nx = 1\n",
    "scalar_value": "[runtime.tools]\ndisclosure = false\n",
    "empty_inline": "[runtime.tools]\ndisclosure = {}\n",
    "inside_runtime_array": "[[runtime]]\n[runtime.tools.disclosure]\nenabled = true\n",
    "inside_tools_array": "[[runtime.tools]]\ndisclosure = {enabled = true}\n",
}

# Bases that must take the overlay and still parse.
GOOD_BASES = {
    "empty": "",
    "unrelated": "model = 'x'\n[agent]\nname = 'a'\n",
    "runtime_table": "[runtime]\nport = 0\n",
    "runtime_tools_table": "[runtime.tools]\nallow = ['read', 'write']\n",
    "dotted_tools_under_runtime": "[runtime]\ntools.allow = ['read']\n",
    "dotted_top_level_tools": "runtime.tools.allow = ['read']\n",
    "no_trailing_newline": "[runtime.tools]\nallow = []",
    "ends_in_comment": "[runtime]\nport = 0 # no newline after this comment",
    "last_table_is_array": "[[servers]]\nname = 'a'\n",
    "crlf": "[runtime]\r\nport = 0\r\n",
    "non_ascii": "title = 'naïve 日本'\n",
    "disclosure_elsewhere": "[agent.tools.disclosure]\nenabled = false\n[runtime.disclosure]\nx = 1\n",
}


@pytest.mark.parametrize("form", sorted(DISCLOSURE_FORMS))
def test_every_disclosure_form_is_refused(form: str):
    with pytest.raises(UsageProblem, match="sets runtime.tools.disclosure") as info:
        parse_base_config(DISCLOSURE_FORMS[form].encode())
    assert info.value.option == "--config"


@pytest.mark.parametrize("form", sorted(DISCLOSURE_FORMS))
def test_every_refused_form_really_sets_the_key(form: str):
    # Guard against a test case that only looks like the key: tomllib must see it.
    data = tomllib.loads(DISCLOSURE_FORMS[form])
    runtime = data["runtime"]
    runtime = runtime[-1] if isinstance(runtime, list) else runtime
    tools = runtime["tools"]
    tools = tools[-1] if isinstance(tools, list) else tools
    assert "disclosure" in tools


@pytest.mark.parametrize("name", sorted(GOOD_BASES))
@pytest.mark.parametrize(("variant", "profile"), [("baseline", "legacy"), ("coding", "coding")])
def test_variant_config_is_the_base_copy_plus_one_table(name: str, variant: str, profile: str):
    text = GOOD_BASES[name]
    base = parse_base_config(text.encode())
    rendered = render_variant(base, variant)
    assert rendered.text.startswith(text)
    assert rendered.text.endswith(rendered.overlay)
    merged = tomllib.loads(rendered.text)
    assert resolved_profile(merged) == profile
    assert resolved_disclosure(merged) == {**DISCLOSURE_SETTINGS, "profile": profile}
    assert resolved_disclosure(merged) == {
        "enabled": True,
        "profile": profile,
        "catalog_tokens": 2000,
        "max_results": 5,
        "budget_tokens": 40000,
    }
    # Nothing else changed: removing the table gives the base tree back.
    del merged["runtime"]["tools"]["disclosure"]
    expected = tomllib.loads(text)
    expected.setdefault("runtime", {}).setdefault("tools", {})
    assert merged == expected


@pytest.mark.parametrize(
    "text",
    ["runtime = {port = 0}\n", "[runtime]\ntools = {allow = []}\n", "runtime = {tools = {allow = []}}\n"],
)
def test_inline_runtime_tables_cannot_take_the_overlay(text: str):
    base = parse_base_config(text.encode())
    with pytest.raises(UsageProblem, match="not inline tables") as info:
        render_variant(base, "coding")
    assert info.value.option == "--config"


@pytest.mark.parametrize(("text", "what"), [("runtime = 3\n", "runtime must be a table"), ("[[runtime.tools]]\nx = 1\n", "runtime.tools must be a table")])
def test_runtime_that_is_not_a_table_is_refused(text: str, what: str):
    with pytest.raises(UsageProblem, match=what):
        parse_base_config(text.encode())


@pytest.mark.parametrize("text", ["[runtime\n", "a = \n", "a = 1\na = 2\n", "[x]\n[x]\n"])
def test_invalid_toml_is_a_clear_config_error(text: str):
    with pytest.raises(UsageProblem, match="is not valid TOML") as info:
        parse_base_config(text.encode())
    assert info.value.option == "--config"


def test_non_utf8_and_unreadable_files(tmp_path: Path):
    with pytest.raises(UsageProblem, match="not UTF-8"):
        parse_base_config(b"title = '\xff'\n")
    with pytest.raises(UsageProblem, match="does not exist"):
        load_base_config(tmp_path / "missing.toml")
    with pytest.raises(UsageProblem, match="is a directory"):
        load_base_config(tmp_path)


def test_digests_bind_base_bytes_and_variant(tmp_path: Path):
    path = tmp_path / "base.toml"
    path.write_text("[runtime]\nport = 0\n")
    base = load_base_config(path)
    baseline, coding = render_variant(base, "baseline"), render_variant(base, "coding")
    assert baseline.overlay_digest != coding.overlay_digest
    assert baseline.digest != coding.digest
    path.write_text("[runtime]\nport = 1\n")
    changed = load_base_config(path)
    assert changed.digest != base.digest
    assert render_variant(changed, "coding").digest != coding.digest
    assert render_variant(changed, "coding").overlay_digest == coding.overlay_digest
    # Rendering never touches the operator's file.
    assert path.read_text() == "[runtime]\nport = 1\n"


def test_only_baseline_and_coding_have_a_disclosure_profile_of_their_own():
    with pytest.raises(UsageProblem, match="only baseline and coding have a disclosure profile"):
        render_variant(parse_base_config(b""), "budget-20000")


def test_another_variant_applies_the_disclosure_its_table_names_or_none():
    base = parse_base_config(b"[agent]\nname = 'x'\n")
    terse = render_config(base, "terse", "coding")
    assert terse.profile == "coding" and resolved_profile(inputs.toml_loads(terse.text)) == "coding"
    assert "for the terse variant" in terse.overlay and terse.text.startswith(base.text)
    # The same treatment as the built-in coding, but a variant of its own name.
    assert terse.digest != render_variant(base, "coding").digest
    lean = render_config(base, "lean", None)
    assert (lean.profile, lean.overlay, lean.text) == (None, "", base.text)
    assert resolved_profile(inputs.toml_loads(lean.text)) is None
