"use strict";
// Hidden checks, run with the working copy as cwd; exit 0 is a pass.
const assert = require("node:assert/strict");
const path = require("node:path");
const { slugify } = require(path.join(process.cwd(), "slugify.js"));

const cases = [
  ["  Hello, World!  ", "hello-world"],
  ["Already-a-slug", "already-a-slug"],
  ["--Edge--Case--", "edge-case"],
  ["2024: A Year", "2024-a-year"],
];
for (const [input, expected] of cases) {
  assert.equal(slugify(input), expected, `slugify(${JSON.stringify(input)})`);
}
console.log(`ok: ${cases.length} cases`);
