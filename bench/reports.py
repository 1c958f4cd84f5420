"""What bench/shards.sh and bench/scale.sh compare of two scans' reports: the report.json less what differs by
run (generated_at, shard), and the first place two JSON documents differ (imported by their inline Python)."""
import json


def norm(path):
    """report.json, less generated_at and shard."""
    doc = json.load(open(path))
    doc.pop("generated_at", None)
    doc.pop("shard", None)
    return doc


def first_diff(a, b, where="$", names=("the one-process", "the merged")):
    """The path and values of the first difference between a and b (None when equal)."""
    if type(a) is not type(b):
        return f"{where}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}"
    if isinstance(a, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in a or k not in b:
                return f"{where}.{k}: only in {names[1] if k in b else names[0]} one"
            d = first_diff(a[k], b[k], f"{where}.{k}", names)
            if d:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_diff(x, y, f"{where}[{i}]", names)
            if d:
                return d
        return None if len(a) == len(b) else f"{where}: {len(a)} items != {len(b)}"
    return None if a == b else f"{where}: {json.dumps(a)[:200]} != {json.dumps(b)[:200]}"
