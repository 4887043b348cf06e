#!/bin/bash
# Harbor verifier: the reward file decides.
expected=$'bolts 10\nnuts 10\nwashers 3'
if [ -f /app/report.txt ] && [ "$(cat /app/report.txt)" = "$expected" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
