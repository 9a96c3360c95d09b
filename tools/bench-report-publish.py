#!/usr/bin/env python3
"""Builds docs/benchmarks.md, docs/benchmarks/<name>/*.svg and the README's benchmark block from
the result directories that `shardbench matrix` and `shardbench scenario` wrote (report.md,
results.json and charts in each). Called by tools/bench-report.sh; safe to rerun. Refuses (exit 2,
nothing written) when a result ran at the quick scale, which is a smoke test, not a measurement;
--allow-quick publishes it anyway to preview the layout."""

import argparse
import json
import os
import re
import shutil
import sys

ORDER = [
    "matrix",
    "kuaijie-connections",
    "kuaijie-data-sizes",
    "kuaijie-pipeline",
    "kuaijie-short-connections",
    "enhanced-connections",
    "enhanced-data-sizes",
    "codis-long-connections",
    "rta-mix",
    "ycsb",
]
BEGIN = "<!-- bench:begin -->"
END = "<!-- bench:end -->"
KEEP_BEGIN = "<!-- bench:manual:begin -->"
KEEP_END = "<!-- bench:manual:end -->"


# The public reports the scenarios reproduce, named as their publishers title them.
SOURCES = ("public stress reports: UCloud's Kuaijie primary/standby Redis test (with its "
           "performance-enhanced and distributed-proxy sections), Huawei Cloud's GeminiDB Redis "
           "RTA performance test, Alibaba Cloud's Tair SSD-edition performance whitepaper (YCSB) "
           "and a Codis proxy long-connection test")


def load(results, name):
    d = os.path.join(results, name)
    try:
        with open(os.path.join(d, "results.json"), encoding="utf-8") as f:
            data = json.load(f)
        with open(os.path.join(d, "report.md"), encoding="utf-8") as f:
            report = f.read()
    except OSError:
        return None
    return {"name": name, "dir": d, "json": data, "report": report}


def anchor(title):
    a = re.sub(r"[^\w\- ]", "", title.lower(), flags=re.UNICODE).strip().replace(" ", "-")
    return a


def rewrite(run, charts_dir, docs_dir):
    """The run's report.md for docs/benchmarks.md: headings one level down, chart links into
    docs/benchmarks/<name>/, the run log folded away."""
    name = run["name"]
    target = os.path.join(charts_dir, name)
    os.makedirs(target, exist_ok=True)
    for f in os.listdir(target):
        if f.endswith(".svg"):
            os.remove(os.path.join(target, f))
    for f in sorted(os.listdir(run["dir"])):
        if f.endswith(".svg"):
            shutil.copyfile(os.path.join(run["dir"], f), os.path.join(target, f))
    rel = os.path.relpath(target, docs_dir)
    text = run["report"]
    notes = proxy_log_notes(run)
    if notes:
        # After the header list (the first blank line after "- **" lines).
        at = text.find("\n\n", text.find("\n- **"))
        text = text[:at] + "\n" + notes + text[at:] if at >= 0 else text + "\n" + notes
    text = re.sub(r"!\[([^\]]*)\]\(([^)/]+\.svg)\)", lambda m: "![%s](%s/%s)" % (
        m.group(1), rel, m.group(2)), text)
    text = re.sub(r"^(#+) ", lambda m: "#" + m.group(1) + " ", text, flags=re.M)
    for heading in ("### Runs", "### Cells"):
        at = text.find("\n" + heading + "\n")
        if at >= 0:
            body = text[at + len(heading) + 2:]
            text = (text[:at] + "\n<details><summary>" + heading[4:] +
                    ": every run and its shardbench command</summary>\n" + body.rstrip() +
                    "\n\n</details>\n")
    return text


def proxy_log_notes(run):
    """Warnings the proxies this run started logged (for results written before shardbench put
    them in report.md itself)."""
    if "logged " in run["report"]:
        return ""
    logs = os.path.join(run["dir"], "logs")
    notes = []
    for f in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
        if not (f.startswith("shardproxy") or f.startswith("proxy-")) or not f.endswith(".log"):
            continue
        with open(os.path.join(logs, f), encoding="utf-8", errors="replace") as fh:
            bad = [l.rstrip() for l in fh if re.search(r"\[(warning|error|critical)\]", l)]
        if bad:
            notes.append("- **warning**: %s logged %d warning or error line(s) during the run; "
                         "the first: `%s`" % (f[:-4], len(bad), bad[0][:300]))
    return "\n".join(notes)


