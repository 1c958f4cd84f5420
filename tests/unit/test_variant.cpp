// Wheel variants (PEP 825/850 drafts): PyTorch 2.10's real variants file read and validated, what images
// support by the providers' rules, and the order an installer prefers the variants in (the worked picks of
// ../shared/reference/variants.md).
#include <gtest/gtest.h>

#include <algorithm>

#include "support.hpp"
#include "wheelcheck/error.hpp"
#include "wheelcheck/image.hpp"
#include "wheelcheck/lock.hpp"
#include "wheelcheck/profile.hpp"
#include "wheelcheck/variant.hpp"

namespace unity_test_variant {

using namespace wheelcheck;

variant::File torch_210() {
  const std::string path = test::source_dir() + "/tests/variants/data/torch-2.10.0-variants.json";
  return variant::parse(test::read_file(path), "torch-2.10.0-variants.json");
}

image::Image cuda_image(const std::string& driver, const std::string& gpus) {
  image::Image im;
  im.name = "cuda";
  im.toolkit = image::Toolkit{};
  im.toolkit->kind = image::ToolkitKind::Cuda;
  im.toolkit->version = image::Fact::known_as("13.0", "", image::Origin::Declared);
  if (driver.empty()) {
    im.driver = image::Fact::unknown("the runners' host GPU driver versions are not published");
    im.driver.set = true;
  } else {
    im.driver = image::Fact::known_as(driver, "", image::Origin::Declared);
  }
  if (gpus.empty()) {
    im.gpu_archs = image::Fact::unknown("the runners' GPUs are not published");
    im.gpu_archs.set = true;
  } else {
    im.gpu_archs = image::Fact::known_as(gpus, "", image::Origin::Declared);
  }
  return im;
}

std::vector<std::string> labels_of(const std::vector<variant::Ranked>& ranked, variant::Ranked::State state) {
  std::vector<std::string> out;
  for (const auto& r : ranked) {
    if (r.state == state) out.push_back(r.label);
  }
  return out;
}

using State = variant::Ranked::State;

TEST(VariantFile, PyTorch210IsReadAndItsSchemaDriftSaid) {
  const auto f = torch_210();
  EXPECT_EQ(f.labels,
            (std::vector<std::string>{"null", "cuda12.6", "cuda12.8", "cuda13.0", "xpu", "rocm7.0", "rocm7.1"}));
  EXPECT_EQ(f.schema_version, "v0.0.3");
  EXPECT_EQ(f.namespace_priorities, (std::vector<std::string>{"nvidia", "intel", "amd", "priority"}));
  ASSERT_NE(f.static_of("priority"), nullptr);
  EXPECT_EQ(f.static_of("priority")->at("order"), (variant::Values{"1", "2", "3"}));
  ASSERT_NE(f.provider("priority"), nullptr);
  EXPECT_FALSE(f.provider("priority")->install_time);
  EXPECT_EQ(f.variants.at("cuda13.0").at("nvidia").at("cuda_version_lower_bound"), (variant::Values{"13.0"}));
  EXPECT_TRUE(f.variants.at("null").empty());
  // Exactly one issue: its dialect, wheelnext's v0.0.3, which variantlib reads and uv's preview refuses; a
  // warning, for the file is valid in the dialect it declares.
  EXPECT_EQ(f.dialect, variant::Dialect::V003);
  ASSERT_EQ(f.issues.size(), 1U);
  EXPECT_FALSE(f.issues[0].error);
  EXPECT_EQ(f.issues[0].topic, variant::Issue::Topic::Schema);
  EXPECT_NE(f.issues[0].text.find("v0.0.3"), std::string::npos) << f.issues[0].text;
  EXPECT_NE(f.issues[0].text.find("read by wheelnext/variantlib"), std::string::npos) << f.issues[0].text;
  EXPECT_NE(f.issues[0].text.find("uv's preview (0.13.x) reads PEP 825 v0.1.1 alone and refuses it"), std::string::npos)
      << f.issues[0].text;
}

TEST(VariantFile, WhatUvRefusesIsAnIssue) {
  const auto f = variant::parse(R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
    "default-priorities": {"namespace": ["nvidia", "nvidia"]},
    "providers": {"nvidia": {"plugin-api": "p:P", "requires": ["p"]}},
    "variants": {"null": {"nvidia": {"sm_arch": ["90_real"]}},
                 "Cuda": {"amd": {"gfx_arch": ["gfx942", "gfx942"], "Bad": []}}}})",
                                "t.json");
  std::vector<std::string> texts;
  for (const auto& i : f.issues) texts.push_back(i.text);
  const auto has = [&](const std::string& words) {
    return std::any_of(texts.begin(), texts.end(),
                       [&](const std::string& t) { return t.find(words) != std::string::npos; });
  };
  EXPECT_TRUE(has("lists 'nvidia' twice")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("variants.null has properties")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("'Cuda' is not a variant label")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("lists 'gfx942' twice")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("'Bad' is not a feature name")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("is an empty list")) << testing::PrintToString(texts);
  EXPECT_TRUE(has("which default-priorities.namespace does not list")) << testing::PrintToString(texts);
  // PEP 825 v0.1.1 has no providers: a namespace without one is no issue there (v0.0.3's rule, below).
  EXPECT_FALSE(has("which has no provider")) << testing::PrintToString(texts);
  EXPECT_TRUE(std::none_of(f.issues.begin(), f.issues.end(), [](const variant::Issue& i) {
    return i.topic == variant::Issue::Topic::Schema;
  })) << testing::PrintToString(texts);
  // Not a variants file at all: an error naming it.
  for (const char* bad :
       {"[1]", "{\"variants\": []}", "{", "{\"default-priorities\": {\"namespace\": \"nvidia\"}, \"variants\": {}}"}) {
    try {
      variant::parse(bad, "bad.json");
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    }
  }
}

