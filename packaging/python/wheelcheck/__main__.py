"""`python -m wheelcheck ARGS`: the same as running the installed `wheelcheck ARGS`."""
import os
import sys

from wheelcheck import find_wheelcheck_bin


def main() -> None:
    try:
        binary = find_wheelcheck_bin()
    except FileNotFoundError as e:
        print(f"wheelcheck: {e}", file=sys.stderr)
        sys.exit(2)
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
