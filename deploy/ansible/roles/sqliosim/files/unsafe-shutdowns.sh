# unsafe-shutdowns.sh: one line "DEVICE unsafe_shutdowns N" per disk whose health log counts
# unsafe shutdowns (NVMe: `nvme smart-log`'s unsafe_shutdowns; SATA/SAS: smartctl's attribute
# 192 Power-Off_Retract_Count / Unsafe_Shutdown_Count, or 174 Unexpect_Power_Loss_Ct). Nothing
# when neither tool is there. DEVICES (newline-separated) narrows the disks; else every disk.
devs=$DEVICES
[ -n "$devs" ] || devs=$(ls -d /dev/nvme[0-9]*n[0-9] /dev/sd[a-z] 2>/dev/null)
for d in $devs; do
  n=""
  case "$d" in
    /dev/nvme*)
      if command -v nvme >/dev/null 2>&1; then
        n=$(nvme smart-log "$d" 2>/dev/null | sed -n 's/^unsafe_shutdowns *: *\([0-9,]*\).*/\1/p' | tr -d ,)
      fi ;;
  esac
  if [ -z "$n" ] && command -v smartctl >/dev/null 2>&1; then
    n=$(smartctl -A "$d" 2>/dev/null | awk '
      /Unsafe Shutdowns:/ { gsub(",", "", $3); print $3; exit }
      $1 == 174 || $1 == 192 { print $10; exit }')
  fi
  [ -n "$n" ] && echo "$d unsafe_shutdowns $n"
done
exit 0
