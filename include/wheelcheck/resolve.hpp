// Resolution as glibc's loader does it, over a model of the image's files: which file each DT_NEEDED
// entry of a wheel's members loads, by which rule, or every place that was tried (as libtree shows).
// The search order and its subtleties are explained at the top of inspector/resolve/resolve.cpp.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelcheck/cuda.hpp"
#include "wheelcheck/elf.hpp"
#include "wheelcheck/exports.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/profile.hpp"

namespace wheelcheck::resolve {

// Something the loader can load: a wheel member installed in site-packages, a library of the image, a
// library a Python distribution in the image ships, or a member of a wheel given with --with.
struct Object {
  enum class Source { Wheel, WithWheel, Image, Distribution };
  Source source = Source::Image;
  std::string path;    // image path where it sits; "" for a library declared without a location
  std::string label;   // for people: "member flag_gems/lib/libtriton_jit.so", "torch 2.6.0", "image"
  std::string member;  // the wheel member path (Wheel, WithWheel)
  std::string wheel;   // the wheel's project name, normalized (Wheel, WithWheel)
  // The distribution it belongs to, "torch 2.10.0+cpu" (Distribution, WithWheel): what `import torch` loads
  // together, and what a provider's failure is said of.
  std::string dist;
  std::optional<bool> cxx11_abi;  // a distribution's library: built with the C++11 std::string ABI
  std::string soname;
  std::string machine;  // "" when unknown (declared)
  int elf_class = 0;    // 0 when unknown
  std::vector<std::string> needed, rpath, runpath;
  std::uint64_t flags_1 = 0;
  std::vector<std::string> versions;       // version definitions, when known
  std::vector<std::string> version_needs;  // "libc.so.6 GLIBC_2.38", of a probed image or distribution library
  // Image and distribution libraries: the description records rpath, runpath, flags_1 and version_needs
  // (a probe does); without it they are unknown and the library is searched without them.
  bool dynamic_recorded = false;
  bool versions_known = false;
  const elf::Binary* binary = nullptr;      // wheel members: every symbol is known
  const cuda::Fatbins* gpu_code = nullptr;  // wheel members with GPU code: what their fatbins hold
  std::string exports_file;                 // image and distribution libraries with a table
  std::string exports_upto;
  // The versions the image's description declares (glibc 2.35: GLIBC_2.35; GLIBCXX_3.4.30; CXXABI_1.3.13):
  // a version of that family beyond it is not defined there, whatever a layer's table lists (glibc's
  // symbol versions only grow, so a need above the declared version is certain to fail).
  std::vector<std::string> declared_upto;
  std::string exports_unknown;   // why no table (declared libraries), or why the table is partial
  bool exports_partial = false;  // the table lists some exports only: a symbol it lacks is unknown
  std::string exports_lent;      // the table is another build's (image::Library::exports_lent): whose and why
  bool python_extension = false;
  std::string host;  // an image library mounted from the host at run time: how (image::Library::host)
  // Its table was made from another build (origin "derived": Ubuntu 22.04's libstdc++ modelled by Debian 12's):
  // its own imports of a version beyond what the image declares are that build's, not the image's.
  bool derived = false;
  // Loaded with RTLD_GLOBAL before the wheel's modules (torch's libtorch_global_deps.so, and what it loads):
  // in the global scope of every later load, so it defines symbols for objects that do not need it.
  bool rtld_global = false;
};

// The Python a wheel is installed into, as its tags select it, in tag order: cpXY (cpXYt) the CPython of
// exactly that version (and build), cpXY-abi3 the newest at or above X.Y, pyX / pyXY the image's default
// Python (the first listed: a probe lists what `python3` runs first). Null when no Python of the image
// fits the tags (or it has none); `why` then says which were there.
const image::Python* python_for(const WheelProfile& wheel, const image::Image& image);

// The files of an image plus the wheels installed into it, indexed by path and by soname.
class Space {
 public:
  // site: where wheels are installed (the image's first site-packages; "/site-packages" when it has none).
  // memory: export tables probed on the fly, for references written "mem:KEY".
  // imports_first: distributions the wheel's package imports before its modules without declaring them (a
  // rule set's imports_first: name, why), loaded first as a Requires-Dist's would be.
  Space(const image::Image& image, const WheelProfile& wheel, const std::vector<const WheelProfile*>& with,
        const std::map<std::string, exports::Table>* memory = nullptr,
        const std::vector<std::pair<std::string, std::string>>& imports_first = {});
  const image::Image& image() const { return m_image; }
  const std::string& site() const { return m_site; }
  const image::Python* python() const { return m_python; }  // the Python it is installed for; null: none
  const std::vector<std::unique_ptr<Object>>& objects() const { return m_objects; }
  std::vector<const Object*> wheel_members() const;  // the checked wheel's ELF members
  const Object* at(const std::string& path) const;   // the object a path reaches, or null
  // A path as the kernel resolves it: "." and ".." taken in order, a folder that is a symbolic link
  // (the image's loader.dir_links) replaced by the folder it reaches before ".." climbs out of it.
  std::string physical(const std::string& path) const;
  std::vector<const Object*> declared(const std::string& soname) const;  // libraries declared without a path
  // Objects already loaded before a wheel's extension is imported: the distributions the wheel
  // Requires-Dist (torch: `import torch` loads torch/lib/*), when the image has them.
  // A wheel beside it (--with, a lock's set) that the wheel requires counts the same: its libraries.
  std::vector<const Object*> preloaded() const { return m_preloaded; }
  // Libraries the wheel's own Python code loads with RTLD_GLOBAL at import (ctypes.CDLL(path,
  // mode=RTLD_GLOBAL) in a package's __init__.py): loaded, and in the global scope, before its extension
  // modules. Set once the space is made (the check reads the loads from the wheel's Python sources).
  const std::vector<const Object*>& python_globals() const { return m_python_globals; }
  void set_python_globals(std::vector<const Object*> objects) { m_python_globals = std::move(objects); }
  std::vector<std::string> preloaded_notes() const { return m_preloaded_notes; }
  // What pip installs replaces what was there: an image distribution of the same (normalized) name as the
  // checked wheel or a wheel beside it is left out of the space, each said in words.
  std::vector<std::string> replaced_notes() const { return m_replaced_notes; }
  // The Python interpreter the wheel is installed for (the one whose site-packages it goes to): its
  // exports when known, else exports_unknown says why. Null only for a non-Python image without one.
  const Object* interpreter() const { return m_interpreter; }
  // The export table of an image or distribution library (loaded once, cached); null when none.
  const exports::Table* table(const Object& o) const;
  // Why the table of `o` could not be read ("" when it could, or when it has none).
  std::string table_error(const Object& o) const;

