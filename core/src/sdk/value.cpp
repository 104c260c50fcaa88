// SPDX-License-Identifier: MIT
#include <switchyard/sdk/value.h>

#include <algorithm>

namespace switchyard {

Value::Value(std::initializer_list<Member> members) : m_data(Object{}) {
    for (const auto& [key, value] : members)
        (*this)[key] = value;
}

double Value::as_number() const {
    if (is_integer())
        return double(as_integer());
    return std::get<double>(m_data);
}

const Value* Value::find(std::string_view key) const noexcept {
    if (!is_object())
        return nullptr;
    const auto& list = members();
    const auto it =
        std::find_if(list.begin(), list.end(), [&](const Member& m) { return m.first == key; });
    return it == list.end() ? nullptr : &it->second;
}

Value& Value::operator[](std::string_view key) {
    if (is_null())
        m_data = Object{};
    auto& list = members();
    for (auto& m : list)
        if (m.first == key)
            return m.second;
    return list.emplace_back(std::string(key), Value()).second;
}

void Value::push_back(Value element) {
    if (is_null())
        m_data = Array{};
    elements().push_back(std::move(element));
}

std::size_t Value::size() const noexcept {
    if (is_object())
        return members().size();
    if (is_array())
        return elements().size();
    return 0;
}

std::string Value::text_or(std::string_view key, std::string fallback) const {
    const Value* v = find(key);
    return v && v->is_text() ? v->as_text() : fallback;
}

std::int64_t Value::integer_or(std::string_view key, std::int64_t fallback) const noexcept {
    const Value* v = find(key);
    return v && v->is_integer() ? v->as_integer() : fallback;
}

double Value::number_or(std::string_view key, double fallback) const noexcept {
    const Value* v = find(key);
    return v && v->is_number() ? v->as_number() : fallback;
}

} // namespace switchyard