TEST(VariantFile, AWheelHoldsItsOwnLabelAndAgreesWithTheIndex) {
  const auto release = torch_210();
  // rocm7.1 as PyTorch's TOML config makes it: rocm_version 7.0.
  auto wheel = variant::parse(R"({"$schema": "https://variants-schema.wheelnext.dev/v0.0.3.json",
    "default-priorities": {"namespace": ["nvidia", "intel", "amd", "priority"]},
    "providers": {"amd": {"plugin-api": "amd_variant_provider.plugin:AMDVariantPlugin", "requires": ["amd-variant-provider>=0.0.2,<1.0.0"],
                          "enable-if": "platform_system == 'Linux'"}},
    "variants": {"rocm7.1": {"amd": {"gfx_arch": ["gfx942"], "rocm_version": ["7.0"]}}}})",
                              "variant.json");
  variant::check_in_wheel(wheel, "rocm7.1");
  EXPECT_FALSE(wheel.has_errors() && wheel.issues.size() > 1) << wheel.issues.back().text;
  const auto diff = variant::compare(wheel, release, "rocm7.1");
  ASSERT_EQ(diff.size(), 1U);
  EXPECT_NE(diff[0].find("amd :: rocm_version :: 7.0"), std::string::npos) << diff[0];
  EXPECT_NE(diff[0].find("amd :: rocm_version :: 7.1"), std::string::npos) << diff[0];
  variant::check_in_wheel(wheel, "rocm7.0");
  EXPECT_NE(wheel.issues.back().text.find("holds its own variant alone ('rocm7.0')"), std::string::npos);
}

TEST(VariantSupport, NvidiaRulesFromTheImage) {
  const auto release = torch_210();
  const auto s = variant::supported(cuda_image("580.65.06", "sm_86,sm_90"), release);
  const auto* lower = s.values("nvidia", "cuda_version_lower_bound");
  ASSERT_NE(lower, nullptr);
  EXPECT_EQ(lower->front(), "13.0");
  EXPECT_NE(std::find(lower->begin(), lower->end(), "12.0"), lower->end());
  EXPECT_EQ(std::find(lower->begin(), lower->end(), "13.1"), lower->end());
  const auto* sm = s.values("nvidia", "sm_arch");
  ASSERT_NE(sm, nullptr);
  EXPECT_EQ(*sm, (variant::Values{"90_real", "90_virtual"}));  // the highest GPU alone, its major alone
  EXPECT_EQ(s.disabled.count("amd"), 1U);
  EXPECT_EQ(s.disabled.count("intel"), 1U);  // an image built for NVIDIA: its devices are NVIDIA's
  EXPECT_EQ(*s.values("priority", "order"), (variant::Values{"1", "2", "3"}));
  EXPECT_EQ(variant::driver_cuda("570.26"), (std::pair{12, 8}));
  EXPECT_EQ(variant::driver_cuda("575.57.08"), (std::pair{12, 9}));
  EXPECT_FALSE(variant::driver_cuda("440.1"));
}

