"""`campaign view` end to end in a real browser (issue 16's "done when").

A small offline campaign runs for real through an agent that plants a canary
in what it reports (its model name, its schema diagnostics, its stderr); then
`campaign view` runs as a real process and a headless Chromium, the system's
own (Debian's ``chromium`` and ``chromium-driver``, driven by Selenium with
explicit paths and Selenium Manager offline, so nothing is downloaded), reads
the pages. The per-variant numbers on the page must equal the report JSON,
the forest plot must render, the filters must work (on the server, through the page's script), the canary must appear
on no page, and a screenshot is saved under the test's temp dir.

Without the browser the test skips; CI sets ``CAMPAIGN_REQUIRE_BROWSER=1`` so a
missing browser fails instead (scripts/test.sh installs it).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

CANARY = "CANARYv13w"
TASKS = "semver-precedence,invoice-rounding"
URL_LINE = re.compile(r"^campaign view: serving (http://127\.0\.0\.1:\d+/)\S* \(Ctrl-C to stop\)$")

AGENT = f'''
"""The offline agent, with a canary planted in everything it reports."""
import json, subprocess, sys

CANARY = {CANARY!r}
done = subprocess.run([sys.executable, "-P", "-m", "campaign.agents.offline", *sys.argv[1:]], capture_output=True, text=True)
lines = [line for line in done.stdout.splitlines() if line.strip()]
result = json.loads(lines[-1])
result["model"] = "offline:synthetic " + CANARY + "-model"
result["schema_diagnostics"] = {{"prompt": CANARY + "-prompt", "catalog_digests": [CANARY + "-digest"], "tool_output": CANARY + "-output"}}
print(CANARY + "-stderr /home/op/secret", file=sys.stderr)
for line in lines[:-1]:
    print(line)
print(json.dumps(result))
sys.exit(done.returncode)
'''

PROFILE = """
description = "offline agent with a planted canary"
adapter = "generic"
paid = false
client = ["{{python}}", "-P", "{agent}", "--task", "{{task}}", "--prompt-file", "{{prompt_file}}", "--model", "{{model}}", "--seed", "{{seed}}", "--trial-id", "{{trial_id}}"]
config_env = "CAMPAIGN_AGENT_CONFIG"
applied_profile_from = "adapter"
build_artifacts = []
"""


def browser_paths() -> tuple[str, str]:
    """(chromium, chromedriver) from the system, or skip (fail under CAMPAIGN_REQUIRE_BROWSER)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if Path("/usr/bin/chromedriver").exists() else None)
    if importlib.util.find_spec("selenium") is None:
        chromium = None
    if chromium and driver:
        return chromium, driver
    message = "no system Chromium, chromedriver or selenium (scripts/test.sh installs Debian's chromium and chromium-driver)"
    if os.environ.get("CAMPAIGN_REQUIRE_BROWSER"):
        pytest.fail(f"CAMPAIGN_REQUIRE_BROWSER is set but there is {message}")
    pytest.skip(message)


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "campaign", *args], capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture
def campaign_dir(tmp_path: Path) -> Path:
    """A finished two-task offline campaign whose agent planted the canary in the store."""
    agent = tmp_path / "canary_agent.py"
    agent.write_text(AGENT)
    # Profile names are lowercase; the canary checks ignore case.
    profile = tmp_path / f"agent-{CANARY.lower()}.toml"
    profile.write_text(PROFILE.format(agent=agent))
    out = tmp_path / "out"
    runner_tmp = tmp_path / "runner-tmp"
    runner_tmp.mkdir()
    done = run_cli(
        "coding", "--campaign", "--providers", "offline", "--tasks", TASKS, "--repetitions", "1",
        "--agent", str(profile), "--output-dir", str(out), "--live",
        env={**os.environ, "TMPDIR": str(runner_tmp)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    with sqlite3.connect(out / "campaign.db") as conn:
        stored = " ".join(str(v) for row in conn.execute("SELECT agent_model, schema_diagnostics FROM attempts") for v in row)
        stored += " ".join(str(v) for row in conn.execute("SELECT agent, experiment_json FROM campaigns") for v in row)
    assert stored.lower().count(CANARY.lower()) >= 10, "the canary must be in the store, or the test proves nothing"
    return out


def make_driver(tmp_path: Path, chromium: str, chromedriver: str, monkeypatch):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    # Selenium Manager must never fetch a browser or a driver: explicit paths, and offline.
    monkeypatch.setenv("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,2200",
                f"--user-data-dir={tmp_path / 'chromium-profile'}", "--no-first-run", "--disable-extensions"):  # fmt: skip
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=chromedriver, log_output=str(tmp_path / "chromedriver.log")), options=options)


