"""Records and tables of loss_sweep.sh (standard library only; run with Debian's /usr/bin/python3).

  sweep_report.py impairment RUN_DIR LOSS_PCT RATE_MBIT WALL_S STATUS RANK_RCS RULESET_DIR
      Write RUN_DIR/impairment.json: the impairment the ranks ran under, which dtbench's own
      config.json cannot know (loss percent, rate, method), the sweep's view of the run (wall time,
      every rank's exit code, STATUS: "finished", "timeout" or "interrupted") and, per rank, the
      namespace's `nft list ruleset` and `tc -s qdisc` as captured after the run, before teardown,
      with the drop rule's packet counter. RATE_MBIT 0 = no rate limit. RANK_RCS: comma-separated
      exit codes in rank order. RULESET_DIR holds nft-<rank>.txt and tc-<rank>.txt.
  DTBENCH=PATH sweep_report.py table OUT_DIR RUN_DIR...
      From each RUN_DIR's impairment.json, outcome (`dtbench status`), summary.json and batches.csv
      (in the order given) write
      OUT_DIR/slowdown.csv and OUT_DIR/slowdown.md and print the Markdown table. A failed run's
      error is dtbench's (summary.json), else the last line of its first failing rank's log
      (OUT_DIR/logs/<run>-rank<i>.log).

Columns: loss_pct; status (completed, or failed with the reason: a rank's exit code, dtbench's
error, a timeout, an interruption); epoch_time_s T = sum(step_s - data_s) over the last epoch, per
rank from batches.csv, the slowest rank's; comm_total_s = the same rank-maximum of the last epoch's
sum of comm_total_s; wall_s = launch of the ranks to the exit of the last (process start, data
synthesis and rendezvous included); slowdown = T / T at 0 % loss (empty without a completed 0 % run
or for a failed run); dropped_packets = packets the nftables rules dropped, all namespaces;
arrived_packets = packets that arrived on the namespaces' veths while the rule was in place (none
counted at 0 %, where there is no table); observed_loss_pct = dropped / arrived; tbf_dropped_packets =
packets tbf dropped (`tc -s qdisc`, all namespaces; its queue overflowing, not the loss rule). With
loss_sweep.sh --capture (RUN_DIR/wire/, docs/wire.md), as seen on the wire at the senders' veths:
retransmitted_packets (segments that repeated sequence bytes already sent), fast_retransmits (after
a duplicate ACK or SACK from the receiver), probe_retransmits (neither, sooner than the 200 ms minimum
RTO: RACK or a tail-loss probe, docs/wire.md) and timeout_retransmits (neither, later: a
retransmission timeout); empty without a capture.
"""
import csv
import json
import os
import re
import subprocess
import sys

