#!/bin/bash
cat > /app/src/roman.py <<'PY'
"""Roman numerals."""

_VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
           (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(n: int) -> str:
    if not 1 <= n <= 3999:
        raise ValueError(f"{n} is outside 1..3999")
    out = ""
    for value, letters in _VALUES:
        while n >= value:
            out += letters
            n -= value
    return out
PY
