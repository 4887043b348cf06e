"""Which strings read as credentials: keys and tokens are refused as model names, model names never are."""

from __future__ import annotations

import pytest

from campaign.credential_shapes import credential_shaped
from campaign.report.fields import MODEL_RE

KEYS = [
    "sk-proj-4fQx9ZbT2mWc7LpR8sVd",
    "sk-ant-api03-Zx8Qw2Ty6Ui0Op4As",
    "AIzaSyD4x7Qm2Pv9Lk3Jh6Gf1Ds8",
    "ghp_a1B2c3D4e5F6g7H8i9J0",
    "xoxb-1234-5678-abcdefghijkl",
    "hf_aBcDeFgHiJkLmNoPqRsT",
    "AKIAIOSFODNN7EXAMPLE",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0",
    "0123456789abcdef0123",  # a bare hex id
    "3f2b8c1e-9d4a-4e7b-8c6f-1a2b3c4d5e6f",
]
MODELS = [
    "gpt-6.1-sol",
    "claude-sonnet-4-5-20250929",
    "anthropic/claude-sonnet-4.5",
    "gemini-2.5-pro",
    "glm-4.6",
    "ft:gpt-4o-mini-2024-07-18:my-org:custom:9ABC1234",
    "meta-llama/Llama-3.1-8B-Instruct",
    "claude-sonnet-4-5@20250929",
    "skill-model",  # a name that starts like a key prefix but has no key-length tail
]


@pytest.mark.parametrize("text", KEYS)
def test_keys_and_ids_are_credential_shaped(text):
    assert credential_shaped(text)
    assert credential_shaped(f"openrouter:{text}")


@pytest.mark.parametrize("text", MODELS)
def test_model_names_are_not(text):
    assert not credential_shaped(text)


@pytest.mark.parametrize("text", KEYS[-2:] + ["a" * 20 + "b"])
def test_the_report_redacts_the_id_shapes_the_input_refuses(text):
    # One rule: the report's model allowlist is built from the same id shapes.
    assert credential_shaped(text) and not MODEL_RE.fullmatch(text)
