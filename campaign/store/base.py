"""Declarative base: naming convention, UTC datetimes, reusable column aliases."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from sqlalchemy import BigInteger, DateTime, Integer, MetaData, String, Text, TypeDecorator
from sqlalchemy.orm import DeclarativeBase, mapped_column

from campaign.errors import UnreadableValue

# Named constraints are what lets alembic's SQLite batch mode find and alter them.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[dt.datetime]):
    """Stores aware UTC datetimes; SQLite returns naive ones, so re-attach UTC on read."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect):  # type: ignore[override]
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        return value.astimezone(dt.timezone.utc)

    def result_processor(self, dialect, coltype):  # type: ignore[override]
        read = super().result_processor(dialect, coltype)
        if read is None:
            return None

        def process(value):
            try:
                return read(value)
            except (ValueError, TypeError, OverflowError, AttributeError):
                shown = repr(value)[:40]
                raise UnreadableValue(f"the store holds {shown} where a timestamp belongs (a row was edited outside the engine); `campaign verify` names edited rows") from None

        return process

    def process_result_value(self, value: dt.datetime | None, dialect):  # type: ignore[override]
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.timezone.utc)
        return value.astimezone(dt.timezone.utc)


intpk = Annotated[int, mapped_column(Integer, primary_key=True, autoincrement=True)]
str64 = Annotated[str, 64]
str128 = Annotated[str, 128]
utc = Annotated[dt.datetime, mapped_column(UTCDateTime())]


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {
        str64: String(64),
        str128: String(128),
        str: String(255),
        dt.datetime: UTCDateTime(),
        int: Integer(),
    }


# Large counters (tokens, process start ticks) may exceed 32 bits on PostgreSQL.
BigInt = BigInteger().with_variant(Integer(), "sqlite")
JSONText = Text
