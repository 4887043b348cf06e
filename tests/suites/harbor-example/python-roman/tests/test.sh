#!/bin/bash
# Harbor verifier: pytest's result becomes the reward.
cd /app
if python3 -m pytest -q -p no:cacheprovider /tests/test_roman.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
