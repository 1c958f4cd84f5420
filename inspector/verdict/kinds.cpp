// One row per finding kind: every sentence a kind has apart from the facts of one finding. Its stable
// name (the JSON's "kind", docs/verdict.md), its SARIF rule, its title (a rule's heading: SARIF's
// shortDescription, the fallback of summary()) and its meaning (what any finding of the kind says, whatever
// the verdict it sits under: SARIF's help). kind_name, is_integrity and the SARIF rules read this table
// only; tests/unit/test_sentences.cpp renders every kind in every format against it.
#include <array>
#include <string>
#include <vector>

#include "wheelcheck/verdict.hpp"

namespace wheelcheck::verdict {

namespace {

constexpr std::size_t k_kind_count = static_cast<std::size_t>(k_last_finding_kind) + 1;

// In FindingKind's order (kind_text checks it).
const std::array<KindText, k_kind_count> k_kind_texts = {{
    {FindingKind::MissingLibrary, "missing-library", "MissingLibrary", "A needed library is not found",
     "A DT_NEEDED entry that nothing provides where the loader looks (the wheel, the image, the distributions "
     "installed beside it). Install or bundle the library, or turn off the route that needs it.",
     false},
    {FindingKind::MissingVersion, "missing-version", "MissingVersion", "A needed symbol version is not defined",
     "A DT_VERNEED version (GLIBC_2.38, GLIBCXX_3.4.32) that the providing library does not define: the wheel "
     "was built against a newer library than the image has. Build on an older base (manylinux) or use a newer "
     "image.",
     false},
    {FindingKind::MissingSymbol, "missing-symbol", "MissingSymbol", "An undefined symbol nothing in scope defines",
     "An undefined, non-weak symbol that no object of the member's load scope exports: the import fails with "
     "'undefined symbol'.",
     false},
    {FindingKind::WrongArch, "wrong-arch", "WrongArch", "A member is built for another machine",
     "An ELF member's machine or class is not the image's: the wheel is for another architecture.", false},
    {FindingKind::TagPython, "tag-python", "TagPython", "The wheel's Python tag fits no Python of the image",
     "pip would not install it: no Python of the image matches the wheel's Python tag.", false},
    {FindingKind::TagAbi, "tag-abi", "TagAbi", "The wheel's ABI tag fits no Python of the image",
     "pip would not install it: the ABI tag (cp312, abi3) matches no Python of the image.", false},
    {FindingKind::TagPlatform, "tag-platform", "TagPlatform", "The wheel's platform tag does not fit the image",
     "pip would not install it: the manylinux/musllinux floor or the machine of the platform tag is not the "
     "image's.",
     false},
    {FindingKind::RequiresPython, "requires-python", "RequiresPython", "Requires-Python excludes the image's Python",
     "The wheel's Requires-Python excludes every Python of the image.", false},
    {FindingKind::Driver, "driver", "Driver", "An NVIDIA driver floor the image does not state",
     "The wheel needs an NVIDIA driver at least this new (its CUDA runtime or PTX); the image description "
     "does not say which driver it has. State it with --assume driver=VERSION or in the image.",
     false},
    {FindingKind::DriverTooOld, "driver-too-old", "DriverTooOld", "The image's NVIDIA driver is too old",
     "The CUDA runtime or PTX of the wheel needs a newer driver than the image's.", false},
    {FindingKind::GpuCoverage, "gpu-coverage", "GpuCoverage", "No kernel image for the image's GPUs",
     "No SASS of the member runs on the GPU and no PTX can be JIT-compiled for it: the first launch fails with "
     "'no kernel image is available'. Add the -gencode the finding names.",
     false},
    {FindingKind::GpuArchDropped, "gpu-arch-dropped", "GpuArchDropped", "A GPU the toolkit no longer supports",
     "The image's CUDA toolkit no longer builds or ships code for one of its GPUs.", false},
    {FindingKind::FatbinUnread, "fatbin-unread", "FatbinUnread", "GPU code not read",
     "A member's fatbin could not be read: its coverage "
     "is not checked.",
     false},
    {FindingKind::IsaLevel, "isa-level", "IsaLevel", "Built for a newer x86-64 level",
     "The member uses x86-64-v2/v3/v4 instructions: the runner's CPU decides.", false},
    {FindingKind::DeclaredLibrary, "declared-library", "DeclaredLibrary", "A library the image declares without files",
     "A need met by a library the image description declares (a vendor runtime), not read.", false},
    {FindingKind::CpuPlatform, "cpu-platform", "CpuPlatform", "Found only under some $PLATFORM values",
     "A need found only through a $PLATFORM folder: the runner's CPU decides.", false},
    {FindingKind::Archive, "archive", "Archive", "The wheel's archive is damaged",
     "Re-download or rebuild the wheel; do not pin it.", true},
    {FindingKind::Record, "record", "Record", "A file is not what RECORD says",
     "Re-download or rebuild the wheel; do not pin it.", true},
    {FindingKind::UnreadableMember, "unreadable-member", "UnreadableMember", "A member is not readable ELF",
     "A member that should be ELF cannot be read.", true},
    {FindingKind::TagClaim, "tag-claim", "TagClaim", "The platform tag claims more than the binaries deliver",
     "The binaries need a newer glibc (or other floor) than the wheel's platform tag promises: pip installs it "
     "where it cannot load.",
     false},
    {FindingKind::RequiresDist, "requires-dist", "RequiresDist",
     "A Requires-Dist pin the image's version does not meet",
     "The wheel declares a version of a distribution the image has in another version: `pip install "
     "--no-deps` leaves the pin broken, plain `pip install` replaces the image's distribution.",
     false},
    {FindingKind::TagPureBinary, "tag-pure-binary", "TagPureBinary",
     "A pure tag (py3-none-any) on a wheel with native code",
     "pip installs the wheel on any platform and Python on its tag's word, where its ELF members cannot load.", false},
    {FindingKind::Environment, "environment", "Environment", "A variable a part of the wheel needs is not set",
     "A route of the rule set needs an environment variable the image does not set (FlagOS's "
     "FLAGCX_BITCODE_PATH).",
     false},
    {FindingKind::NumpyAbi, "numpy-abi", "NumpyAbi", "Built against NumPy 1.x's C API where NumPy 2 is installed",
     "NumPy 2 refuses modules compiled against NumPy 1.x: torch says \"Numpy is not available\".", false},
    {FindingKind::ExtensionSuffix, "extension-suffix", "ExtensionSuffix",
     "An extension module named for another Python",
     "CPython imports pkg/foo only with its own importlib.machinery.EXTENSION_SUFFIXES ('.cpython-312-x86_64-"
     "linux-gnu.so', '.abi3.so', '.so'): a member named for another Python or machine is never imported, and "
     "`import pkg.foo` fails with ModuleNotFoundError.",
     false},
    {FindingKind::ModuleInit, "module-init", "ModuleInit", "An extension module without its PyInit_ function",
     "CPython looks up PyInit_<module> (the file name's module) in the extension it loads: without it the import "
     "fails with \"ImportError: dynamic module does not define module export function\".",
     false},
    {FindingKind::PolicyMachine, "policy-machine", "PolicyMachine", "Another machine than the packaging target's",
     "The packaging target is for another machine.", false},
    {FindingKind::PolicyLibc, "policy-libc", "PolicyLibc", "Another C library than the packaging target's",
     "The packaging target is for another C library.", false},
    {FindingKind::PolicyApiLevel, "policy-api-level", "PolicyApiLevel", "An Android API level above the target's",
     "The wheel needs a newer Android API level than the target.", false},
    {FindingKind::PolicySymbolVersion, "policy-symbol-version", "PolicySymbolVersion",
     "A symbol version the policy does not allow",
     "A version node (GLIBC_2.29 of libm.so.6) newer than the manylinux policy allows.", false},
    {FindingKind::PolicyLibrary, "policy-library", "PolicyLibrary",
     "A library neither bundled nor allowed by the policy", "auditwheel repair would graft it into the wheel.", false},
    {FindingKind::PolicyBlacklist, "policy-blacklist", "PolicyBlacklist", "A symbol the policy forbids",
     "The policy forbids this symbol.", false},
    {FindingKind::PolicyUcs2, "policy-ucs2", "PolicyUcs2", "A narrow-Unicode Python 2 build",
     "Not allowed by the policy.", false},
    {FindingKind::PolicyPyfpe, "policy-pyfpe", "PolicyPyfpe", "PyFPE_jbuf used", "Not allowed by the policy.", false},
    {FindingKind::PolicyIsaLevel, "policy-isa-level", "PolicyIsaLevel", "x86-64-v2 or newer code",
     "Not allowed by the policy.", false},
    {FindingKind::PolicyKernel, "policy-kernel", "PolicyKernel", "A static member needs a newer kernel",
     "Its own glibc needs a newer kernel than the target's systems run.", false},
    {FindingKind::PolicyUnknown, "policy-unknown", "PolicyUnknown", "A packaging target whose policy is unknown",
     "The db lacks the target's policy.", false},
    {FindingKind::LabelClaim, "label-claim", "LabelClaim",
     "The label or name claims a toolkit or torch the binaries contradict",
     "The wheel's local version label or project name says which build it is (+cu130: CUDA 13.0), and a member "
     "needs another (libcudart.so.12): rebuild it, or label it as what it is (wheelcheck lint).",
     false},
    {FindingKind::UndeclaredDependency, "undeclared-dependency", "UndeclaredDependency",
     "Needs a distribution it does not declare",
     "A member needs a library, or leaves C++ symbols undefined, that only a distribution the wheel does not "
     "declare in Requires-Dist ships (libtorch_npu.so: torch-npu; c10d::: torch): add the requirement.",
     false},
    {FindingKind::UnusedDependency, "unused-dependency", "UnusedDependency",
     "Declares a library distribution nothing links",
     "A declared library-only distribution (nvidia-cublas-cu12) whose libraries no member needs: it may be "
     "loaded with dlopen, or needed by another dependency; otherwise drop it.",
     false},
    {FindingKind::UnpinnedDependency, "unpinned-dependency", "UnpinnedDependency",
     "Binds a distribution's C++ ABI without pinning its release",
     "A member binds C++ symbols that change between releases (torch's c10::), and Requires-Dist admits any "
     "release: pin the one it was built against (torch==2.10.*).",
     false},
    {FindingKind::Metadata, "metadata", "Metadata", "METADATA that installers read otherwise than intended",
     "A blank line inside the headers (the fields after it become the description: pip ignores them), a "
     "single field written twice, an unknown Metadata-Version, a Requires-Dist that does not parse, a Name "
     "or Version other than the file name's.",
     false},
    {FindingKind::RootIsPurelib, "root-is-purelib", "RootIsPurelib", "WHEEL says Root-Is-Purelib: true for native code",
     "Installers put the wheel in purelib; a native wheel belongs in platlib (Root-Is-Purelib: false).", false},
    {FindingKind::TagFloor, "tag-floor", "TagFloor",
     "A linux_* tag that promises nothing, and the floor its binaries have",
     "pip installs a linux_<arch> wheel on any Linux of that machine; the binaries need the glibc (and "
     "libraries) of the manylinux policy named, for the symbols named.",
     false},
    {FindingKind::UnloadableSymbol, "unloadable-symbol", "UnloadableSymbol",
     "An undefined symbol nothing the object loads can define",
     "None of the object's own needs (in the wheel and the system libraries) defines it: dlopen(RTLD_NOW), "
     "and so Python's import and ctypes, fail on every machine.",
     false},
    {FindingKind::VariantClaim, "variant-claim", "VariantClaim", "A wheel variant's property its binaries contradict",
     "A variant (PEP 825) says which machines it is for (nvidia :: sm_arch :: 90_real, "
     "nvidia :: cuda_version_lower_bound :: 13.0, amd :: rocm_version :: 7.1), and installers pick it by that: "
     "its fatbins, the runtime it needs or its label say otherwise. Fix the properties or the build.",
     false},
    {FindingKind::VariantMetadata, "variant-metadata", "VariantMetadata",
     "variant.json that an installer refuses or the index contradicts",
     "The wheel's variant.json is of a schema version uv's preview does not read, breaks the draft's rules "
     "(priorities, values, labels), or differs from the release's -variants.json on the index.",
     false},
    {FindingKind::ExecStack, "exec-stack", "ExecStack", "A library asks for an executable stack",
     "Its PT_GNU_STACK header asks for an executable stack (or it has none, which means the same on x86_64, "
     "not on AArch64): glibc 2.41 and later refuse to dlopen it (\"cannot enable executable stack as shared "
     "object requires: Invalid argument\"), so the import that loads it fails; older ones load it and make "
     "every thread's stack executable (SELinux-hardened hosts refuse that). Link it with -z noexecstack (or "
     "clear the flag with patchelf --clear-execstack).",
     false},
    {FindingKind::PythonLoad, "python-load", "PythonLoad", "The wheel's Python code loads a native file",
     "A load no DT_NEEDED shows: a module of the wheel calls ctypes.CDLL, torch.ops.load_library or "
     "ffi.dlopen on a native file, at its import or later. The file is resolved and bound as glibc would; "
     "where that fails at import, the module's import raises OSError, and so does every import that runs it.",
     false},
}};

}  // namespace

const KindText& kind_text(FindingKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return k_kind_texts[i < k_kind_count ? i : 0];
}

std::vector<KindText> kind_texts() {
  return {k_kind_texts.begin(), k_kind_texts.end()};
}

std::string kind_name(FindingKind kind) {
  return std::string(kind_text(kind).name);
}

bool is_integrity(FindingKind kind) {
  return kind_text(kind).integrity;
}

}  // namespace wheelcheck::verdict