COLUMNS = ["loss_pct", "status", "epoch_time_s", "comm_total_s", "wall_s", "slowdown", "dropped_packets",
           "arrived_packets", "observed_loss_pct", "steps", "run_dir", "error", "tbf_dropped_packets",
           "retransmitted_packets", "fast_retransmits", "probe_retransmits", "timeout_retransmits"]


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def impairment(run_dir, loss_pct, rate_mbit, wall_s, status, rank_rcs, ruleset_dir):
    ranks = []
    for rank, rc in enumerate(rank_rcs.split(",")):
        ruleset = read_text(os.path.join(ruleset_dir, f"nft-{rank}.txt"))
        drop_lines = [line for line in ruleset.splitlines() if "numgen random mod 10000" in line]
        arrived_lines = [line for line in ruleset.splitlines() if '"dtbench impair: arrived"' in line]
        ranks.append({
            "rank": rank,
            "exit_code": int(rc) if rc.lstrip("-").isdigit() else None,
            "drop_rules": len(drop_lines),
            "dropped_packets": sum(int(n) for line in drop_lines for n in re.findall(r"counter packets (\d+)", line)),
            "arrived_packets": sum(int(n) for line in arrived_lines for n in re.findall(r"counter packets (\d+)", line)),
            "nft_ruleset": ruleset,
            "tc_qdisc": read_text(os.path.join(ruleset_dir, f"tc-{rank}.txt")),
            "tcp_congestion_control": read_text(os.path.join(ruleset_dir, f"cc-{rank}.txt")).strip() or None,
        })
    rate = float(rate_mbit)
    record = {
        "loss_pct": float(loss_pct),
        "loss_rule_n": round(float(loss_pct) * 100),
        "rate_mbit": rate if rate > 0 else None,
        "method": "nftables numgen drop on input, tc tbf",
        "loss_detail": "each namespace drops `numgen random mod 10000 < loss_rule_n` of the packets arriving on its veth "
                       "(input hook, receiving side; loopback never); 0 % = no rule",
        "rate_detail": "tc tbf root qdisc on every namespace's veth (egress)" if rate > 0 else "none",
        "sweep_status": status,
        "wall_s": float(wall_s),
        "dropped_packets": sum(r["dropped_packets"] for r in ranks),
        "arrived_packets": sum(r["arrived_packets"] for r in ranks),
        "ranks": ranks,
    }
    os.makedirs(run_dir, exist_ok=True)
    tmp = os.path.join(run_dir, "impairment.json.tmp")
    with open(tmp, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    os.replace(tmp, os.path.join(run_dir, "impairment.json"))


def last_epoch_times(run_dir):
    """(T, comm, steps): the slowest rank's sums over the last epoch of batches.csv, or None."""
    path = os.path.join(run_dir, "batches.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return None
    last = max(int(r["epoch"]) for r in rows)
    per_rank = {}
    for r in rows:
        if int(r["epoch"]) != last:
            continue
        t, c, n = per_rank.get(r["rank"], (0.0, 0.0, 0))
        per_rank[r["rank"]] = (t + float(r["step_s"]) - float(r["data_s"]), c + float(r["comm_total_s"]), n + 1)
    return (max(v[0] for v in per_rank.values()), max(v[1] for v in per_rank.values()),
            max(v[2] for v in per_rank.values()))


def last_log_line(out_dir, run_dir, rank):
    """The last non-empty line of a rank's log (loss_sweep.sh: OUT_DIR/logs/<run>-rank<i>.log)."""
    text = read_text(os.path.join(out_dir, "logs", f"{os.path.basename(run_dir.rstrip('/'))}-rank{rank}.log"))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def tbf_dropped(record):
    """Packets the tbf qdiscs dropped, all namespaces (`dropped N` of `tc -s qdisc`)."""
    return sum(int(n) for r in record["ranks"] for n in re.findall(r"dropped (\d+)", r.get("tc_qdisc", "")))


def wire_retransmissions(run_dir):
    """(all, fast, probe, timeout) retransmitted segments from RUN_DIR/wire/wire_retransmissions.csv, or None."""
    path = os.path.join(run_dir, "wire", "wire_retransmissions.csv")
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        kinds = [r["kind"] for r in csv.DictReader(f)]
    return len(kinds), kinds.count("fast"), kinds.count("probe"), kinds.count("timeout")


def run_outcome(run_dir):
    """`dtbench status --json RUN_DIR`: the run's outcome and its facts; None for a directory that holds no
    run or a summary.json dtbench cannot read."""
    got = subprocess.run([os.environ["DTBENCH"], "status", "--json", run_dir], capture_output=True, text=True)
    return json.loads(got.stdout) if got.returncode == 0 else None


def row_of(out_dir, run_dir):
    record = json.load(open(os.path.join(run_dir, "impairment.json")))
    try:
        summary = json.load(open(os.path.join(run_dir, "summary.json")))
    except (OSError, ValueError):
        summary = {}
    rcs = [r["exit_code"] for r in record["ranks"]]
    status, error = "completed", ""
    if record["sweep_status"] == "timeout":
        status, error = "failed", f"timed out after {record['wall_s']:.0f} s"
    elif record["sweep_status"] == "interrupted":
        status, error = "interrupted", "the sweep was interrupted"
    elif any(rc != 0 for rc in rcs):
        status = "failed"
        error = "; ".join(f"rank {i} exit {rc}" for i, rc in enumerate(rcs) if rc != 0)
    elif not (outcome := run_outcome(run_dir)) or not outcome["complete"]:
        status = "failed"
        error = f"summary.json status {outcome['status'] if outcome else 'missing'}"
    if summary.get("error"):
        error = (error + "; " if error else "") + str(summary["error"]).replace("\n", " ")[:300]
    elif status == "failed" and record["sweep_status"] != "timeout":
        first = next((i for i, rc in enumerate(rcs) if rc != 0), None)
        line = last_log_line(out_dir, run_dir, first) if first is not None else ""
        if line:
            error += f"; rank {first}'s log ends: {line}"
    row = {"loss_pct": f"{record['loss_pct']:g}", "status": status, "epoch_time_s": "", "comm_total_s": "",
           "wall_s": f"{record['wall_s']:.2f}", "slowdown": "", "dropped_packets": record["dropped_packets"],
           "arrived_packets": record.get("arrived_packets", 0), "observed_loss_pct": "", "steps": "", "run_dir": run_dir, "error": error}
    row["tbf_dropped_packets"] = tbf_dropped(record)
    wire = wire_retransmissions(run_dir)
    (row["retransmitted_packets"], row["fast_retransmits"], row["probe_retransmits"],
     row["timeout_retransmits"]) = wire if wire else ("", "", "", "")
    if record.get("arrived_packets"):
        row["observed_loss_pct"] = f"{100.0 * record['dropped_packets'] / record['arrived_packets']:.3f}"
    times = last_epoch_times(run_dir) if status == "completed" else None
    if times:
        row["epoch_time_s"], row["comm_total_s"], row["steps"] = f"{times[0]:.4f}", f"{times[1]:.4f}", times[2]
    return row


def table(out_dir, run_dirs):
    rows = [row_of(out_dir, d) for d in run_dirs if os.path.exists(os.path.join(d, "impairment.json"))]
    base = next((float(r["epoch_time_s"]) for r in rows
                 if float(r["loss_pct"]) == 0 and r["status"] == "completed" and r["epoch_time_s"]), None)
    for r in rows:
        if base and r["epoch_time_s"]:
            r["slowdown"] = f"{float(r['epoch_time_s']) / base:.3f}"
    with open(os.path.join(out_dir, "slowdown.csv.tmp"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    os.replace(os.path.join(out_dir, "slowdown.csv.tmp"), os.path.join(out_dir, "slowdown.csv"))
    lines = ["| loss % | status | epoch time T (s) | comm_total_s | wall_s | slowdown | dropped / arrived packets "
             "| tbf drops | retransmissions on the wire (fast / probe / timeout) |",
             "|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        status = r["status"] + (f" ({r['error']})" if r["error"] else "")
        lines.append(f"| {r['loss_pct']} | {status} | {r['epoch_time_s'] or '-'} | {r['comm_total_s'] or '-'} | "
                     f"{r['wall_s']} | {r['slowdown'] or '-'} | {r['dropped_packets']} / {r['arrived_packets'] or '-'} | "
                     f"{r['tbf_dropped_packets']} | "
                     + (f"{r['retransmitted_packets']} ({r['fast_retransmits']} / {r['probe_retransmits']} / "
                        f"{r['timeout_retransmits']})"
                        if r["retransmitted_packets"] != "" else "-") + " |")
    lines.append("")
    lines.append("T = sum(step_s - data_s) over the last epoch, slowest rank (batches.csv); comm_total_s likewise; "
                 "wall_s = launch to exit of the last rank; slowdown = T / T(0 %)"
                 + ("" if base else " (no completed 0 % run: no slowdown)") + ".")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out_dir, "slowdown.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


def main(argv):
    if len(argv) == 9 and argv[1] == "impairment":
        impairment(*argv[2:])
    elif len(argv) >= 3 and argv[1] == "table" and os.environ.get("DTBENCH"):
        table(argv[2], argv[3:])
    else:
        sys.exit("usage: sweep_report.py impairment RUN_DIR LOSS_PCT RATE_MBIT WALL_S STATUS RANK_RCS RULESET_DIR\n"
                 "       DTBENCH=PATH sweep_report.py table OUT_DIR RUN_DIR...")


if __name__ == "__main__":
    main(sys.argv)
