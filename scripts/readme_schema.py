"""Rewrite the README's schema block from a freshly migrated store.

Run after adding a migration: python scripts/readme_schema.py
(tests/test_readme.py fails while the block and the migrations disagree).
"""

from pathlib import Path

from campaign.store.migrate import schema_sql

START, END = "<!-- schema:start -->", "<!-- schema:end -->"


def render(readme: str) -> str:
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n```sql\n{schema_sql()}```\n{END}{tail}"


if __name__ == "__main__":
    path = Path(__file__).resolve().parents[1] / "README.md"
    path.write_text(render(path.read_text()))
