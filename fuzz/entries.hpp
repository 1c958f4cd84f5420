// The fuzz targets' entry points: one function per parser of outside input, fed raw bytes. Each hands
// the bytes to the real parser(s) and swallows wheelcheck::Error (a clean refusal of malformed input is
// the documented behaviour); any other exception escapes, and a crash, a sanitizer report or a hang is a
// bug. Built into a small library that the libFuzzer executables (fuzz/fuzz_<name>.cpp) and the
// regression replay of the normal test suite (tests/unit/test_fuzz_regressions.cpp) both link.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace wheelcheck::fuzz {

// The streaming ELF reader: read_elf (Fast) over a buffer, ElfScanner fed in input-dependent chunks,
// read_elf_random.
int fuzz_elf(const std::uint8_t* data, std::size_t size);
// The wheel reader on a zip held in memory: members, problems, dist-info files, streamed and random
// member reads under small limits, then the profile inspection of the in-memory wheel.
int fuzz_zip(const std::uint8_t* data, std::size_t size);
// The end-of-deflate-stream decoder: 4 bytes of uncompressed size (little endian), then the tail.
int fuzz_inflate_tail(const std::uint8_t* data, std::size_t size);
int fuzz_inflate_middle(const std::uint8_t* data, std::size_t size);
// WHEEL, METADATA, RECORD, RFC 822 headers: the first byte (modulo 4) selects, the rest is the text.
int fuzz_dist_info(const std::uint8_t* data, std::size_t size);
// Wheel file names, tags, PEP 440 versions and specifiers: the input split at the first '\n' into two
// strings.
int fuzz_names(const std::uint8_t* data, std::size_t size);
// The C++ name helpers: demangle, split_demangled, the dual-ABI helpers, mangled_search_prefixes.
int fuzz_demangle(const std::uint8_t* data, std::size_t size);
// ld.so.cache bytes (first byte even) or ld.so.conf files (first byte odd: the rest split at NUL bytes
// into etc/ld.so.conf and two files of etc/ld.so.conf.d, read through RootFs from a temporary root).
int fuzz_ldconfig(const std::uint8_t* data, std::size_t size);
// A project page of a package index: HTML (first byte even) or PEP 691 JSON (odd).
int fuzz_index(const std::uint8_t* data, std::size_t size);
// JSON of the db: an image description, a rule set, a policy list (first byte modulo 3 selects; for a
// policy list the second byte modulo 3 picks the C library).
int fuzz_image(const std::uint8_t* data, std::size_t size);

// A CUDA fatbin section: read_fatbins (a directed walk), and a seeking walker fed in input-dependent
// chunks with its containers merged over a range the input picks.
int fuzz_fatbin(const std::uint8_t* data, std::size_t size);
// The lock readers: the first byte (modulo 4) selects a pylock.toml (0), a pip installation report (1), a
// requirements file (2, read from a temporary folder whose files a -r may name) or a PEP 508 marker (3);
// the rest is the text. Each package's marker is evaluated for a fixed Python, as a marker input is.
int fuzz_lock(const std::uint8_t* data, std::size_t size);
// A Python source (fuzz/entries_python.cpp): read_module as a module and as a package's __init__, and the
// tokenizer's two passes held against each other (the lines the first pass keeps are the full pass's, at the
// same place, indent and line, with the same first tokens; it misses no kept line and no loader's name).
int fuzz_python(const std::uint8_t* data, std::size_t size);
// A container image layer (fuzz/entries_layer.cpp): the bytes decompressed as their first bytes say, read as
// tar and applied twice to a fresh root; nothing may appear outside the root, and a refusal is BadInput.
int fuzz_layer(const std::uint8_t* data, std::size_t size);

using Entry = int (*)(const std::uint8_t*, std::size_t);
struct Target {
  std::string_view name;
  Entry entry;
};
// Every target, by the name of its folder in fuzz/regressions and of its fuzz_<name> executable.
const std::vector<Target>& targets();

}  // namespace wheelcheck::fuzz
