"""Agent profiles for tests, derived from the shipped ones."""

from __future__ import annotations

from pathlib import Path

from campaign.agents import profiles

SHIPPED = Path(profiles.__file__).parent / "profiles"


def blind_profile(directory: Path) -> Path:
    """The offline agent's profile, declaring that it cannot show which disclosure profile it applied."""
    text = (SHIPPED / "offline.toml").read_text()
    assert 'applied_profile_from = "adapter"' in text
    path = directory / "blind.toml"
    path.write_text(text.replace('applied_profile_from = "adapter"', 'applied_profile_from = "none"'))
    return path
