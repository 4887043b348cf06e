# Only here because the package list cannot be declared in pyproject.toml when one
# subpackage (campaign.migrations) lives outside the package directory.
from setuptools import find_namespace_packages, setup

setup(
    # Namespace discovery: data-only directories (agents/profiles, benchmark/tasks) are
    # packages too, so their data is declared rather than "would be ignored". A task's
    # fixture tree is data of campaign.benchmark.tasks, never a package of its own.
    packages=find_namespace_packages(include=["campaign", "campaign.*"], exclude=["campaign.benchmark.tasks.*", "*.__pycache__"])
    + ["campaign.migrations", "campaign.migrations.versions"],
)