// The worked picks of ../shared/reference/variants.md.
TEST(VariantOrder, TheDraftsPicksForPyTorch210) {
  const auto release = torch_210();
  const auto cuda13 = variant::order(release, variant::supported(cuda_image("580.65.06", "sm_90"), release));
  EXPECT_EQ(labels_of(cuda13, State::Compatible),
            (std::vector<std::string>{"cuda13.0", "cuda12.8", "cuda12.6", "null"}));
  EXPECT_EQ(cuda13.front().label, "cuda13.0");

  const auto cuda12 = variant::order(release, variant::supported(cuda_image("570.26", "sm_86"), release));
  EXPECT_EQ(labels_of(cuda12, State::Compatible), (std::vector<std::string>{"cuda12.8", "cuda12.6", "null"}));
  const auto it = std::find_if(cuda12.begin(), cuda12.end(), [](const auto& r) { return r.label == "cuda13.0"; });
  ASSERT_NE(it, cuda12.end());
  EXPECT_EQ(it->state, State::Incompatible);
  ASSERT_FALSE(it->why_not.empty());
  EXPECT_NE(it->why_not[0].find("cuda_version_lower_bound :: 13.0"), std::string::npos) << it->why_not[0];

  image::Image cpu;  // no toolkit, no driver, no GPU
  cpu.name = "debian12";
  const auto none = variant::order(release, variant::supported(cpu, release));
  EXPECT_EQ(labels_of(none, State::Compatible), (std::vector<std::string>{"null"}));
  EXPECT_TRUE(labels_of(none, State::Undecided).empty());

  // Unknown driver and GPUs: the CUDA variants wait on them; null is what is known to fit.
  const auto unknown = variant::order(release, variant::supported(cuda_image("", ""), release));
  EXPECT_EQ(labels_of(unknown, State::Compatible), (std::vector<std::string>{"null"}));
  EXPECT_EQ(labels_of(unknown, State::Undecided), (std::vector<std::string>{"cuda12.6", "cuda12.8", "cuda13.0"}));
  const auto& u = *std::find_if(unknown.begin(), unknown.end(), [](const auto& r) { return r.label == "cuda13.0"; });
  ASSERT_EQ(u.depends_on.size(), 2U);
  EXPECT_NE(testing::PrintToString(u.depends_on).find("--assume driver="), std::string::npos);
  EXPECT_NE(testing::PrintToString(u.depends_on).find("--assume gpu_archs="), std::string::npos);

  // A user's statement replaces the provider's rule (PEP 850's user static list).
  auto stated = cuda_image("", "");
  image::assume(stated, "nvidia::sm_arch", "86_real,80_real", "--assume");
  image::assume(stated, "driver", "580.65.06", "--assume");
  const auto s = variant::order(release, variant::supported(stated, release));
  EXPECT_EQ(labels_of(s, State::Compatible), (std::vector<std::string>{"cuda13.0", "cuda12.8", "cuda12.6", "null"}));
  EXPECT_THROW(image::assume(stated, "nvidia::SM", "x", "--assume"), Error);
}

// Requires-Dist markers of a variant: evaluated against its label and properties (PEP 825's variant_* markers).
TEST(VariantMarkers, EvaluatedAgainstTheWheelsVariant) {
  WheelProfile w;
  w.filename = wheel::parse_filename("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl");
  w.variant_json = R"({"$schema": "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json",
    "default-priorities": {"namespace": ["nvidia"]}, "providers": {"nvidia": {"plugin-api": "p:P"}},
    "variants": {"cuda12.8": {"nvidia": {"sm_arch": ["86_real", "90_real"]}}}})";
  lock::MarkerEnv env;
  env.values["platform_system"] = "Linux";
  lock::set_variant(env, w);
  EXPECT_TRUE(lock::evaluate_marker("platform_system == 'Linux' and variant_label == 'cuda12.8'", env));
  EXPECT_FALSE(lock::evaluate_marker("variant_label == 'cuda13.0'", env));
  EXPECT_TRUE(lock::evaluate_marker("'nvidia' in variant_namespaces", env));
  EXPECT_FALSE(lock::evaluate_marker("'amd' in variant_namespaces", env));
  EXPECT_TRUE(lock::evaluate_marker("'nvidia :: sm_arch' in variant_features", env));
  EXPECT_TRUE(lock::evaluate_marker("'nvidia::sm_arch::90_real' in variant_properties", env));
  EXPECT_TRUE(lock::evaluate_marker("'nvidia :: sm_arch :: 80_real' not in variant_properties", env));
  // A plain wheel: no label, empty sets.
  WheelProfile plain;
  plain.filename = wheel::parse_filename("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  lock::set_variant(env, plain);
  EXPECT_FALSE(lock::evaluate_marker("'nvidia' in variant_namespaces", env));
  EXPECT_TRUE(lock::evaluate_marker("variant_label == ''", env));
}