def start_view(out: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, "-m", "campaign", "view", "--output-dir", str(out), "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline().rstrip("\n")
    match = URL_LINE.match(line)
    if not match:
        proc.kill()
        raise AssertionError(f"no URL line: {line!r} {proc.communicate()[1]}")
    return proc, match.group(1)


def fingerprint(store: Path) -> tuple[str, int]:
    return hashlib.sha256(store.read_bytes()).hexdigest(), store.stat().st_mtime_ns


def set_state(store: Path, state: str) -> None:
    with sqlite3.connect(store) as conn:
        conn.execute("UPDATE campaigns SET state = ? WHERE id = 1", (state,))
    conn.close()


def assert_no_canary(text: str, where: str) -> None:
    assert CANARY.lower() not in text.lower(), f"the canary reached {where}"
    assert "/home/op" not in text and "campaign-paired-runtime" not in text, f"a path reached {where}"


def test_the_campaign_page_in_a_real_browser(campaign_dir: Path, tmp_path: Path, monkeypatch):
    chromium, chromedriver = browser_paths()
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    report_path = tmp_path / "report" / "report.json"
    done = run_cli("report", "1", "--output", str(report_path), "--db", str(campaign_dir / "campaign.db"))
    assert done.returncode == 0, done.stderr
    report = json.loads(report_path.read_text())
    store = campaign_dir / "campaign.db"
    before = fingerprint(store)

    proc, base = start_view(campaign_dir)
    driver = None
    try:
        driver = make_driver(tmp_path, chromium, chromedriver, monkeypatch)
        wait = WebDriverWait(driver, 30)

        # The campaigns list.
        driver.get(base)
        row = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, '#campaigns tr[data-campaign="1"]'))
        assert row.find_element(By.CSS_SELECTOR, '[data-field="kind"]').text == "campaign"
        assert row.find_element(By.CSS_SELECTOR, '[data-field="state"]').text == "completed"
        assert row.find_element(By.CSS_SELECTOR, '[data-field="progress"]').get_attribute("data-value") == "4/4"
        assert_no_canary(driver.page_source, "the campaigns list")
        row.find_element(By.CSS_SELECTOR, "a").click()

        # The campaign page: the per-variant numbers are the report's.
        wait.until(lambda d: d.find_element(By.ID, "variants"))
        assert driver.current_url == base + "campaigns/1"
        cells = driver.find_elements(By.CSS_SELECTOR, "#variants td[data-variant][data-field]")
        by_name = {v["variant"]: v for v in report["variants"]}
        assert {c.get_attribute("data-variant") for c in cells} == {"baseline", "coding"}
        assert len(cells) >= 2 * 13
        for cell in cells:
            expected = by_name[cell.get_attribute("data-variant")][cell.get_attribute("data-field")]
            assert json.loads(cell.get_attribute("data-value")) == expected, (cell.get_attribute("data-variant"), cell.get_attribute("data-field"))
            if isinstance(expected, int) and not isinstance(expected, bool):
                assert cell.text == str(expected)
            elif isinstance(expected, float) and cell.get_attribute("data-field") == "success_rate":
                assert cell.text == f"{expected:.3f}"
        assert sum(by_name[v]["attempts"] for v in by_name) == 4

        # The forest plot rendered: an SVG with a nonzero size and one point per task and panel.
        plot = driver.find_element(By.CSS_SELECTOR, "#forest svg")
        assert plot.is_displayed() and plot.size["width"] > 100 and plot.size["height"] > 50
        assert len(plot.find_elements(By.CSS_SELECTOR, "circle")) == 2 * len(report["paired_differences"]["per_task"])

        # The trial table, in schedule order, with working filters (so the script ran under the CSP).
        rows = driver.find_elements(By.CSS_SELECTOR, "#trials tbody tr")
        assert [r.get_attribute("data-trial") for r in rows] == [t["trial_id"] for t in sorted(report["trials"], key=lambda t: t["position"])]
        # A filter asks the server for the filtered table (the query string, which a refresh keeps).
        Select(driver.find_element(By.ID, "filter-variant")).select_by_value("coding")
        wait.until(lambda d: d.current_url.endswith("?variant=coding") and d.find_element(By.ID, "trial-count").text == "2 of 4 trials shown")
        visible = [r for r in driver.find_elements(By.CSS_SELECTOR, "#trials tbody tr") if r.is_displayed()]
        assert {r.get_attribute("data-variant") for r in visible} == {"coding"} and len(visible) == 2
        assert Select(driver.find_element(By.ID, "filter-variant")).first_selected_option.get_attribute("value") == "coding"
        Select(driver.find_element(By.ID, "filter-variant")).select_by_value("")
        wait.until(lambda d: d.current_url == base + "campaigns/1" and d.find_element(By.ID, "trial-count").text == "4 of 4 trials shown")
        assert driver.find_element(By.ID, "chain-ok").is_displayed()
        assert not driver.find_elements(By.ID, "chain-warning")

        driver.execute_script("window.scrollTo(0, 0)")
        screenshot = tmp_path / "campaign-view.png"
        assert driver.save_screenshot(str(screenshot)) and screenshot.stat().st_size > 10_000
        assert_no_canary(driver.page_source, "the campaign page")

        # The JSON endpoint, as the browser sees it, and its report is the report JSON.
        driver.get(base + "api/campaigns/1")
        assert_no_canary(driver.page_source, "the JSON endpoint in the browser")
        for path in ("api/campaigns", "api/campaigns/1", "api/campaigns/1/status"):
            with urllib.request.urlopen(base + path, timeout=30) as response:
                body = response.read().decode()
            assert_no_canary(body, path)
        with urllib.request.urlopen(base + "api/campaigns/1", timeout=30) as response:
            assert json.loads(response.read())["report"] == report

        # Everything above only read the store.
        assert fingerprint(store) == before

        # Auto-refresh: a running campaign's page polls, and reloads itself once the state changes
        # (the test plays the runner by writing the state; the view itself never writes).
        set_state(store, "running")
        driver.get(base + "campaigns/1")
        assert wait.until(lambda d: d.find_element(By.ID, "live")).is_displayed()
        set_state(store, "completed")
        WebDriverWait(driver, 30).until(lambda d: not d.find_elements(By.ID, "live"))
        assert driver.find_element(By.ID, "variants")

        # No script error and no Content-Security-Policy violation on any page.
        problems = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert problems == []
    finally:
        if driver is not None:
            driver.quit()
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, err
