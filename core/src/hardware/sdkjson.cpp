// SPDX-License-Identifier: MIT
#include <switchyard/hardware/sdkjson.h>

#include "util/jsonread.h"

namespace switchyard {

void to_json(nlohmann::json& j, const Ceiling& c) {
    j = {{"id", c.id},
         {"kind", c.kind},
         {"level", c.level},
         {"value", c.value},
         {"threads", c.threads},
         {"measured", c.measured},
         {"method", c.method},
         {"working_set_bytes", c.working_set_bytes},
         {"capacity_bytes", c.capacity_bytes}};
}

void from_json(const nlohmann::json& j, Ceiling& c) {
    const jsonread::Value v(j, "ceiling");
    v.expect(jsonread::Kind::Object);
    c = Ceiling{};
    c.id = v.str("id");
    c.kind = v.str("kind");
    c.level = v.str("level", std::string());
    c.value = v.num("value");
    c.threads = static_cast<int>(v.integer("threads", 0, 0, 1 << 20));
    if (v.contains("measured") && j["measured"].is_boolean())
        c.measured = j["measured"].get<bool>();
    c.method = v.str("method", std::string());
    c.working_set_bytes = v.num("working_set_bytes", 0.0);
    c.capacity_bytes = v.num("capacity_bytes", 0.0);
}

void to_json(nlohmann::json& j, const DeviceInfo& d) {
    j = {{"id", d.id},
         {"kind", d.kind},
         {"name", d.name},
         {"arch", d.arch},
         {"properties", d.properties},
         {"peak_bandwidth_gbs", d.peak_bandwidth_gbs},
         {"peak_bandwidth_source", d.peak_bandwidth_source},
         {"peak_gflops", d.peak_gflops},
         {"peak_gflops_source", d.peak_gflops_source},
         {"has_device_timer", d.has_device_timer},
         {"ceilings", d.ceilings}};
}

void from_json(const nlohmann::json& j, DeviceInfo& d) {
    const jsonread::Value v(j, "device");
    v.expect(jsonread::Kind::Object);
    d = DeviceInfo{};
    d.id = v.str("id");
    d.kind = v.str("kind", std::string());
    d.name = v.str("name", std::string());
    d.arch = v.str("arch", std::string());
    if (v.contains("properties"))
        d.properties = j["properties"].get<Value>();
    d.peak_bandwidth_gbs = v.num("peak_bandwidth_gbs", 0.0);
    d.peak_bandwidth_source = v.str("peak_bandwidth_source", std::string());
    d.peak_gflops = v.num("peak_gflops", 0.0);
    d.peak_gflops_source = v.str("peak_gflops_source", std::string());
    if (v.contains("has_device_timer") && j["has_device_timer"].is_boolean())
        d.has_device_timer = j["has_device_timer"].get<bool>();
    if (const auto list = v.find("ceilings")) {
        list->expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < list->size(); ++i)
            d.ceilings.push_back((*list)[i].get<Ceiling>());
    }
}

} // namespace switchyard