// The pick among a release's files: variants by the drafts' order, then null, then plain wheels; without the
// release's variants file no variant is taken; pip's pick (plain wheels only) beside it.
TEST(VariantPick, ARelease) {
  const auto release = torch_210();
  std::vector<lock::File> files;
  for (const char* label : {"", "-null", "-cuda12.6", "-cuda12.8", "-cuda13.0", "-rocm7.1"}) {
    lock::File f;
    f.filename = std::string("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64") + label + ".whl";
    f.url = "https://example.invalid/" + f.filename;
    files.push_back(f);
  }
  lock::Package pkg;
  pkg.name = "torch";
  pkg.version = "2.10.0";
  auto im = cuda_image("570.26", "sm_86");
  im.arch = image::Fact::known_as("x86_64", "", image::Origin::Declared);
  im.python = image::Fact::known_as("3.12", "", image::Origin::Declared);
  im.libc_kind = image::Fact::known_as("glibc", "", image::Origin::Declared);
  im.libc_version = image::Fact::known_as("2.39", "", image::Origin::Declared);
  auto p = lock::pick_wheel(files, pkg, im, &release);
  ASSERT_NE(p.file, nullptr) << p.why;
  EXPECT_EQ(p.variant, "cuda12.8");
  ASSERT_NE(p.without_variants, nullptr);
  EXPECT_EQ(p.without_variants->filename, "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  // No variants file: only the plain wheel.
  p = lock::pick_wheel(files, pkg, im, nullptr);
  ASSERT_NE(p.file, nullptr);
  EXPECT_EQ(p.file->filename, "torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64.whl");
  // Unknown driver and GPUs: null, with what it depends on.
  p = lock::pick_wheel(
      files, pkg,
      [&] {
        auto u = im;
        u.driver = image::Fact::unknown("not published");
        u.gpu_archs = image::Fact::unknown("not published");
        return u;
      }(),
      &release);
  ASSERT_NE(p.file, nullptr);
  EXPECT_EQ(p.variant, "null");
  EXPECT_EQ(p.undecided, (std::vector<std::string>{"cuda12.6", "cuda12.8", "cuda13.0"}));
  EXPECT_EQ(p.depends_on.size(), 2U);
}

// --- Dialects (../shared/reference/variants.md, update of 2026-12-06): each file judged by the one it declares --

// One release, two variants, the same content in each dialect but for its $schema: `fast` lists a CUDA lower
// bound, `wide` an sm_arch; a feature override puts sm_arch first.
std::string two_variants(const std::string& schema, bool with_override, bool with_providers) {
  std::string doc = "{";
  if (!schema.empty()) doc += "\"$schema\": \"" + schema + "\", ";
  doc += R"("default-priorities": {"namespace": ["nvidia"])";
  if (with_override) doc += R"(, "feature": {"nvidia": ["sm_arch", "cuda_version_lower_bound"]})";
  doc += "}, ";
  if (with_providers) {
    doc += R"("providers": {"nvidia": {"plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin",
                                        "requires": ["nvidia-variant-provider>=0.0.2,<1.0.0"]}}, )";
  }
  doc += R"("variants": {"fast": {"nvidia": {"cuda_version_lower_bound": ["12.0"]}},
                         "wide": {"nvidia": {"sm_arch": ["90_real"]}}}})";
  return doc;
}

const variant::Issue* issue_of(const variant::File& f, variant::Issue::Topic topic) {
  for (const auto& i : f.issues) {
    if (i.topic == topic) return &i;
  }
  return nullptr;
}

std::string issues_text(const variant::File& f) {
  std::string out;
  for (const auto& i : f.issues) out += (i.error ? "E " : "W ") + i.text + "\n";
  return out;
}

