// campaign view: client-side trial filters and the auto-refresh of a running campaign.
// No data comes from here: the server renders every value; this only hides rows and
// reloads the page when the campaign's progress fingerprint changes.
"use strict";

(function () {
  function selects() {
    return Array.prototype.slice.call(document.querySelectorAll("select[data-filter]"));
  }

  function applyFilters() {
    var wanted = {};
    selects().forEach(function (s) { if (s.value) { wanted[s.dataset.filter] = s.value; } });
    var rows = document.querySelectorAll("#trials tbody tr");
    var shown = 0;
    rows.forEach(function (row) {
      var keep = Object.keys(wanted).every(function (k) { return row.dataset[k] === wanted[k]; });
      row.hidden = !keep;
      if (keep) { shown += 1; }
    });
    var count = document.getElementById("trial-count");
    if (count) { count.textContent = shown + " of " + count.dataset.total + " trials shown"; }
    // Kept in the fragment so a refresh of a running campaign keeps the filters.
    var params = new URLSearchParams(wanted).toString();
    history.replaceState(null, "", params ? "#" + params : location.pathname + location.search);
  }

  function restoreFilters() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    selects().forEach(function (s) {
      var value = params.get(s.dataset.filter);
      if (value !== null && Array.prototype.some.call(s.options, function (o) { return o.value === value; })) {
        s.value = value;
      }
      s.addEventListener("change", applyFilters);
    });
    if (selects().length) { applyFilters(); }
  }

  function poll() {
    var body = document.body;
    var url = body.dataset.refreshUrl;
    if (!url) { return; }
    var seconds = Number(body.dataset.refreshSeconds) || 3;
    window.setTimeout(function () {
      fetch(url, { cache: "no-store", credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (data) {
          if (data && data.fingerprint !== body.dataset.fingerprint) { location.reload(); } else { poll(); }
        })
        .catch(poll);
    }, seconds * 1000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    restoreFilters();
    poll();
  });
})();
