#!/usr/bin/env bash
# The pre-commit hook (.pre-commit-hooks.yaml, id wheelcheck): each lock or pins file that changed is
# checked on its own, as installed, against the images of wheelcheck.toml / [tool.wheelcheck] (or the
# hook's args), because two lock files are two environments, never one:
#
#   scripts/pre-commit.sh [WHEELCHECK-OPTIONS...] [--] FILE...
#
# runs `wheelcheck check FILE [OPTIONS]` once per FILE and exits with the worst exit code:
#
#   an error (2 bad input, 70 internal, anything else)  beats
#   1 incompatible  beats  4 unknown  beats  3 degraded  beats  0 compatible
#
# (so a commit of a degraded lock fails too; pass --exit-zero in the hook's args to only report; a condition
# that makes a lock unknown can be accepted, with a reason and an expiry, in the config file's [[accept]]). pre-commit puts the hook's args before the file
# names: options come first; an option's value is taken as the next word for wheelcheck's options that take
# one (--image NAME, -i NAME, --with FILE, ...), or write --option=value, or end the options with `--`.
# WHEELCHECK names the executable (default: wheelcheck on PATH).
set -u

wheelcheck=${WHEELCHECK:-wheelcheck}
options=()
files=()
while (($#)); do
  case $1 in
    --)
      shift
      files+=("$@")
      break
      ;;
    -i | --image | --with | --assume | --rules | --verify | --format | --image-env | --db | --cache-dir | \
      --cache-max-size | --config | -o | --output | --summary | --env-file | --github-output | -j | --threads | \
      --retries | --low-speed-time | --max-*)
      options+=("$1")
      (($# > 1)) && options+=("$2") && shift
      ;;
    -*) options+=("$1") ;;
    *) files+=("$1") ;;
  esac
  shift
done

# rank CODE: how bad an exit code is.
rank() {
  case $1 in
    0) echo 0 ;;
    3) echo 1 ;;
    4) echo 2 ;;
    1) echo 3 ;;
    *) echo 4 ;;
  esac
}

worst=0
for f in "${files[@]}"; do
  # the file first: an option that takes several values (--with A B) would take the file as one of them
  "$wheelcheck" check "$f" "${options[@]}"
  rc=$?
  echo "wheelcheck: $f: exit $rc" >&2
  if (($(rank "$rc") > $(rank "$worst"))); then worst=$rc; fi
done
exit "$worst"
