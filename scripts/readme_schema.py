"""Rewrite the schema block of docs/store.md from a freshly migrated store.

Run after adding a migration: python scripts/readme_schema.py
(tests/test_docs.py fails while the block and the migrations disagree).
"""

from pathlib import Path

from campaign.store.migrate import schema_sql

START, END = "<!-- schema:start -->", "<!-- schema:end -->"
PAGE = Path(__file__).resolve().parents[1] / "docs" / "store.md"


def render(page: str) -> str:
    head, rest = page.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n```sql\n{schema_sql()}```\n{END}{tail}"


if __name__ == "__main__":
    PAGE.write_text(render(PAGE.read_text()))
