// SPDX-License-Identifier: MIT
#include <switchyard/profiling/profilesettings.h>

#include "util/jsonread.h"

namespace switchyard {

nlohmann::json ProfileSettings::to_json() const {
    nlohmann::json s = nlohmann::json::object();
    for (const auto& [op, list] : sizes)
        s[op] = list;
    return {{"ops", ops},
            {"devices", devices},
            {"sizes", s},
            {"all_variants", all_variants},
            {"variant", variant},
            {"cold", cold},
            {"max_noise", max_noise},
            {"min_samples", min_samples},
            {"time_budget_s", time_budget_s},
            {"max_samples", max_samples},
            {"warmup_s", warmup_s},
            {"min_sample_s", min_sample_s},
            {"row_timeout_s", row_timeout_s},
            {"seed", seed},
            {"keep_samples", keep_samples}};
}

ProfileSettings ProfileSettings::from_json(const nlohmann::json& j) {
    using namespace jsonread;
    const std::string p = "settings";
    if (!j.is_object())
        fail(p, "expected an object");
    ProfileSettings s;
    s.ops = strings(j, "ops", p);
    s.devices = strings(j, "devices", p);
    if (const auto* sz = find(j, "sizes")) {
        if (!sz->is_object())
            fail(p + ".sizes", "expected an object of op -> [size, ...]");
        for (auto it = sz->begin(); it != sz->end(); ++it)
            s.sizes[it.key()] = strings(*sz, it.key().c_str(), p + ".sizes");
    }
    s.all_variants = boolean(j, "all_variants", p, false);
    s.variant = str(j, "variant", p, std::string("default"));
    s.cold = boolean(j, "cold", p, false);
    s.max_noise = num(j, "max_noise", p, s.max_noise);
    s.min_samples = integer(j, "min_samples", p, s.min_samples, 1, 1 << 30);
    s.time_budget_s = num(j, "time_budget_s", p, s.time_budget_s);
    s.max_samples = integer(j, "max_samples", p, s.max_samples, 1, std::int64_t(1) << 40);
    s.warmup_s = num(j, "warmup_s", p, s.warmup_s);
    s.min_sample_s = num(j, "min_sample_s", p, s.min_sample_s);
    s.row_timeout_s = num(j, "row_timeout_s", p, s.row_timeout_s);
    s.seed = std::uint64_t(integer(j, "seed", p, std::int64_t(s.seed), 0, std::int64_t(1) << 53));
    s.keep_samples = integer(j, "keep_samples", p, s.keep_samples, 0, std::int64_t(1) << 32);
    if (s.max_noise < 0 || s.time_budget_s < 0 || s.warmup_s < 0 || s.min_sample_s < 0 || s.row_timeout_s <= 0)
        fail(p, "negative time or noise threshold");
    return s;
}

} // namespace switchyard
