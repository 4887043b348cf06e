# Only here because the package list cannot be declared in pyproject.toml when one
# subpackage (campaign.migrations) lives outside the package directory.
from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["campaign", "campaign.*"])
    + ["campaign.migrations", "campaign.migrations.versions"],
)
