# Pre-flight of the sqliosim role on one host (tasks/preflight.yml sets the environment):
# prints one line per reason to refuse the host and exits 1, or prints nothing and exits 0.
# Reads only: nothing is created, moved or started.
#   RD       the remote directory, holding the shipped binary and configuration
#   DIRS     the data directories, one a line; DEVICES the device of each, by position (or none)
#   NEED_MB  the room a file set needs in each directory; FILES its file names, one a line
#   DURATION the --duration, in seconds, for the dry run
#   ROOT_OK  "true" lets a directory without a device be on the root filesystem
set -u
bad=0
say() { echo "$*"; bad=1; }

# The binary runs here (architecture, libc) and takes the configuration and options.
if ! out=$("$RD/sqliosim" --version 2>&1); then
  say "$RD/sqliosim does not run on this host: $(printf '%s' "$out" | head -c 300)"
else
  set --
  for d in $DIRS; do set -- "$@" --dir "$d"; done
  if ! out=$("$RD/sqliosim" run --config "$RD/sqliosim.cfg.ini" --duration "$DURATION" "$@" --dry-run 2>&1 >/dev/null); then
    say "sqliosim run --dry-run refuses the configuration: $(printf '%s' "$out" | tail -n 3 | head -c 500)"
  fi
fi

# Each directory, or the nearest of its parents that exists (the role creates it).
i=0
for dir in $DIRS; do
  i=$((i + 1))
  d=$dir
  while [ ! -e "$d" ]; do d=$(dirname "$d"); done
  dev=$(printf '%s\n' "$DEVICES" | sed -n "${i}p")
  src=$(df -P "$d" | awk 'NR == 2 { print $1 }')
  # Without a device named, the root filesystem is refused: the defaults (a directory under
  # /var/tmp) would burn the system disk, which nobody meant.
  if [ -z "$dev" ] && [ "${ROOT_OK:-false}" != true ] && [ "$(stat -c %d "$d")" = "$(stat -c %d /)" ]; then
    say "$dir is on the root filesystem ($src): name the disk under test in sqliosim_data_devices and put the directory on it, or set sqliosim_allow_root_fs=true to burn the root disk on purpose"
  fi
  if [ -n "$dev" ]; then
    want=$(readlink -f "$dev")
    # The filesystem's device and every device under it (partition -> disk, dm -> disks).
    if ! lsblk -nrso PATH "$src" 2>/dev/null | grep -qxF "$want"; then
      say "$dir is on $src (filesystem of $d), not on $dev: is the disk mounted?"
    fi
  fi
  avail_kb=$(df -Pk "$d" | awk 'NR == 2 { print $4 }')
  have_kb=0
  [ -d "$dir" ] && have_kb=$(du -sk "$dir" | awk '{ print $1 }')
  if [ $((avail_kb + have_kb)) -lt $((NEED_MB * 1024)) ]; then
    say "$dir has $(((avail_kb + have_kb) / 1024)) MB for its files, the configuration needs $NEED_MB MB"
  fi
  # Nothing holds the file set: no run (its NAME.lock) nor verify (the files) of it.
  for name in $FILES; do
    for f in "$dir/$name.lock" "$dir/$name"; do
      [ -f "$f" ] || continue
      if ! flock -n -x "$f" true; then
        say "$f is in use: $(tr -d '\000' < "$dir/$name.lock" 2>/dev/null | head -c 300)"
      fi
    done
  done
done
exit "$bad"
