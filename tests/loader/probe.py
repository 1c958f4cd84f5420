"""The loader harness's probe where the root has a real CPython: that Python imports each member.

  python3.X probe.py [--preload PATH]... [--] MEMBER...

Same protocol as probe.c: a child process per member; preloads loaded RTLD_LOCAL (as `import torch`
leaves its libraries); an extension module is imported as Python imports it (sys.getdlopenflags():
RTLD_NOW, RTLD_LOCAL), so symbols from the interpreter count; any other library is loaded with ctypes.
"""
import ctypes, importlib.machinery, importlib.util, os, sys

def load(path):
    name = os.path.basename(path).split(".")[0]
    if ".cpython-" in path or path.endswith(".abi3.so"):
        loader = importlib.machinery.ExtensionFileLoader(name, path)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        try:
            importlib.util.module_from_spec(spec)
        except ImportError as e:
            msg = str(e)
            # dlopen succeeded; the module's init function is another matter.
            if "does not define module export function" in msg:
                return None
            return msg
        except Exception:
            return None  # loaded; PyInit_ failed (the generated modules return NULL)
        return None
    try:
        ctypes.CDLL(path, mode=os.RTLD_LOCAL)
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