TEST(VariantDialect, V003IsJudgedByItsOwnRules) {
  auto f = variant::parse(two_variants(std::string(variant::k_v003_schema), true, true), "v003.json");
  EXPECT_EQ(f.dialect, variant::Dialect::V003);
  // Schema: a warning naming who reads it and who refuses it.
  const auto* schema = issue_of(f, variant::Issue::Topic::Schema);
  ASSERT_NE(schema, nullptr) << issues_text(f);
  EXPECT_FALSE(schema->error);
  EXPECT_NE(schema->text.find("read by wheelnext/variantlib"), std::string::npos) << schema->text;
  EXPECT_NE(schema->text.find("uv's preview (0.13.x) reads PEP 825 v0.1.1 alone and refuses it"), std::string::npos);
  EXPECT_NE(schema->text.find("pip reads no variants"), std::string::npos);
  // Priorities: the feature override is v0.0.3's, read and no issue.
  EXPECT_EQ(issue_of(f, variant::Issue::Topic::Priorities), nullptr) << issues_text(f);
  EXPECT_EQ(f.feature_priorities.at("nvidia"), (std::vector<std::string>{"sm_arch", "cuda_version_lower_bound"}));
  EXPECT_FALSE(f.has_errors()) << issues_text(f);
  // Providers: every namespace has one in v0.0.3 (wheelnext/variantlib refuses a file without).
  f = variant::parse(two_variants(std::string(variant::k_v003_schema), true, false), "v003.json");
  const auto* providers = issue_of(f, variant::Issue::Topic::Providers);
  ASSERT_NE(providers, nullptr) << issues_text(f);
  EXPECT_TRUE(providers->error);
  EXPECT_NE(providers->text.find("which has no provider: in v0.0.3 every namespace has one"), std::string::npos)
      << providers->text;
}

TEST(VariantDialect, V011IsJudgedByItsOwnRules) {
  // The same content as PEP 825 v0.1.1 (uv's exact URL): no provider is needed, and none is an issue.
  auto f = variant::parse(two_variants(std::string(variant::k_v011_schema), false, false), "v011.json");
  EXPECT_EQ(f.dialect, variant::Dialect::V011);
  EXPECT_TRUE(f.issues.empty()) << issues_text(f);
  // A feature override: removed in v0.1.1, so the file is invalid, and it is not applied.
  f = variant::parse(two_variants(std::string(variant::k_v011_schema), true, false), "v011.json");
  const auto* priorities = issue_of(f, variant::Issue::Topic::Priorities);
  ASSERT_NE(priorities, nullptr) << issues_text(f);
  EXPECT_TRUE(priorities->error);
  EXPECT_NE(priorities->text.find("default-priorities.feature in a PEP 825 v0.1.1 file: v0.1.1 removed the feature "
                                  "and property overrides"),
            std::string::npos)
      << priorities->text;
  EXPECT_NE(priorities->text.find("uv's preview orders its variants by namespace alone"), std::string::npos);
  EXPECT_TRUE(f.feature_priorities.empty());
  // Providers: outside PEP 825 v0.1.1's schema; uv's preview reads them as its own extension. A warning.
  f = variant::parse(two_variants(std::string(variant::k_v011_schema), false, true), "v011.json");
  const auto* providers = issue_of(f, variant::Issue::Topic::Providers);
  ASSERT_NE(providers, nullptr) << issues_text(f);
  EXPECT_FALSE(providers->error);
  EXPECT_NE(providers->text.find("providers is no part of PEP 825 v0.1.1"), std::string::npos) << providers->text;
  EXPECT_NE(providers->text.find("uv's preview reads it as its own extension"), std::string::npos);
  // v0.1.1 by version, but not uv's exact URL: uv's preview refuses it.
  f = variant::parse(two_variants("https://variants-schema.wheelnext.dev/v0.1.1.json", false, false), "v011.json");
  EXPECT_EQ(f.dialect, variant::Dialect::V011);
  const auto* schema = issue_of(f, variant::Issue::Topic::Schema);
  ASSERT_NE(schema, nullptr) << issues_text(f);
  EXPECT_TRUE(schema->error);
  EXPECT_NE(schema->text.find("uv's preview takes $schema equal to "
                              "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json alone and refuses this file"),
            std::string::npos)
      << schema->text;
}