 private:
  void add(std::unique_ptr<Object> o, const std::vector<std::string>& names);
  // What `import torch` loads from Python before torch._C (db/preloads.json, inspector/resolve/preloads.cpp):
  // torch's libtorch_global_deps.so RTLD_GLOBAL, and the nvidia-* wheels' libraries in torch's order.
  void add_torch_preloads(const std::string& torch_dist, const std::string& torch_version);
  const image::Image& m_image;
  const std::map<std::string, exports::Table>* m_memory = nullptr;
  std::string m_site;
  const image::Python* m_python = nullptr;
  std::vector<std::unique_ptr<Object>> m_objects;
  std::map<std::string, const Object*> m_by_path;
  std::multimap<std::string, const Object*> m_declared;
  std::vector<const Object*> m_preloaded;
  std::vector<const Object*> m_python_globals;
  const Object* m_interpreter = nullptr;
  std::vector<std::string> m_preloaded_notes;
  std::vector<std::string> m_replaced_notes;
  mutable std::map<const Object*, std::unique_ptr<exports::Table>> m_tables;
  mutable std::map<const Object*, std::string> m_table_errors;
};

// The loader's rule that found a library (libtree's how_t), in the order the loader tries them;
// how_name gives the words of the JSON and docs/verdict.md.
enum class How {
  None,           // "": not found (a name with a '/' that is not there keeps Path)
  Path,           // "path": a DT_NEEDED name with a '/', opened as it is
  AlreadyLoaded,  // "already loaded": an object of the process (the interpreter, what Python imported)
  Rpath,          // "rpath": DT_RPATH of the requester or of an object that loaded it
  LdLibraryPath,  // "LD_LIBRARY_PATH"
  Runpath,        // "runpath": DT_RUNPATH of the requester
  LdSoCache,      // "ld.so.cache"
  DefaultPath,    // "default path": the arch's default folders
  Declared,       // "declared": a library the image declares without a location
};
std::string how_name(How how);

// One place the loader looked at for a DT_NEEDED name (libtree's found_t): kept as data until it is
// rendered, so the JSON carries the rule and the text says it in words (attempt_text).
struct Attempt {
  enum class Result {
    NoFile,      // "no such file": nothing at that path
    OtherClass,  // "other ELF class": a file for another machine or class, passed over
    NotInFiles,  // "not in the image's files": an ld.so.cache entry whose file the image does not have
    Skipped,     // "skipped": the rule is not used for this object (detail says why); path is empty
    Found,       // "found"
  };
  How rule = How::None;
  std::string entry;     // the search path entry as written ("$ORIGIN/../lib"); the folder, for LD_LIBRARY_PATH
                         // and the default folders; the soname, for ld.so.cache
  std::string owner;     // whose DT_RPATH entry it is, when it is an object up the loader chain (its path)
  std::string platform;  // the value $PLATFORM was given, when the entry has it
  std::string path;      // the file looked at
  Result result = Result::NoFile;
  std::string detail;  // the other machine, the cache's arch, why a rule was skipped
};
std::string result_name(Attempt::Result result);
std::string attempt_text(const Attempt& attempt);  // "/opt/x/libfoo.so (DT_RPATH $ORIGIN/../x): no such file"

// How one DT_NEEDED entry was resolved.
struct Need {
  const Object* requester = nullptr;
  std::string name;               // as in DT_NEEDED
  const Object* found = nullptr;  // null when not found
  How rule = How::None;           // the rule that found it
  std::string where;              // the path it was found at (its $ORIGIN is that path's folder)
  Attempt by;                     // the attempt that found it (rule, entry, owner): result Found
  std::vector<Attempt> tried;     // every place looked at before, in order, with why it did not do
  // Found through a $PLATFORM folder under only these of the values $PLATFORM may take (it depends on
  // the CPU: "haswell" or "x86_64" on x86-64); empty when the answer does not depend on it.
  std::vector<std::string> platforms;
};
std::vector<std::string> tried_text(const Need& need);  // attempt_text of each of need.tried

// A program (what the loader starts, not what it loads): ET_EXEC, or ET_DYN with PT_INTERP or DF_1_PIE.
bool is_program(const elf::Binary& b);

// The load of one wheel member: every object in its load order (breadth first, as the loader maps
// them; a library Python had already loaded joins where a need reaches it, with the rest of its
// distribution) and every need resolved. `order` is the scope of symbol lookup: what the process has
// loaded but the member does not reach (torch's libraries when it needs none of them) is not in it,
// as Python loads extension modules RTLD_LOCAL.
struct Load {
  const Object* root = nullptr;
  // A program is loaded as glibc starts it: itself, then its own DT_NEEDED, with nothing else in the
  // process (no interpreter, no C library until it needs one); an extension module is loaded into the
  // Python process that imports it.
  bool program = false;
  // The global scope, searched before the member's own: the Python interpreter and what it loaded
  // (libc, libm, ...), or, without a described interpreter, the C library every process has.
  std::vector<const Object*> global;
  std::vector<const Object*> order;
  std::vector<Need> needs;
  // What the process had loaded before the module (the required distributions' libraries and what they
  // loaded): relocated then, not by this load.
  std::vector<const Object*> imported;
};
Load load(const Space& space, const Object& root);

// Symbol binding for every object a load maps anew: the wheel's own objects (their symbols are all
// known) and the image's and distributions' libraries it reaches (their version needs as described, their
// undefined symbols when their table lists them): every undefined, non-weak dynamic symbol must be
// defined by an object of the load scope (global, then the load order) at a matching version; every
// DT_VERNEED version must be defined by the library it names.
// The rules are at the top of inspector/resolve/bind.cpp.
struct Unbound {
  const Object* object = nullptr;  // the wheel object whose undefined symbol it is
  const elf::Symbol* symbol = nullptr;
  std::vector<const Object*> unknown;  // scope objects whose exports are unknown: they may define it
};
struct MissingVersion {
  const Object* object = nullptr;     // the object that needs it
  std::string file;                   // the library named in DT_VERNEED ("libc.so.6")
  std::string version;                // "GLIBC_2.38"
  const Object* provider = nullptr;   // what `file` resolved to
  std::vector<std::string> provided;  // the provider's versions of the same family, newest last
};
// An undefined symbol of an image or distribution library in the load (from its export table's
// #undefined lines) that nothing in scope defines.
struct ImageUnbound {
  const Object* object = nullptr;
  std::string symbol, version, file;
  std::vector<const Object*> unknown;
};
struct BindResult {
  std::vector<Unbound> unbound;
  std::vector<ImageUnbound> image_unbound;
  std::vector<MissingVersion> versions;
  std::size_t bound = 0;        // symbols checked and found
  std::size_t interpreter = 0;  // Py*/_Py* symbols left to the Python interpreter
};
BindResult bind(const Space& space, const Load& load);

// "GLIBC_2.38" is newer than "GLIBC_2.36": same prefix, numeric comparison of the rest. False when
// the prefixes differ or a part is not numeric.
bool version_newer(std::string_view a, std::string_view b);
// Whether `version` is beyond what `library` may define: newer than its exports_upto or than a version the
// image declares of that family (Object::declared_upto).
bool beyond_ceiling(const Object& library, std::string_view version);
// The versions a library defines (from its description or its export table, none beyond exports_upto);
// nullopt when unknown. An empty list: it defines none, and so satisfies every need (glibc binds the
// unversioned definitions).
std::optional<std::vector<std::string>> defined_versions(const Space& space, const Object& library);

// The values glibc's $PLATFORM may take on an architecture (on x86-64 it depends on the CPU).
std::vector<std::string> platform_values(const std::string& arch);

// glibc's dynamic string tokens: $ORIGIN (the object's folder), $LIB, $PLATFORM, with or without braces.
std::string expand_tokens(const std::string& entry, const std::string& origin, const std::string& arch);

}  // namespace wheelcheck::resolve
