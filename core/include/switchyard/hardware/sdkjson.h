// SPDX-License-Identifier: MIT
#pragma once

// The JSON forms of the SDK's types (Value, Ceiling, DeviceInfo). They are the core's, not the
// SDK's: a plugin builds and reads these types without a JSON library, so the plugin ABI does
// not depend on nlohmann's release (docs/plugins.md, "Compatibility").

#include <switchyard/core_export.h>
#include <switchyard/sdk/device.h>
#include <switchyard/sdk/value.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>

namespace switchyard {

/// Value as JSON: an object's members in the JSON object (sorted, as nlohmann keeps them).
inline void to_json(nlohmann::json& j, const Value& v) {
    switch (v.type()) {
    case Value::Type::Null:
        j = nullptr;
        return;
    case Value::Type::Bool:
        j = v.as_bool();
        return;
    case Value::Type::Integer:
        j = v.as_integer();
        return;
    case Value::Type::Number:
        j = v.as_number();
        return;
    case Value::Type::Text:
        j = v.as_text();
        return;
    case Value::Type::Array:
        j = nlohmann::json::array();
        for (const auto& e : v.elements())
            j.push_back(e);
        return;
    case Value::Type::Object:
        j = nlohmann::json::object();
        for (const auto& [key, member] : v.members())
            j[key] = member;
        return;
    }
}

/// JSON as Value; an unsigned integer beyond int64 becomes a number. (Documents others wrote
/// were parsed with jsonread's limits already: the recursion is bounded by their depth.)
inline void from_json(const nlohmann::json& j, Value& v) {
    switch (j.type()) {
    case nlohmann::json::value_t::boolean:
        v = j.get<bool>();
        return;
    case nlohmann::json::value_t::number_integer:
        v = j.get<std::int64_t>();
        return;
    case nlohmann::json::value_t::number_unsigned: {
        const auto u = j.get<std::uint64_t>();
        if (u <= std::uint64_t(std::numeric_limits<std::int64_t>::max()))
            v = std::int64_t(u);
        else
            v = double(u);
        return;
    }
    case nlohmann::json::value_t::number_float:
        v = j.get<double>();
        return;
    case nlohmann::json::value_t::string:
        v = j.get_ref<const std::string&>();
        return;
    case nlohmann::json::value_t::array: {
        Value::Array list;
        list.reserve(j.size());
        for (const auto& e : j)
            list.push_back(e.get<Value>());
        v = std::move(list);
        return;
    }
    case nlohmann::json::value_t::object: {
        Value::Object members;
        members.reserve(j.size());
        for (auto it = j.begin(); it != j.end(); ++it)
            members.emplace_back(it.key(), it.value().get<Value>());
        v = std::move(members);
        return;
    }
    default:
        v = Value();
        return;
    }
}

SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const Ceiling& c);
/// Throws std::runtime_error naming the bad key.
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, Ceiling& c);

SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const DeviceInfo& info);
/// Throws std::runtime_error naming the bad key.
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, DeviceInfo& info);

} // namespace switchyard