TEST(VariantDialect, NoneOrAnUnknownOneIsSaidInASentence) {
  for (const auto& [schema, words] : std::vector<std::pair<std::string, std::string>>{
           {"", "no $schema: the file declares no dialect"},
           {"https://variants-schema.wheelnext.dev/peps/825/v0.1.0.json", "schema v0.1.0 ("},
           {"https://variants-schema.wheelnext.dev/v1.0.0.json", "a major version no installer knows"},
           {"https://example.invalid/variants.json", "names no version"}}) {
    const auto f = variant::parse(two_variants(schema, true, false), "t.json");
    EXPECT_EQ(f.dialect, variant::Dialect::Unknown) << schema;
    const auto* s = issue_of(f, variant::Issue::Topic::Schema);
    ASSERT_NE(s, nullptr) << schema << "\n" << issues_text(f);
    EXPECT_TRUE(s->error);
    EXPECT_NE(s->text.find(words), std::string::npos) << s->text;
    EXPECT_NE(s->text.find("No installer listed reads it: uv's preview (0.13.x) reads PEP 825 v0.1.1"),
              std::string::npos)
        << s->text;
    EXPECT_NE(s->text.find("wheelnext/variantlib is frozen at v0.0.3"), std::string::npos) << s->text;
    // Its override is neither dialect's to apply; no provider is asked of it.
    EXPECT_TRUE(f.feature_priorities.empty()) << schema;
    EXPECT_EQ(issue_of(f, variant::Issue::Topic::Providers), nullptr) << issues_text(f);
    const auto* p = issue_of(f, variant::Issue::Topic::Priorities);
    ASSERT_NE(p, nullptr) << issues_text(f);
    EXPECT_NE(p->text.find("the file declares neither, so it is not applied here"), std::string::npos) << p->text;
  }
}

// The priorities a dialect has decide the pick: v0.0.3's feature override puts sm_arch first (wide); v0.1.1 has
// none, and the provider's order puts the CUDA bound first (fast).
TEST(VariantDialect, ThePickFollowsTheDialectsPriorities) {
  const auto image = cuda_image("580.65.06", "sm_90");
  const auto v003 = variant::parse(two_variants(std::string(variant::k_v003_schema), true, true), "v003.json");
  const auto v011 = variant::parse(two_variants(std::string(variant::k_v011_schema), true, true), "v011.json");
  EXPECT_EQ(variant::order(v003, variant::supported(image, v003)).front().label, "wide");
  EXPECT_EQ(variant::order(v011, variant::supported(image, v011)).front().label, "fast");
}

// Requires-Dist markers: v0.1.1's variant_properties holds the label's properties the target supports alone;
// v0.0.3's all of them.
TEST(VariantDialect, MarkersSeeWhatTheDialectSays) {
  const std::string body = R"("default-priorities": {"namespace": ["nvidia"]},
    "providers": {"nvidia": {"plugin-api": "p:P", "requires": ["p"]}},
    "variants": {"cuda12.8": {"nvidia": {"sm_arch": ["80_real", "90_real"]}}}})";
  WheelProfile w;
  w.filename = wheel::parse_filename("torch-2.10.0-cp312-cp312-manylinux_2_28_x86_64-cuda12.8.whl");
  const auto image = cuda_image("580.65.06", "sm_90");
  for (const auto dialect : {variant::Dialect::V003, variant::Dialect::V011}) {
    const std::string schema(dialect == variant::Dialect::V003 ? variant::k_v003_schema : variant::k_v011_schema);
    w.variant_json = "{\"$schema\": \"" + schema + "\", " + body;
    const auto d = variant::declared(w);
    ASSERT_TRUE(d && d->file);
    const auto support = variant::supported(image, *d->file);
    bool partial = false;
    const auto seen = variant::marker_properties(*d, &support, &partial);
    EXPECT_FALSE(partial);
    EXPECT_EQ(seen.at("nvidia").at("sm_arch"), dialect == variant::Dialect::V011
                                                   ? (variant::Values{"90_real"})
                                                   : (variant::Values{"80_real", "90_real"}));
    // No target (lint): all of them, and for v0.1.1 a marker may read otherwise on a machine.
    const auto all = variant::marker_properties(*d, nullptr, &partial);
    EXPECT_EQ(all.at("nvidia").at("sm_arch").size(), 2U);
    EXPECT_EQ(partial, dialect == variant::Dialect::V011);
  }
}

}  // namespace unity_test_variant
