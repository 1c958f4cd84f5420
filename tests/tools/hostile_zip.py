#!/usr/bin/env python3
"""Writes hostile wheels for wheelcheck's bad-input tests, byte by byte (the tests' own tool; never a download).

  hostile_zip.py KIND OUT [ARGS...]

OUT is either a file named like a wheel (NAME-VERSION-PY-ABI-PLATFORM.whl: the .dist-info is named for it)
or an existing folder, in which case the wheel is written there as hostile_KIND-1.0-py3-none-any.whl (with
any '-' in KIND written '_'). The path written is printed on stdout.

Python's zipfile always writes honest archives, so this tool writes local headers, data and the central
directory itself (struct), which lets one field lie while everything else stays well formed. Every archive
except `truncated` and `notzip` is otherwise a proper wheel: NAME-VERSION.dist-info/{METADATA,WHEEL,RECORD}
with a correct RECORD, consistent local and central headers (libzip checks them with ZIP_CHECKCONS), no
data descriptors, so that a test sees exactly one defect.

Kinds:
  valid                      the control: a well-formed wheel from the same writer
  truncated [FRACTION]       a valid wheel cut to FRACTION of its bytes (default 0.5): no end of central directory
  notzip [BYTES]             pseudo-random printable text (default 4096 bytes), deterministic
  bomb [SIZE]                NAME/bomb.bin: SIZE zero bytes (default 64M) as raw deflate at level 9 (about 1/1000
                             of SIZE), sizes and CRC honestly declared: only a limit can stop it
  lying-size [REAL [DECL]]   NAME/data.bin: REAL bytes (default 65536) that both headers declare as DECL bytes
                             (default 1000), with the CRC of the real data: a reader must stop at DECL
  short-size [REAL [DECL]]   NAME/data.bin: REAL bytes (default 4096) declared as DECL (default REAL + 1000)
  bad-crc                    NAME/data.bin with a wrong CRC-32 in both headers
  traversal                  members named ../../etc/passwd and /etc/passwd
  duplicate                  NAME/__init__.py twice, with different contents
  encrypted                  NAME/secret.py encrypted with traditional PKWARE (ZipCrypto) encryption: general
                             purpose bit 0 set, a 12-byte encryption header before the deflate data
  ratio [SIZE]               NAME/zeros.bin: SIZE zero bytes (default 1G) deflated about 1000:1, honest sizes: only
                             a compression-ratio limit (or a member-size limit) stops it before inflating it all
  many-members [N]           N empty stored members NAME/m/<i> (default 200001), all in RECORD: a member-count limit
  bad-name NAME              one member named NAME (backslash escapes such as \\x00 or \\x1b are decoded), listed in
                             RECORD like any other
  symlink [TARGET]           NAME/link: a symbolic link (S_IFLNK in the external attributes) whose content is
                             TARGET (default /etc/passwd)
  zip64-mismatch             NAME/data.bin: the central header says 0xFFFFFFFF and its zip64 extra field gives
                             sizes (1 TiB uncompressed) that disagree with the honest local header
  local-mismatch             NAME/data.bin in the central directory, NAME/evil.bin (same length) in its local header
Sizes accept a K/M/G suffix (powers of 1024) and stay under 4 GiB (no zip64 sizes are written; more than 65535
members get the zip64 end of central directory record).
"""
import base64, hashlib, os, random, re, struct, sys, zlib

WHEEL_NAME = re.compile(r"^([A-Za-z0-9_.]+)-([^-]+)(-\d[^-]*)?-([^-]+)-([^-]+)-([^-]+)\.whl$")
DOS_TIME = (0 << 11) | (0 << 5) | 0           # 00:00:00
DOS_DATE = ((2024 - 1980) << 9) | (1 << 5) | 1  # 2024-01-01
STORED, DEFLATED = 0, 8


def parse_size(text):
    m = re.fullmatch(r"(\d+)([KkMmGg]?)", text)
    if not m:
        raise SystemExit(f"hostile_zip.py: bad size {text!r}")
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]


# --- traditional PKWARE encryption (APPNOTE 6.1) ---------------------------------------------------------
CRC_TABLE = []
for n in range(256):
    c = n
    for _ in range(8):
        c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
    CRC_TABLE.append(c)


class ZipCrypto:
    def __init__(self, password):
        self.keys = [0x12345678, 0x23456789, 0x34567890]
        for b in password:
            self._update(b)

    def _update(self, b):
        k = self.keys
        k[0] = CRC_TABLE[(k[0] ^ b) & 0xFF] ^ (k[0] >> 8)
        k[1] = (k[1] + (k[0] & 0xFF)) & 0xFFFFFFFF
        k[1] = (k[1] * 134775813 + 1) & 0xFFFFFFFF
        k[2] = CRC_TABLE[(k[2] ^ (k[1] >> 24)) & 0xFF] ^ (k[2] >> 8)

    def encrypt(self, data):
        out = bytearray()
        for b in data:
            t = (self.keys[2] | 2) & 0xFFFF
            out.append(b ^ (((t * (t ^ 1)) >> 8) & 0xFF))
            self._update(b)
        return bytes(out)


