"""The web UI in headless Chromium (crates/cli/tests/t82_web_ui.rs).

Debian's chromium (/usr/bin/chromium, see install-chromium.sh) driven by
Playwright: every page loads with status 200 and no console error, and
shows the cluster's real figures, which the Rust test took from RPC
answers and passes in EXPECTED_JSON. A screenshot of each page is saved
under the "screenshots" directory given there.

Usage: web_ui.py EXPECTED_JSON. Exit 0 = pass.
"""

import json
import os
import sys

from playwright.sync_api import sync_playwright


def main(path):
    with open(path) as f:
        exp = json.load(f)
    nn, dn, shots = exp["nn"], exp["dn"], exp["screenshots"]
    os.makedirs(shots, exist_ok=True)
    problems = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                    args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        errors = []
        page.on("console", lambda m: errors.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "assert") else None)
        page.on("pageerror", lambda e: errors.append(f"page error: {e}"))

        def visit(url, shot):
            errors.clear()
            resp = page.goto(url, wait_until="load")
            assert resp is not None and resp.status == 200, f"{url}: {resp and resp.status}"
            page.screenshot(path=os.path.join(shots, shot), full_page=True)
            if errors:
                problems.append(f"{url}: {errors}")

        def text(selector):
            return page.locator(selector).first.inner_text().strip()

        visit(f"http://{nn}/", "ui-overview.png")
        assert text("#cluster-id") == exp["cluster_id"], text("#cluster-id")
        assert text("#files-total") == str(exp["files_total"]), text("#files-total")
        assert text("#blocks-total") == str(exp["blocks_total"]), text("#blocks-total")
        assert text("#live-nodes") == str(exp["live_nodes"]), text("#live-nodes")
        assert text("#dead-nodes") == "0"
        assert text("#under-replicated") == str(exp["under_replicated"])
        assert text("#corrupt-blocks") == str(exp["corrupt_blocks"])
        assert text("#missing-blocks") == str(exp["missing_blocks"])
        assert text("#safe-mode") == "off"
        assert int(text("#current-txid")) >= exp["min_txid"], text("#current-txid")
        cap = page.locator("#capacity-total span").get_attribute("data-bytes")
        assert cap == str(exp["capacity"]), (cap, exp["capacity"])

        visit(f"http://{nn}/datanodes", "ui-datanodes.png")
        rows = page.locator("#datanodes tr[data-uuid]")
        assert rows.count() == exp["live_nodes"], rows.count()
        for uuid, blocks in exp["blocks_per_node"].items():
            row = page.locator(f'#datanodes tr[data-uuid="{uuid}"]')
            assert row.locator("td.blocks").inner_text().strip() == str(blocks), uuid
            assert "In Service" in row.inner_text()

        visit(f"http://{nn}/explorer?path={exp['dir']}", "ui-browse-directory.png")
        names = [e.strip().rstrip("/") for e in page.locator("#listing a.entry").all_inner_texts()]
        assert names == exp["listing"], names

        visit(f"http://{nn}/explorer?path={exp['file']}", "ui-browse-file.png")
        assert text("#file-length") == str(exp["file_length"])
        ids = page.locator("#blocks td.block-id").all_inner_texts()
        assert ids == exp["block_ids"], ids
        href = page.locator("#download").get_attribute("href")
        assert href.startswith("/webhdfs/v1" + exp["file"]) and "op=OPEN" in href, href

        visit(f"http://{nn}/config", "ui-config.png")
        assert "dfs.replication" in page.locator("#config").inner_text()

        visit(f"http://{nn}/logLevel?log=cairn_namenode::http", "ui-loglevel.png")
        assert text("#effective-level") in ("INFO", "DEBUG", "WARN", "ERROR", "TRACE")

        visit(f"http://{dn}/", "ui-datanode.png")
        assert text("#uuid") in exp["blocks_per_node"], text("#uuid")
        browser.close()
    if problems:
        raise AssertionError("console errors:\n" + "\n".join(problems))
    print(f"web_ui: ok, screenshots in {shots}")


if __name__ == "__main__":
    main(sys.argv[1])
