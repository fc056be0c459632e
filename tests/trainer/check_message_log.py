"""Checks the files of --message-log DIR (docs/wire.md, "Message log") of a run of WORLD ranks:
messages.rank<R>.csv and sockets.rank<R>.csv for every rank, with their headers; indices 0, 1, ... in
order, every t_done_s (when present) at or after t_post_s, every op and category a known one, send rows
from the rank and recv rows to it, collectives with dst -1; with --traffic, every rank's `gradients`
send bytes per destination equal traffic.csv's counted bytes (src = that rank); with --category C, at
least one row of category C per rank; every rank's sockets list an established socket (state 01) at
`start` and at `end`.
Usage: /usr/bin/python3 check_message_log.py DIR WORLD [--traffic RUN/traffic.csv] [--category C ...]
Prints one line; exits 1 when anything is wrong."""
import argparse
import collections
import csv
import sys

OPS = {"send", "recv", "allreduce", "broadcast", "allgather", "barrier"}
CATEGORIES = {"gradients", "buffers", "initial", "parameters", "control"}


def problems(d, world, traffic, categories):
    found = []
    counted = collections.Counter()
    if traffic:
        for row in csv.DictReader(open(traffic)):
            if row["kind"] == "counted":
                counted[(int(row["src"]), int(row["dst"]))] += int(row["bytes"])
    logged = collections.Counter()
    rows_total = 0
    for rank in range(world):
        try:
            with open(f"{d}/messages.rank{rank}.csv") as f:
                header = f.readline().strip()
                rows = list(csv.DictReader(f, fieldnames=header.split(",")))
            with open(f"{d}/sockets.rank{rank}.csv") as f:
                sockets_header = f.readline().strip()
                sockets = list(csv.DictReader(f, fieldnames=sockets_header.split(",")))
        except OSError as e:
            found.append(f"rank {rank}: {e}")
            continue
        if header != "index,t_post_s,t_done_s,op,src,dst,bytes,category":
            found.append(f"rank {rank}: messages header {header!r}")
            continue
        if sockets_header != "rank,host,pid,when,local,remote,state":
            found.append(f"rank {rank}: sockets header {sockets_header!r}")
            continue
        rows_total += len(rows)
        seen = set()
        for i, row in enumerate(rows):
            where = f"rank {rank} row {i}"
            if int(row["index"]) != i:
                found.append(f"{where}: index {row['index']}")
                break
            if row["op"] not in OPS or row["category"] not in CATEGORIES:
                found.append(f"{where}: op {row['op']!r} category {row['category']!r}")
                break
            if row["t_done_s"] and float(row["t_done_s"]) < float(row["t_post_s"]):
                found.append(f"{where}: done before posted")
                break
            src, dst = int(row["src"]), int(row["dst"])
            if (row["op"] == "send" and src != rank) or (row["op"] == "recv" and dst != rank) or \
               (row["op"] not in ("send", "recv") and dst != -1):
                found.append(f"{where}: {row['op']} src {src} dst {dst}")
                break
            seen.add(row["category"])
            if row["op"] == "send" and row["category"] == "gradients":
                logged[(rank, dst)] += int(row["bytes"])
        for category in categories:
            if category not in seen:
                found.append(f"rank {rank}: no {category} row")
        for when in ("start", "end"):
            established = [s for s in sockets if s["when"] == when and s["state"] == "01"]
            if not established:
                found.append(f"rank {rank}: no established socket at {when}")
            if any(s["rank"] != str(rank) or not s["host"] or not s["pid"].isdigit() for s in sockets):
                found.append(f"rank {rank}: a socket row without its rank, host or pid")
                break
    if traffic and +logged != +counted:
        found.append(f"gradients send bytes {dict(logged)} differ from traffic.csv's counted {dict(counted)}")
    if traffic and not counted:
        found.append("traffic.csv has no counted bytes")
    return found, rows_total, sum(logged.values())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("world", type=int)
    parser.add_argument("--traffic")
    parser.add_argument("--category", action="append", default=[])
    args = parser.parse_args()
    found, rows, sent = problems(args.dir, args.world, args.traffic, args.category)
    if found:
        print("; ".join(found))
        sys.exit(1)
    print(f"{rows} logged operations over {args.world} ranks, {sent} gradient bytes sent"
          + (" = traffic.csv's counted bytes" if args.traffic else ""))


if __name__ == "__main__":
    main()