# --- the writer ------------------------------------------------------------------------------------------
class Member:
    """One archive member. `data` is the real content (or `zeros`: that many zero bytes, never held in memory);
    the declared fields (size, crc, flags) start honest and a kind may then bend one of them."""

    def __init__(self, name, data=b"", method=DEFLATED, record=True, zeros=None):
        self.name = name
        self.method = method
        self.record = record
        self.mode = 0o100644  # the unix mode in the central header's external attributes
        self.local_name = None  # a different name for the local header only
        self.central_extra = b""  # an extra field in the central header only
        self.central_sizes = None  # (compressed, uncompressed) the central header states instead
        chunks = (bytes(min(1 << 20, zeros - i)) for i in range(0, zeros, 1 << 20)) if zeros is not None else [data]
        deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
        digest, crc, size, payload = hashlib.sha256(), 0, 0, []
        # Zeros are deflated in 16 MiB blocks ended by a full flush, which resets the compressor: every whole
        # block deflates to the same bytes, so a gigabyte costs one block's compression and the CRC/digest.
        block, block_deflated = 16 << 20, None
        if zeros is not None and zeros >= block and method == DEFLATED:
            zero_block = bytes(block)
            block_deflated = deflate.compress(zero_block) + deflate.flush(zlib.Z_FULL_FLUSH)
            whole = zeros // block
            for _ in range(whole):
                digest.update(zero_block)
                crc = zlib.crc32(zero_block, crc)
            size = whole * block
            payload.append(block_deflated * whole)
            rest = zeros - size
            chunks = [bytes(rest)] if rest else []
        for chunk in chunks:
            digest.update(chunk)
            crc = zlib.crc32(chunk, crc)
            size += len(chunk)
            payload.append(deflate.compress(chunk) if method == DEFLATED else chunk)
        if method == DEFLATED:
            payload.append(deflate.flush())
        self.payload = b"".join(payload)
        self.crc = crc & 0xFFFFFFFF
        self.size = size
        self.real_size = size
        self.digest = "sha256=" + base64.urlsafe_b64encode(digest.digest()).rstrip(b"=").decode()
        self.flags = 0x800 if any(ord(ch) > 127 for ch in name) else 0

    def encrypt(self, password):
        # The 12-byte header: 11 random bytes and, as the check byte, the CRC's high byte (no data descriptor).
        rng = random.Random(1)
        header = bytes(rng.randrange(256) for _ in range(11)) + bytes([self.crc >> 24])
        self.payload = ZipCrypto(password).encrypt(header + self.payload)
        self.flags |= 0x1


def zip_bytes(members):
    out = bytearray()
    central = bytearray()
    for m in members:
        name = m.name.encode("utf-8", "surrogateescape")
        local_name = m.local_name.encode() if m.local_name is not None else name
        offset = len(out)
        fields = (20, m.flags, m.method, DOS_TIME, DOS_DATE, m.crc, len(m.payload), m.size, len(local_name), 0)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields) + local_name + m.payload
        compressed, uncompressed = m.central_sizes or (len(m.payload), m.size)
        central_fields = (45 if m.central_extra else 20, m.flags, m.method, DOS_TIME, DOS_DATE, m.crc, compressed,
                          uncompressed, len(name), len(m.central_extra))
        central += struct.pack("<IH", 0x02014B50, (3 << 8) | 30) + struct.pack("<HHHHHIIIHH", *central_fields)
        central += struct.pack("<HHHII", 0, 0, 0, (m.mode << 16), offset) + name + m.central_extra
    cd_offset = len(out)
    out += central
    count = len(members)
    if count > 0xFFFF:  # the zip64 end of central directory record and its locator carry the count
        zip64_offset = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, (3 << 8) | 45, 45, 0, 0, count, count, len(central),
                           cd_offset)
        out += struct.pack("<IIQI", 0x07064B50, 0, zip64_offset, 1)
        count = 0xFFFF
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, len(central), cd_offset, 0)
    return bytes(out)


def wheel_members(name, version, tag, payload_members):
    """The payload members plus a complete .dist-info, RECORD listing every member with its real digest."""
    info = f"{name}-{version}.dist-info"
    purelib = "true" if tag.endswith("-any") else "false"
    members = list(payload_members)
    members.append(Member(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()))
    members.append(Member(f"{info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: wheelcheck-hostile-zip\n"
                                            f"Root-Is-Purelib: {purelib}\nTag: {tag}\n").encode()))
    lines, listed = [], set()
    for m in members:
        if m.record and m.name not in listed:
            listed.add(m.name)
            lines.append(f"{m.name},{m.digest},{m.real_size}")
    lines.append(f"{info}/RECORD,,")
    members.append(Member(f"{info}/RECORD", ("\n".join(lines) + "\n").encode()))
    return members


