// SPDX-License-Identifier: MIT
#pragma once

// Checked accessors for reading reports and worker messages: every failure throws
// std::runtime_error naming the key path ("rows[3].stats.median: expected a number").

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace switchyard::jsonread {

[[noreturn]] inline void fail(const std::string& path, const std::string& what) {
    throw std::runtime_error(path + ": " + what);
}

inline const nlohmann::json* find(const nlohmann::json& j, const char* key) {
    if (!j.is_object())
        return nullptr;
    auto it = j.find(key);
    return it == j.end() ? nullptr : &*it;
}

// The member `key`; nullptr when it is absent and the caller has a default for it.
inline const nlohmann::json* member(const nlohmann::json& j, const char* key, const std::string& path,
                                    bool has_default) {
    const auto* v = find(j, key);
    if (!v && !has_default)
        fail(path + "." + key, "missing");
    return v;
}

inline std::string str(const nlohmann::json& j, const char* key, const std::string& path,
                       std::optional<std::string> def = std::nullopt) {
    const auto* v = member(j, key, path, def.has_value());
    if (!v)
        return *def;
    if (!v->is_string())
        fail(path + "." + key, "expected a string");
    return v->get<std::string>();
}

inline double num(const nlohmann::json& j, const char* key, const std::string& path,
                  std::optional<double> def = std::nullopt) {
    const auto* v = member(j, key, path, def.has_value());
    if (!v)
        return *def;
    if (!v->is_number())
        fail(path + "." + key, "expected a number");
    const double d = v->get<double>();
    if (!std::isfinite(d))
        fail(path + "." + key, "expected a finite number");
    return d;
}

inline std::int64_t integer(const nlohmann::json& j, const char* key, const std::string& path,
                            std::optional<std::int64_t> def = std::nullopt, std::int64_t lo = 0,
                            std::int64_t hi = std::int64_t(1) << 53) {
    const auto* v = member(j, key, path, def.has_value());
    if (!v)
        return *def;
    if (!v->is_number())
        fail(path + "." + key, "expected an integer");
    const double d = v->get<double>();
    if (!(d >= double(lo) && d <= double(hi)) || d != std::floor(d))
        fail(path + "." + key, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return std::int64_t(d);
}

inline bool boolean(const nlohmann::json& j, const char* key, const std::string& path,
                    std::optional<bool> def = std::nullopt) {
    const auto* v = member(j, key, path, def.has_value());
    if (!v)
        return *def;
    if (!v->is_boolean())
        fail(path + "." + key, "expected true or false");
    return v->get<bool>();
}

inline std::vector<std::string> strings(const nlohmann::json& j, const char* key, const std::string& path) {
    std::vector<std::string> out;
    const auto* v = find(j, key);
    if (!v)
        return out;
    if (!v->is_array())
        fail(path + "." + key, "expected an array of strings");
    for (std::size_t i = 0; i < v->size(); ++i) {
        if (!(*v)[i].is_string())
            fail(path + "." + key + "[" + std::to_string(i) + "]", "expected a string");
        out.push_back((*v)[i].get<std::string>());
    }
    return out;
}

inline const nlohmann::json& object(const nlohmann::json& j, const char* key, const std::string& path) {
    const auto* v = find(j, key);
    if (!v)
        fail(path + "." + key, "missing");
    if (!v->is_object())
        fail(path + "." + key, "expected an object");
    return *v;
}

} // namespace switchyard::jsonread
