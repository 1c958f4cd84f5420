// Wheel variants, as the PEP 825 (package format) and PEP 850 (providers) drafts describe them and uv's
// preview and wheelnext's variantlib implement them: one release built for several accelerators, each
// file told apart by a label in its name (torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda13.0.whl), its
// properties ("nvidia :: sm_arch :: 90_real") in *.dist-info/variant.json, and the release's union of them
// in NAME-VERSION-variants.json on the index. Which file an installer with variant support takes depends on
// what the machine supports, by each namespace's provider; wheelcheck derives that from an image's facts.
//
//   inspector/variant/file.cpp      variant.json and -variants.json: read, each by the rules of the dialect it
//                                   declares ($schema: wheelnext's v0.0.3 or PEP 825's v0.1.1)
//   inspector/variant/support.cpp   what an image supports, by the providers' own rules
//   inspector/variant/order.cpp     the drafts' order of a release's variants for an image, and a variant
//                                   wheel's properties against an image (against_image)
//   inspector/lint/variants.cpp     a variant's properties against its binaries (the publisher check)
// docs/variants.md says what each rule is and where it comes from.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelcheck {
struct WheelProfile;
}
namespace wheelcheck::image {
struct Image;
}
namespace wheelcheck::verdict {
struct Finding;
}

namespace wheelcheck::variant {

// The dialects of the format in use (../shared/reference/variants.md, its update of 2026-12-06), told apart by
// the version in the file's own "$schema" URL. A file is judged by the rules of the dialect it declares, and
// what is said about it names the installers that read that dialect. pip reads none.
enum class Dialect {
  Unknown,  // no $schema, or a version none of the installers below reads (0.x promises nothing across
            // versions; a major other than 0 is rejected)
  V003,     // wheelnext's v0.0.3: PyTorch 2.10's files and wheelnext/variantlib (frozen there).
            // default-priorities: namespace, and feature and property overrides; providers for every
            // namespace (variantlib: the same namespaces as default-priorities.namespace); static-properties.
            // Requires-Dist markers see all of the label's properties.
  V011,     // PEP 825's v0.1.1: uv's preview, which takes $schema equal to k_v011_schema alone.
            // default-priorities holds namespace alone (feature or property makes the file invalid:
            // additionalProperties false); providers and static-properties are no part of it (PEP 850's; uv's
            // preview reads them as its own extension). variant_properties in markers holds only the label's
            // properties the target supports; markers are evaluated after selection, never in it.
};
inline constexpr std::string_view k_v003_schema = "https://variants-schema.wheelnext.dev/v0.0.3.json";
inline constexpr std::string_view k_v011_schema = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json";
// "PEP 825 v0.1.1", "wheelnext's v0.0.3", "an unknown dialect".
std::string dialect_text(Dialect d);
// The variant-aware installers that read a dialect's files, in words:
// "uv 0.13.x's preview", "wheelnext/variantlib"; "" for Unknown (none does).
std::string readers_text(Dialect d);
// Who accepts a file of the dialect and who refuses it, in one clause: "read by uv's preview (0.13.x);
// wheelnext/variantlib, frozen at v0.0.3, does not read it; pip reads no variants".
std::string installers_text(Dialect d);
// The largest variants file read (an index's -variants.json is a few KB; PyTorch's is 4 KB).
inline constexpr std::size_t k_max_file_size = std::size_t{4} << 20;

using Values = std::vector<std::string>;
using Features = std::map<std::string, Values>;      // feature -> values
using Properties = std::map<std::string, Features>;  // namespace -> features

// One namespace's provider (PEP 850): how an installer learns what the machine supports for it.
struct Provider {
  std::vector<std::string> requires_;  // PEP 508 requirements of the plugin package
  std::string plugin_api;              // "nvidia_variant_provider.plugin:NvidiaVariantPlugin"
  std::string enable_if;               // a PEP 508 marker
  bool optional = false;               // used only when the user asks for it
  bool install_time = true;            // false: the namespace is static (its values never queried)
  Features static_properties;          // feature -> ordered values (then `requires_` is ignored)
};

// What a file says that the installers of its dialect would refuse (error) or that does not hold together
// (warning), and what it is about.
struct Issue {
  enum class Topic {
    Schema,      // the dialect it declares, and who reads it
    Priorities,  // default-priorities
    Providers,   // providers and static-properties
    Variants,    // labels, properties, values
    Wheel,       // a wheel's variant.json against its file name
  };
  bool error = false;
  std::string text;
  Topic topic = Topic::Variants;
};

// A variants file: a wheel's *.dist-info/variant.json (one variant, its own), or an index's
// NAME-VERSION-variants.json (every variant of the release).
struct File {
  std::string what;            // where it was read, for messages
  std::string schema;          // "$schema" as written
  std::string schema_version;  // "v0.0.3", read from the schema URL; "" when it names none
  Dialect dialect = Dialect::Unknown;
  std::vector<std::string> namespace_priorities;
  std::map<std::string, std::vector<std::string>> feature_priorities;  // namespace -> features
  std::map<std::string, Features> property_priorities;                 // namespace -> feature -> values
  std::vector<std::pair<std::string, Provider>> providers;             // in the file's order
  std::map<std::string, Features> static_properties;                   // namespace -> feature -> ordered values
  std::map<std::string, Properties> variants;                          // label -> properties
  std::vector<std::string> labels;                                     // in the file's order
  std::vector<Issue> issues;

