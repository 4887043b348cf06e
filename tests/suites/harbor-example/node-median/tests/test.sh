#!/bin/bash
# Harbor verifier: node's verdict becomes the reward.
if node /tests/check.js; then
  echo '{"reward": 1.0}' > /logs/verifier/reward.json
else
  echo '{"reward": 0.0}' > /logs/verifier/reward.json
fi
