// SPDX-License-Identifier: MIT
#include <switchyard/profiling/profilesettings.h>

#include "util/jsonread.h"

#include <algorithm>
#include <cmath>

namespace switchyard {

void to_json(nlohmann::json& j, const ProfileSettings& p) {
    nlohmann::json s = nlohmann::json::object();
    for (const auto& [op, list] : p.sizes)
        s[op] = list;
    j = {{"ops", p.ops},
         {"devices", p.devices},
         {"sizes", s},
         {"all_variants", p.all_variants},
         {"use_tuning", p.use_tuning},
         {"cells", p.cells},
         {"variant", p.variant},
         {"cold", p.cold},
         {"max_noise", p.max_noise},
         {"min_samples", p.min_samples},
         {"time_budget_s", p.time_budget_s},
         {"max_samples", p.max_samples},
         {"warmup_s", p.warmup_s},
         {"min_sample_s", p.min_sample_s},
         {"row_timeout_s", p.row_timeout_s},
         {"seed", p.seed},
         {"keep_samples", p.keep_samples},
         {"reference_budget_s", p.reference_budget_s},
         {"throttle_threshold", p.throttle_threshold},
         {"repeat", p.repeat},
         {"slices", p.slices},
         {"memory_beside", p.memory_beside},
         {"resolved_apart", p.resolved_apart}};
}

void from_json(const nlohmann::json& j, ProfileSettings& s) {
    const jsonread::Value v(j, "settings");
    v.expect(jsonread::Kind::Object);
    s = ProfileSettings{};
    s.ops = v.strings("ops");
    s.devices = v.strings("devices");
    if (const auto sizes = v.find("sizes")) {
        if (!sizes->raw().is_object())
            sizes->fail("expected an object of op -> [size, ...]");
        for (auto it = sizes->raw().begin(); it != sizes->raw().end(); ++it)
            s.sizes[it.key()] = sizes->strings(it.key());
    }
    s.all_variants = v.boolean("all_variants", false);
    s.use_tuning = v.boolean("use_tuning", false);
    s.cells = v.strings("cells");
    s.variant = v.str("variant", std::string("default"));
    s.cold = v.boolean("cold", false);
    s.max_noise = v.num("max_noise", s.max_noise);
    s.min_samples = v.integer("min_samples", s.min_samples, 1, 1 << 30);
    s.time_budget_s = v.num("time_budget_s", s.time_budget_s);
    s.max_samples = v.integer("max_samples", s.max_samples, 1, std::int64_t(1) << 40);
    s.warmup_s = v.num("warmup_s", s.warmup_s);
    s.min_sample_s = v.num("min_sample_s", s.min_sample_s);
    s.row_timeout_s = v.num("row_timeout_s", s.row_timeout_s);
    s.seed = std::uint64_t(v.integer("seed", std::int64_t(s.seed), 0, std::int64_t(1) << 53));
    s.keep_samples = v.integer("keep_samples", s.keep_samples, 0, std::int64_t(1) << 32);
    s.reference_budget_s = v.num("reference_budget_s", s.reference_budget_s);
    s.throttle_threshold = v.num("throttle_threshold", s.throttle_threshold);
    s.repeat = v.integer("repeat", s.repeat, 1, ProfileSettings::kMaxRepeat);
    s.slices = v.integer("slices", 1, 1, ProfileSettings::kMaxRepeat);
    s.memory_beside = v.boolean("memory_beside", true);
    s.resolved_apart = v.boolean("resolved_apart", false);
    if (s.throttle_threshold < 0 || s.throttle_threshold > 1)
        v.at("throttle_threshold").fail("expected a fraction between 0 and 1");
    if (s.max_noise < 0 || s.time_budget_s < 0 || s.warmup_s < 0 || s.min_sample_s < 0 ||
        s.row_timeout_s <= 0 || s.reference_budget_s < 0)
        v.fail("negative time or noise threshold");
}

std::int64_t ProfileSettings::passes() const noexcept {
    return std::max<std::int64_t>({1, repeat, slices});
}

ProfileSettings ProfileSettings::slice_settings(std::int64_t count, bool first) const {
    ProfileSettings s = *this;
    const double share =
        double(std::max<std::int64_t>(1, repeat)) / double(std::max<std::int64_t>(1, count));
    if (share >= 1)
        return s;
    s.time_budget_s *= share;
    s.reference_budget_s *= share;
    s.min_samples = std::max(std::min(min_samples, kSliceMinSamples),
                             std::int64_t(std::ceil(double(min_samples) * share)));
    if (!first) {
        s.warmup_s *= share;
        s.memory_beside = false;
    }
    return s;
}

ProfileSettings ProfileSettings::paired_slice_settings(std::int64_t slices, bool first) const {
    ProfileSettings s = slice_settings(slices, first);
    const std::int64_t n = std::max<std::int64_t>(1, slices);
    s.min_samples = std::max<std::int64_t>(1, (min_samples + n - 1) / n);
    s.max_noise = 0;
    if (!first)
        s.warmup_s = std::min(s.warmup_s, kPairedSliceWarmupS);
    return s;
}

ProfileSettings ProfileSettings::pass_settings(std::int64_t pass) const {
    return slice_settings(passes(), pass == 0);
}

nlohmann::json ProfileSettings::to_json() const {
    return *this;
}

ProfileSettings ProfileSettings::from_json(const nlohmann::json& j) {
    return j.get<ProfileSettings>();
}

std::vector<std::pair<std::string, std::string>> ProfileSettings::entries() const {
    std::vector<std::pair<std::string, std::string>> out;
    const auto j = to_json(); // items() of a temporary would dangle
    for (const auto& [key, value] : j.items())
        out.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
    return out;
}

} // namespace switchyard
