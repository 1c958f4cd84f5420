"""The loader harness's probe where the root has a real CPython: that Python loads each member.

  python3.X probe.py [--preload PATH]... [--] MEMBER...

Same protocol as probe.c: a child process per member; preloads loaded RTLD_LOCAL (as `import torch`
leaves its libraries); each member is dlopened by the interpreter exactly as its import system does
(sys.getdlopenflags(): RTLD_NOW, RTLD_LOCAL), so symbols from the interpreter count. The module's
PyInit_ function is not run: it is the module's own code (built for some CPython), not the loader's.
"""
import ctypes, os, sys

def load(path):
    """dlopen as the import system does (_imp.create_dynamic: dlopen(path, sys.getdlopenflags()), RTLD_NOW
    and RTLD_LOCAL by default), without running the module's PyInit_ function: that is the module's own
    code, built for some other CPython, not the loader's business."""
    try:
        ctypes.CDLL(path, mode=sys.getdlopenflags())
    except OSError as e:
        return str(e)
    return None

def main():
    args = sys.argv[1:]
    pre = []
    while args and args[0] == "--preload":
        pre.append(args[1])
        args = args[2:]
    if args and args[0] == "--":
        args = args[1:]
    for member in args:
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            for p in pre:
                try:
                    ctypes.CDLL(p, mode=os.RTLD_LOCAL)
                except OSError as e:
                    print(f"{member}\tpreload-fail\t{e}".replace("\n", " "))
                    sys.stdout.flush()
                    os._exit(0)
            err = load(member)
            print(f"{member}\tok" if err is None else f"{member}\tfail\t" + err.replace("\t", " ").replace("\n", " "))
            sys.stdout.flush()
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            print(f"{member}\tcrash\tstatus {status}")

main()