def build(kind, name, version, tag, args):
    init = Member(f"{name}/__init__.py", b"VALUE = 42\n")
    text = b"".join(b"line %d of a hostile test member\n" % i for i in range(4096))
    if kind == "valid":
        return zip_bytes(wheel_members(name, version, tag, [init]))
    if kind == "truncated":
        fraction = float(args[0]) if args else 0.5
        data = Member(f"{name}/data.bin", text)
        whole = zip_bytes(wheel_members(name, version, tag, [init, data]))
        return whole[: int(len(whole) * fraction)]
    if kind == "notzip":
        n = parse_size(args[0]) if args else 4096
        rng = random.Random(427)
        alphabet = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;\n"
        return "".join(rng.choice(alphabet) for _ in range(n)).encode()
    if kind == "bomb":
        size = parse_size(args[0]) if args else 64 << 20
        return zip_bytes(wheel_members(name, version, tag, [init, Member(f"{name}/bomb.bin", zeros=size)]))
    if kind in ("lying-size", "short-size"):
        default_real = 65536 if kind == "lying-size" else 4096
        real = parse_size(args[0]) if args else default_real
        if real <= (1 << 20):
            m = Member(f"{name}/data.bin", (text * (real // len(text) + 1))[:real])
        else:  # large: zeros, streamed (a lying bomb)
            m = Member(f"{name}/data.bin", zeros=real)
        if len(args) > 1:
            m.size = parse_size(args[1])
        else:
            m.size = 1000 if kind == "lying-size" else real + 1000
        if kind == "lying-size" and m.size >= real:
            raise SystemExit("hostile_zip.py: lying-size must declare fewer bytes than it holds")
        if kind == "short-size" and m.size <= real:
            raise SystemExit("hostile_zip.py: short-size must declare more bytes than it holds")
        return zip_bytes(wheel_members(name, version, tag, [init, m]))
    if kind == "bad-crc":
        m = Member(f"{name}/data.bin", text)
        m.crc ^= 0xDEADBEEF
        return zip_bytes(wheel_members(name, version, tag, [init, m]))
    if kind == "traversal":
        passwd = b"root:x:0:0:root:/root:/bin/sh\n"
        return zip_bytes(wheel_members(name, version, tag,
                                       [init, Member("../../etc/passwd", passwd), Member("/etc/passwd", passwd)]))
    if kind == "duplicate":
        second = Member(f"{name}/__init__.py", b"VALUE = 43  # the second copy\n", record=False)
        return zip_bytes(wheel_members(name, version, tag, [init, second]))
    if kind == "encrypted":
        secret = Member(f"{name}/secret.py", b"TOKEN = 'not for wheelcheck'\n" * 8)
        secret.encrypt(b"hostile")
        return zip_bytes(wheel_members(name, version, tag, [init, secret]))
    if kind == "ratio":
        size = parse_size(args[0]) if args else 1 << 30
        return zip_bytes(wheel_members(name, version, tag, [init, Member(f"{name}/zeros.bin", zeros=size)]))
    if kind == "many-members":
        n = int(args[0]) if args else 200001
        empty = Member(f"{name}/m/0", b"", method=STORED)
        many = []
        for i in range(n):  # copies of one empty member, renamed: building 200001 compressors would be slow
            m = Member.__new__(Member)
            m.__dict__.update(empty.__dict__)
            m.name = f"{name}/m/{i}"
            many.append(m)
        return zip_bytes(wheel_members(name, version, tag, [init] + many))
    if kind == "bad-name":
        if not args:
            raise SystemExit("hostile_zip.py: bad-name needs the member name")
        member_name = args[0].encode("latin-1", "backslashreplace").decode("unicode_escape")
        return zip_bytes(wheel_members(name, version, tag, [init, Member(member_name, b"print('hostile')\n")]))
    if kind == "symlink":
        target = args[0] if args else "/etc/passwd"
        link = Member(f"{name}/link", target.encode(), method=STORED)
        link.mode = 0o120777
        return zip_bytes(wheel_members(name, version, tag, [init, link]))
    if kind == "zip64-mismatch":
        m = Member(f"{name}/data.bin", text)
        m.central_sizes = (0xFFFFFFFF, 0xFFFFFFFF)
        m.central_extra = struct.pack("<HHQQ", 0x0001, 16, 1 << 40, len(m.payload))  # uncompressed, compressed
        return zip_bytes(wheel_members(name, version, tag, [init, m]))
    if kind == "local-mismatch":
        m = Member(f"{name}/data.bin", text)
        m.local_name = f"{name}/evil.bin"
        return zip_bytes(wheel_members(name, version, tag, [init, m]))
    raise SystemExit(f"hostile_zip.py: unknown kind {kind!r} (see --help)")


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    kind, out, args = argv[1], argv[2], argv[3:]
    if os.path.isdir(out):
        out = os.path.join(out, "hostile_" + re.sub(r"[^A-Za-z0-9]", "_", kind) + "-1.0-py3-none-any.whl")
    m = WHEEL_NAME.match(os.path.basename(out))
    if not m:
        raise SystemExit(f"hostile_zip.py: {out} is not named like a wheel (NAME-VERSION-PY-ABI-PLATFORM.whl)")
    name, version = m.group(1), m.group(2)
    tag = "-".join(m.group(i) for i in (4, 5, 6))
    data = build(kind, name, version, tag, args)
    tmp = out + ".part"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, out)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
