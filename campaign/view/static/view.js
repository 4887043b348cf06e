// campaign view: the trial filters and the auto-refresh of a running campaign.
// No data comes from here: the server renders every value, filters and pages the
// trial table; a filter change only asks it for the page with that filter (the
// query string, so a refresh keeps it), and a running campaign's page reloads
// when its progress fingerprint changes.
"use strict";

(function () {
  function selects() {
    return Array.prototype.slice.call(document.querySelectorAll("select[data-filter]"));
  }

  function applyFilters() {
    var wanted = new URLSearchParams();
    selects().forEach(function (s) { if (s.value) { wanted.set(s.dataset.filter, s.value); } });
    // A new filter starts at its first page.
    var query = wanted.toString();
    location.assign(location.pathname + (query ? "?" + query : ""));
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
    selects().forEach(function (s) { s.addEventListener("change", applyFilters); });
    poll();
  });
})();