def run_scale(run):
    """"quick" or "full": results.json's scale (older matrix results: from the command line,
    where shardbench matrix runs at quick unless told otherwise)."""
    j = run["json"]
    if j.get("scale"):
        return j["scale"]
    return "full" if re.search(r"--scale[= ]full", j.get("command_line", "")) else "quick"


def placement(runs):
    """Where the proxy, the shards and the client ran, said once for the whole page: every run's
    CPU budget when they all had the same one, else a pointer to each section's own."""
    texts = {r["json"].get("cpu_budget", {}).get("text", "") for r in runs}
    texts.discard("")
    if not texts or all(t.startswith("unpinned") for t in texts):
        return "client, proxy and shards on the same CPUs"
    if len(texts) == 1:
        return "every run pinned as %s" % texts.pop()
    return "the runs were pinned differently; each section states its CPU budget"


def summary_row(run):
    j = run["json"]
    if j["kind"] == "matrix":
        title = "Proxy workers × shards (SET/GET)"
        seed = "000 § Kiểm thử hiệu năng Proxy"
        cells = [c for c in j["cells"]]
        bad = sum(1 for c in cells if c["status"] != "ok")
        status = "%d cells, %d failed" % (len(cells), bad)
    else:
        title = j["scenario"]["title"]
        seed = j["scenario"]["seed_file"][:3] + " § " + j["scenario"]["seed_section"].split("›")[-1].strip()
        ms = j["measurements"]
        counts = {}
        for m in ms:
            counts[m["status"]] = counts.get(m["status"], 0) + 1
        status = ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items()))
    scale = run_scale(run)
    return "| [%s](#%s) | %s | %s | %.0f s | %s |" % (
        run["name"], anchor(first_heading(run["report"])), seed.replace("|", "/"), scale,
        j["wall_s"], status)


def first_heading(report):
    for line in report.splitlines():
        if line.startswith("# "):
            return line[2:]
    return ""


