# private_daemons.sh: pieces shared by every private Slurm this project starts (sourced, never run):
# experiments/cluster/cluster.sh and tests/slurm/live_slurm.sh. No state, no `set` options changed.
#
#   pd_live_pid FILE MARK     the pid in FILE when it names a live process whose command line contains
#                             MARK (so a recycled pid is never taken for the daemon); status 1 otherwise
#   pd_show_log FILE          the last lines of FILE on stderr, framed
#   pd_start_munge DIR LOGS   munged with a key and socket of its own in DIR (DIR/munge.key,
#                             DIR/munge.socket, DIR/munged.pid written by munged itself), logs in LOGS;
#                             returns once a credential round-trips, or 1 after 5 s with the logs shown.
#                             DIR and its parents must not be writable by group or others (munged
#                             refuses them): make DIR 0700 or 0755.
#   pd_start_mariadb DIR LOGS PORT
#                             a MariaDB server of its own: data in DIR/data (made by mariadb-install-db),
#                             socket DIR/mariadb.sock, pid DIR/mariadb.pid, TCP on 127.0.0.1:PORT, log
#                             LOGS/mariadb.log; --no-defaults, so nothing under /etc/mysql is read. Small
#                             buffers, no performance_schema, no fsync per commit (its data is thrown
#                             away with it). Returns once it answers a ping, or 1 after 30 s with the log
#                             shown. root@localhost (socket), root@127.0.0.1 and root@::1 have no
#                             password: drop the TCP ones unless every local user may use the server.

pd_live_pid() {
  local file=$1 mark=$2 pid
  [[ -s $file ]] || return 1
  pid=$(tr -dc 0-9 <"$file")
  [[ -n $pid && -r /proc/$pid/cmdline ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$mark" || return 1
  echo "$pid"
}

pd_show_log() {
  echo "---- last lines of $1 ----" >&2
  tail -n 30 "$1" >&2 2>/dev/null || echo "(no log written)" >&2
  echo "----" >&2
}

pd_start_munge() {
  local dir=$1 logs=$2 key=$1/munge.key sock=$1/munge.socket i munged
  if ! mungekey --create --keyfile="$key" --bits=1024 >"$logs/mungekey.log" 2>&1; then
    pd_show_log "$logs/mungekey.log"
    echo "mungekey could not create $key" >&2
    return 1
  fi
  chmod 0600 "$key"
  setsid munged --foreground --force --key-file="$key" --socket="$sock" --pid-file="$dir/munged.pid" \
    --log-file="$logs/munged.log" --seed-file="$dir/munged.seed" </dev/null >>"$logs/munged.out" 2>&1 &
  munged=$!
  for i in $(seq 1 100); do
    [[ -S $sock ]] && munge --socket="$sock" -n </dev/null 2>/dev/null | unmunge --socket="$sock" >/dev/null 2>&1 &&
      return 0
    kill -0 "$munged" 2>/dev/null || break
    sleep 0.05
  done
  pd_show_log "$logs/munged.log"
  pd_show_log "$logs/munged.out"
  echo "munged did not come up on $sock" >&2
  return 1
}

pd_start_mariadb() {
  local dir=$1 logs=$2 port=$3 pid
  local opts=(--innodb-buffer-pool-size=16M --innodb-log-file-size=16M --innodb-log-buffer-size=4M
    --innodb-flush-log-at-trx-commit=0 --innodb-doublewrite=0 --innodb-lock-wait-timeout=900
    --performance-schema=OFF --skip-log-bin --skip-name-resolve --max-connections=32)
  mkdir -p "$dir/data" "$dir/tmp"
  if ! mariadb-install-db --no-defaults --user=root --datadir="$dir/data" --auth-root-authentication-method=normal \
    --skip-test-db "${opts[@]}" >"$logs/mariadb-install-db.log" 2>&1; then
    pd_show_log "$logs/mariadb-install-db.log"
    echo "mariadb-install-db could not create $dir/data" >&2
    return 1
  fi
  setsid mariadbd --no-defaults --user=root --datadir="$dir/data" --tmpdir="$dir/tmp" --socket="$dir/mariadb.sock" \
    --pid-file="$dir/mariadb.pid" --port="$port" --bind-address=127.0.0.1 --log-error="$logs/mariadb.log" \
    "${opts[@]}" </dev/null >>"$logs/mariadb.out" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    mariadb-admin --no-defaults --socket="$dir/mariadb.sock" -uroot ping >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  pd_show_log "$logs/mariadb.log"
  echo "mariadbd did not come up on $dir/mariadb.sock (port $port)" >&2
  return 1
}
