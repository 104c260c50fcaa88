// SPDX-License-Identifier: MIT
#include <switchyard/sdk/device.h>

#include <chrono>
#include <cstring>
#include <new>
#include <stdexcept>

namespace switchyard {

double Device::time_launches(const std::function<void()>& launch, int count) {
    synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i)
        launch();
    synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

nlohmann::json DeviceInfo::to_json() const {
    return {{"id", id},
            {"kind", kind},
            {"name", name},
            {"arch", arch},
            {"properties", properties},
            {"peak_bandwidth_gbs", peak_bandwidth_gbs},
            {"peak_bandwidth_source", peak_bandwidth_source},
            {"peak_gflops", peak_gflops},
            {"peak_gflops_source", peak_gflops_source},
            {"has_device_timer", has_device_timer}};
}

DeviceInfo DeviceInfo::from_json(const nlohmann::json& j) {
    if (!j.is_object())
        throw std::runtime_error("device: expected an object");
    DeviceInfo d;
    auto str = [&](const char* key, bool required) {
        if (!j.contains(key)) {
            if (required)
                throw std::runtime_error(std::string("device.") + key + ": missing");
            return std::string();
        }
        if (!j[key].is_string())
            throw std::runtime_error(std::string("device.") + key + ": expected a string");
        return j[key].get<std::string>();
    };
    auto num = [&](const char* key) {
        if (!j.contains(key))
            return 0.0;
        if (!j[key].is_number())
            throw std::runtime_error(std::string("device.") + key + ": expected a number");
        return j[key].get<double>();
    };
    d.id = str("id", true);
    d.kind = str("kind", false);
    d.name = str("name", false);
    d.arch = str("arch", false);
    if (j.contains("properties"))
        d.properties = j["properties"];
    d.peak_bandwidth_gbs = num("peak_bandwidth_gbs");
    d.peak_bandwidth_source = str("peak_bandwidth_source", false);
    d.peak_gflops = num("peak_gflops");
    d.peak_gflops_source = str("peak_gflops_source", false);
    if (j.contains("has_device_timer") && j["has_device_timer"].is_boolean())
        d.has_device_timer = j["has_device_timer"].get<bool>();
    return d;
}

} // namespace switchyard