  const Provider* provider(std::string_view ns) const;
  // The ordered values a static namespace supports (the file's static-properties, else its provider's);
  // null when the namespace has none.
  const Features* static_of(std::string_view ns) const;
  bool has_errors() const;
};

// Reads a variants file by the rules of the dialect its $schema declares. Throws Error(BadInput) naming `what`
// for text that is not a JSON object or a member of the wrong type; what the dialect's installers would refuse
// beyond that (priorities that miss a namespace, duplicate values, a "null" with properties, a malformed
// property; in v0.1.1 priority overrides; in v0.0.3 a namespace without a provider) and the dialect itself,
// with who reads it, are in `issues`. Priority overrides are kept only where the dialect has them.
File parse(std::string_view text, const std::string& what);
// A wheel's own variant.json: it must hold exactly its own label (issues added when it does not).
void check_in_wheel(File& file, std::string_view label);
// What a wheel's variant.json and the release's file disagree on for `label` (uv refuses to merge them):
// priorities that are not prefix-compatible, the label's properties, providers.
std::vector<std::string> compare(const File& wheel, const File& release, std::string_view label);

// What a wheel declares as a variant: the label of its file name and its *.dist-info/variant.json, with
// what does not hold together (no variant.json for a label, a file that cannot be read, one that holds
// other labels). nullopt for a plain wheel (neither).
struct Declared {
  std::string label;                     // "" when the file name has none
  std::optional<File> file;              // variant.json, when it could be read
  std::vector<Issue> issues;             // the file's own, then the wheel's
  const Properties* properties() const;  // the label's, when the file has them
};
std::optional<Declared> declared(const WheelProfile& profile);

// A release's variants file name, NAME-VERSION-variants.json, as (name, version); nullopt for any other name.
std::optional<std::pair<std::string, std::string>> release_file_name(std::string_view filename);

// "nvidia :: sm_arch :: 90_real".
std::string property_text(std::string_view ns, std::string_view feature, std::string_view value);
// "nvidia :: cuda_version_lower_bound :: 13.0; nvidia :: sm_arch :: 75_real, 80_real" (all of a variant's).
std::string properties_text(const Properties& properties);

// --- What a machine supports (inspector/variant/support.cpp) -------------------------------------------

struct Feature {
  std::string ns;
  std::string name;
  Values values;      // supported, best first
  std::string basis;  // the image's fact they come from, in words: "driver 570.26 (CUDA 12.8)"
};

// What an image supports, namespace by namespace, as an installer's providers would find it there.
struct Support {
  std::vector<Feature> features;                // in the providers' order
  std::map<std::string, std::string> disabled;  // namespace -> why nothing in it is supported
  std::map<std::string, std::string> unknown;   // "ns" or "ns :: feature" -> the fact it waits on
  std::vector<std::string> basis;               // the facts it was derived from, in words
  const Values* values(std::string_view ns, std::string_view feature) const;  // null when not known
  bool is_unknown(std::string_view ns, std::string_view feature) const;
};

// The providers' rules applied to an image's facts, for the namespaces `release` uses:
//   nvidia   cuda_version_lower_bound: every version up to the CUDA version of the image's driver (newest
//            first); cuda_version_upper_bound: every version above it (nearest first); sm_arch: from the
//            highest GPU's major only ({maj}{min}_real down to {maj}0_real, then {maj}0_virtual). No NVIDIA
//            stack in the image (no CUDA toolkit, no sm_ GPU): nothing.
//   amd      gfx_arch from gfx GPUs; rocm_version only as stated.
//   ascend   npu_type from the chips ("Ascend 910B" -> 910b), cann_version from the CANN toolkit,
//            driver_version from the driver.
//   intel    only as stated.
//   static   (install-time false, or static-properties): every value, in the file's order.
// The image's assumed variant properties (--assume NS::FEATURE=V1,V2, "none" for nothing) come first, as a
// user's static list does in PEP 850. A fact the image leaves unknown leaves the feature in `unknown`.
Support supported(const image::Image& image, const File& release);

// The CUDA version a driver supports (its newest toolkit in NVIDIA's table of GA drivers): "580.65.06" ->
// {13, 0}. nullopt when the driver is older than every release listed or does not parse.
std::optional<std::pair<int, int>> driver_cuda(std::string_view driver);

// --- The order (inspector/variant/order.cpp) -----------------------------------------------------------

struct Ranked {
  std::string label;
  enum class State { Compatible, Incompatible, Undecided } state = State::Compatible;
  std::vector<std::string> why_not;     // Incompatible: the features the machine does not support, in words
  std::vector<std::string> depends_on;  // Undecided: the unknown facts it waits on
  std::vector<std::size_t> rank;        // lower is better (variantlib's rank tuple)
};

// A release's variants in the order an installer prefers them on the machine: the compatible ones by the
// drafts' rank (namespace priority, feature priority, the best supported value's place), then "null", then
// the undecided ones (in the file's order) and the incompatible ones. A label whose properties are all
// supported but which the file does not list is not a variant of the release.
std::vector<Ranked> order(const File& release, const Support& support);

// The properties a wheel variant's Requires-Dist markers see (variant_namespaces, variant_features,
// variant_properties), by its dialect: v0.0.3 (and an unknown one) all of the label's; PEP 825 v0.1.1 only
// those the target supports (`support`; null: no target, all of them, and `partial` is set when a marker on
// them may then read otherwise than on a machine).
Properties marker_properties(const Declared& declared, const Support* support, bool* partial = nullptr);

// A variant wheel checked against an image (the check of a wheel by file): whether an installer with variant
// support would select it there, by its own variant.json and the image's facts. pip ignores variants and
// installs it all the same, so this never changes the loader's verdict: a property the image contradicts is a
// variant-claim warning naming the installers of the file's dialect, the property and the image's fact; a
// property whose support waits on an image fact not stated is a variant-claim note saying which fact and how
// to state it. Nothing for a plain wheel, a null variant, or a variant.json that cannot be read.
std::vector<verdict::Finding> against_image(const WheelProfile& wheel, const image::Image& image);

}  // namespace wheelcheck::variant
