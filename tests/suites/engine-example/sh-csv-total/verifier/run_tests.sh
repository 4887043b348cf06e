#!/usr/bin/env bash
# Hidden checks: run in the working copy after the agent ended; exit 0 is a pass.
set -u
fail=0
check() {
  local expected=$1 file=$2 got
  got=$(bash total.sh "$file" 2>/dev/null) || { echo "FAIL: total.sh $file exited non-zero"; fail=1; return; }
  [ "$got" = "$expected" ] || { echo "FAIL: total.sh $file printed '$got', expected '$expected'"; fail=1; }
}
tmp=$(mktemp -d)
printf 'region,amount\nnorth,10\nsouth,32\n' > "$tmp/a.csv"
printf 'k,v\nx,5\n' > "$tmp/b.csv"
printf 'only,header\n' > "$tmp/c.csv"
check 42 "$tmp/a.csv"
check 5 "$tmp/b.csv"
check 0 "$tmp/c.csv"
rm -rf "$tmp"
exit $fail