def section(report, heading):
    """The body of `## heading` in a report (up to the next heading of that level)."""
    m = re.search(r"^## " + re.escape(heading) + r"\n(.*?)(?=^## |\Z)", report, re.M | re.S)
    return m.group(1).strip() if m else ""


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--results", required=True)
    p.add_argument("--scale", default="")
    p.add_argument("--docs", required=True)
    p.add_argument("--charts", required=True)
    p.add_argument("--readme", required=True)
    p.add_argument("--allow-quick", action="store_true",
                   help="publish quick (smoke test) results anyway, to preview the page layout; "
                   "their titles say they are not measurements")
    a = p.parse_args()

    names = [n for n in ORDER]
    for f in sorted(os.listdir("conf/scenarios")) if os.path.isdir("conf/scenarios") else []:
        if f.endswith(".yaml") and f[:-5] not in names:
            names.append(f[:-5])
    runs = [r for r in (load(a.results, n) for n in names) if r is not None]
    if not runs:
        print("bench-report: no results under %s" % a.results, file=sys.stderr)
        return 1
    missing = [n for n in names if n not in {r["name"] for r in runs}]
    quick = [r["name"] for r in runs if run_scale(r) == "quick"]
    if quick and not a.allow_quick:
        print("bench-report: refusing to publish quick results (a smoke test, not a measurement): "
              "%s under %s. Rerun them at the full scale, one at a time: tools/bench-report.sh "
              "--scale full --only NAME. Nothing was written." % (", ".join(quick), a.results),
              file=sys.stderr)
        return 2

    keep = ""
    if os.path.exists(a.docs):
        with open(a.docs, encoding="utf-8") as f:
            old = f.read()
        i, k = old.find(KEEP_BEGIN), old.find(KEEP_END)
        if i >= 0 and k > i:
            keep = old[i:k + len(KEEP_END)] + "\n"

    docs_dir = os.path.dirname(os.path.abspath(a.docs))
    charts_dir = os.path.abspath(a.charts)
    out = ["# Benchmarks: the seed stress reports reproduced", ""]
    out.append("<!-- Generated by tools/bench-report.sh from %s; do not edit (edits between the "
               "bench:manual markers are kept). -->" % a.results)
    out.append("")
    out.append("Each section below is one table of a seed stress report, one of the "
               "%s, " % SOURCES +
               "rerun on this machine by `shardbench matrix` or `shardbench scenario "
               "conf/scenarios/NAME.yaml`, with the seed's published numbers as extra rows and "
               "the exact commands at the end of each section. The machine is small (%d CPUs; "
               "%s), so read the shapes and the ratios, not the absolute numbers, against the "
               "seed's dedicated hardware." % (max(r["json"].get("nproc", 0) for r in runs),
                                              placement(runs)))
    out.append("")
    if any(r["json"].get("repeat", 1) > 1 for r in runs):
        out.append("Runs repeated with `--repeat` show each cell's median and (min–max) of the "
                   "repetitions, and their charts draw the range; a ratio between targets whose "
                   "ranges overlap reads \"within noise\", and a best matrix cell is named only "
                   "when no other cell's range overlaps its own. Each section states its CPU "
                   "budget: which CPUs the proxy, the shards and the client had.")
        out.append("")
    out.append("Regenerate everything: `tools/bench-report.sh --scale full --only NAME` for each "
               "NAME below (one at a time), or `tools/bench-report.sh --publish-only --results "
               "DIR` to rebuild this page from existing results.")
    out.append("")
    out.append("| run | seed table | scale | wall time | points |")
    out.append("|---|---|---|--:|---|")
    for r in runs:
        out.append(summary_row(r))
    if missing:
        out.append("")
        out.append("Not in this result set: " + ", ".join(missing) + ".")
    out.append("")
    for r in runs:
        out.append(rewrite(r, charts_dir, docs_dir).rstrip())
        out.append("")
    if keep:  # the hand-written sections follow the reproduced tables
        out.append(keep)
    os.makedirs(docs_dir, exist_ok=True)
    with open(a.docs, "w", encoding="utf-8") as f:
        f.write("\n".join(out).rstrip() + "\n")

    # README block: the headline matrix and links to every section.
    block = [BEGIN, ""]
    matrix = next((r for r in runs if r["name"] == "matrix"), None)
    if matrix is not None:
        rel = os.path.relpath(os.path.join(charts_dir, "matrix"),
                              os.path.dirname(os.path.abspath(a.readme)))
        j = matrix["json"]
        block.append("The headline table of the seed (000, \"Kiểm thử hiệu năng Proxy\"): SET and GET "
                     "requests per second by shards × proxy workers, from `%s` on %d CPUs "
                     "(%s; † more proxy workers than the proxy's CPUs)." %
                     (j["command_line"], j["nproc"], placement([matrix])))
        block.append("")
        for op in ("SET", "GET"):
            body = ""
            for line in matrix["report"].split("\n## "):
                if line.startswith(op + " requests per second"):
                    body = line.split("\n", 1)[1]
            table = "\n".join(l for l in body.strip().splitlines() if l.startswith("|"))
            block.append("**%s**\n\n%s\n" % (op, table))
        charts = sorted(f for f in os.listdir(matrix["dir"])
                        if re.match(r"matrix-(set|get)(-quick)?\.svg$", f))
        block.append(" ".join("![%s heat map](%s/%s)" % (f.split("-")[1].split(".")[0].upper(),
                                                          rel, f) for f in reversed(charts)))
        block.append("")
    block.append("Every seed table reproduced, with the seed's numbers beside ours, charts and "
                 "commands: [docs/benchmarks.md](docs/benchmarks.md) — "
                 + ", ".join("[%s](docs/benchmarks.md#%s)" % (
                     r["name"], anchor(first_heading(r["report"]))) for r in runs) +
                 ". Regenerate with `tools/bench-report.sh`.")
    block.append("")
    block.append(END)
    with open(a.readme, encoding="utf-8") as f:
        readme = f.read()
    i, k = readme.find(BEGIN), readme.find(END)
    if i < 0 or k < i:
        print("bench-report: %s has no %s ... %s block; docs written, README left alone" %
              (a.readme, BEGIN, END), file=sys.stderr)
    else:
        readme = readme[:i] + "\n".join(block) + readme[k + len(END):]
        with open(a.readme, "w", encoding="utf-8") as f:
            f.write(readme)
        print("bench-report: updated the benchmark block of %s" % a.readme, file=sys.stderr)
    print("bench-report: wrote %s (%d runs)" % (a.docs, len(runs)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
