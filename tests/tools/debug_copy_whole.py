#!/usr/bin/env python3
"""debug_copy_whole.py DIR: every BUILDID.debug copy in DIR (diagtop's debug-info cache) holds each section of the
distribution's debug file (/usr/lib/debug/.build-id/..) whole: as many bytes as the original's section has
inflated (the size in its compression header), location lists aside (kept out of the copy on purpose).
Exits 1 naming the first that differs, 2 when DIR holds no copy."""
import glob, os, struct, sys

SHF_COMPRESSED = 0x800
SKIPPED = {".debug_loc", ".debug_loclists"}


def sections(path):
    """{name: (type, size as inflated)} of an ELF64 little-endian file."""
    b = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    strtab = hdrs[shstrndx][4]
    out = {}
    for name, typ, flags, _, off, size, *_ in hdrs:
        n = b[strtab + name:b.index(b"\0", strtab + name)].decode()
        if flags & SHF_COMPRESSED:
            size, = struct.unpack_from("<Q", b, off + 8)  # Elf64_Chdr: type, reserved, size, addralign
        out[n] = (typ, size)
    return out


copies = glob.glob(os.path.join(sys.argv[1], "*.debug"))
if not copies:
    print("no debug copy in", sys.argv[1])
    sys.exit(2)
checked = 0
for copy in copies:
    hexid = os.path.basename(copy)[:-len(".debug")]
    orig = "/usr/lib/debug/.build-id/%s/%s.debug" % (hexid[:2], hexid[2:])
    if not os.path.exists(orig):
        continue
    want, got = sections(orig), sections(copy)
    for name, (typ, size) in want.items():
        if name in SKIPPED or typ == 8:  # SHT_NOBITS
            continue
        if got.get(name, (None, -1))[1] != size:
            print("%s: %s is %s bytes, the original's %d" % (copy, name, got.get(name, (None, None))[1], size))
            sys.exit(1)
    print("%s: %d sections whole" % (os.path.basename(copy), len(want)))
    checked += 1
if not checked:
    print("no copy of a distribution debug file in", sys.argv[1])
    sys.exit(2)
