"use strict";
const assert = require("node:assert/strict");
const { median } = require("/app/stats.js");
assert.equal(median([3, 1, 2]), 2);
assert.equal(median([10, 2, 30, 4]), 7);
assert.equal(median([5]), 5);
assert.equal(median([100, 9, 20]), 20);
console.log("ok");
