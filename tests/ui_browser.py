"""Walks through fleetform's live view as a user would, in headless Chromium.

Arguments: URL GOOD_TOKEN BAD_TOKEN SCREENSHOT_DIR. The coordinator at URL
is applying (or about to apply) a run with the resources sim_object.net,
sim_object.server (many instances) and a failing sim_object.broken. Steps:
sign in with a wrong token (refused), then the right one; find the run in
the list; open it while it applies (screenshot start.png); expand
sim_object.server; wait for the end (screenshot end.png); back on the
runs page, wait for the drift the test makes after the run and a plan
finds (screenshot drift.png). Prints a JSON
object of what each step showed; the Rust test asserts on it.
"""

import json
import os
import sys
import time

from playwright.sync_api import sync_playwright

url, good, bad, shots = sys.argv[1:5]
obs = {}


def counts(page):
    return {
        k: int(page.inner_text(f"#count-{k}"))
        for k in ("total", "pending", "running", "done", "failed")
    }


def wait_until(page, check, what, timeout=60):
    """Polls `check(page)` from here: the page's CSP (script-src 'self')
    refuses the string evaluation Playwright's wait_for_function uses."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if check(page):
            return
        time.sleep(0.1)
    raise SystemExit(f"timed out after {timeout} s waiting for {what}; page text:\n{page.inner_text('body')}")


def groups(page):
    return page.eval_on_selector_all(
        "g[data-group]",
        "els => els.map(e => [e.dataset.group, e.dataset.state])",
    )


with sync_playwright() as p:
    browser = p.chromium.launch(
        executable_path=os.environ["FLEETFORM_CHROMIUM"],
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    )
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))

    page.goto(url + "/")
    obs["unsigned_url"] = page.url
    page.fill("#token", bad)
    page.click("button[type=submit]")
    obs["bad_token_error"] = page.inner_text("#login-error")
    page.fill("#token", good)
    page.click("button[type=submit]")
    page.wait_for_selector("table#runs", timeout=30_000)
    # The refused sign-in's 401 is logged by the browser; it is expected.
    errors.clear()
    # Signed in: the test starts the run now.
    open(os.path.join(shots, "signed-in"), "w").close()
    page.wait_for_selector("tr[data-run] a", timeout=60_000)
    obs["runs"] = page.eval_on_selector_all("tr[data-run]", "els => els.map(e => e.dataset.run)")
    page.click("tr[data-run] a")
    wait_until(
        page,
        lambda p: p.inner_text("#phase") == "applying" and int(p.inner_text("#count-done")) > 0,
        "the run to apply",
    )
    page.wait_for_selector("g[data-group]")
    obs["start"] = {
        "url": page.url,
        "phase": page.inner_text("#phase"),
        "counts": counts(page),
        "groups": groups(page),
        "edges": page.eval_on_selector_all(
            "path.edge", "els => els.map(e => [e.dataset.from, e.dataset.to])"
        ),
    }
    page.screenshot(path=os.path.join(shots, "start.png"), full_page=True)

    page.click('g[data-group="sim_object.server"]')
    page.wait_for_selector('div[data-expanded="sim_object.server"] tr[data-instance]', timeout=30_000)
    obs["expanded"] = page.eval_on_selector_all(
        'div[data-expanded="sim_object.server"] tr[data-instance]',
        "els => els.map(e => [e.dataset.instance, e.children[2].textContent])",
    )

    wait_until(page, lambda p: p.inner_text("#phase") == "finished", "the run to finish", 180)
    obs["end"] = {
        "phase": page.inner_text("#phase"),
        "status": page.inner_text("#status"),
        "counts": counts(page),
        "groups": groups(page),
        "errors": page.eval_on_selector_all("#errors li", "els => els.map(e => e.innerText)"),
        "summary": page.inner_text("#summary"),
        "expanded_statuses": sorted(
            set(
                page.eval_on_selector_all(
                    'div[data-expanded="sim_object.server"] tr[data-instance]',
                    "els => els.map(e => e.children[2].textContent)",
                )
            )
        ),
        "slowest": page.eval_on_selector_all("#slowest tbody tr", "els => els.length"),
    }
    page.screenshot(path=os.path.join(shots, "end.png"), full_page=True)

    # The test changes an object outside fleetform and plans: the runs page
    # lists the drift that plan found.
    page.goto(url + "/")
    page.wait_for_selector("tr[data-drift]", timeout=120_000)
    obs["drift"] = page.eval_on_selector_all(
        "#drift tbody tr",
        "els => els.map(e => Array.from(e.children).slice(0, 3).map(c => c.textContent))",
    )
    obs["drift_empty_hidden"] = page.eval_on_selector("#drift-empty", "e => e.hidden")
    page.screenshot(path=os.path.join(shots, "drift.png"), full_page=True)
    obs["console_errors"] = errors
    browser.close()

print(json.dumps(obs))
