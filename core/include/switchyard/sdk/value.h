// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace switchyard {

/// A JSON-shaped value the SDK passes without depending on a JSON library: a cell's metadata
/// (Registration::meta), a device's properties (DeviceInfo::properties), a component's
/// config. Null, a flag, an integer, a number, a text, an array or an object whose members
/// keep the order they were set in. The core converts it to and from its JSON documents;
/// a plugin builds it with braces:
///
///     .meta = {{"requires", "CUDA 12"}, {"runs_as", {{"CPU", "x86-64-v3/default"}}}}
class SWITCHYARD_CORE_EXPORT Value {
public:
    enum class Type { Null, Bool, Integer, Number, Text, Array, Object };
    using Array = std::vector<Value>;
    using Member = std::pair<std::string, Value>;
    using Object = std::vector<Member>;

    Value() noexcept = default;
    Value(std::nullptr_t) noexcept {}
    Value(bool b) noexcept : m_data(b) {}
    template <class I>
    requires(std::is_integral_v<I> && !std::is_same_v<I, bool>) Value(I i)
    noexcept : m_data(static_cast<std::int64_t>(i)) {}
    Value(double d) noexcept : m_data(d) {}
    Value(float f) noexcept : m_data(double(f)) {}
    Value(std::string s) noexcept : m_data(std::move(s)) {}
    Value(std::string_view s) : m_data(std::string(s)) {}
    Value(const char* s) : m_data(std::string(s)) {}
    Value(Array a) noexcept : m_data(std::move(a)) {}
    Value(Object o) noexcept : m_data(std::move(o)) {}
    /// An object: {{"key", value}, ...} (a later member of the same key replaces the earlier).
    Value(std::initializer_list<Member> members);

    static Value object() { return Value(Object{}); }
    static Value array(std::initializer_list<Value> elements = {}) {
        return Value(Array(elements));
    }

    Type type() const noexcept { return Type(m_data.index()); }
    bool is_null() const noexcept { return type() == Type::Null; }
    bool is_bool() const noexcept { return type() == Type::Bool; }
    bool is_integer() const noexcept { return type() == Type::Integer; }
    /// An integer or a number.
    bool is_number() const noexcept { return is_integer() || type() == Type::Number; }
    bool is_text() const noexcept { return type() == Type::Text; }
    bool is_array() const noexcept { return type() == Type::Array; }
    bool is_object() const noexcept { return type() == Type::Object; }

    /// The value as that type; std::bad_variant_access when it is another (as_number()
    /// takes an integer too).
    bool as_bool() const { return std::get<bool>(m_data); }
    std::int64_t as_integer() const { return std::get<std::int64_t>(m_data); }
    double as_number() const;
    const std::string& as_text() const { return std::get<std::string>(m_data); }
    const Array& elements() const { return std::get<Array>(m_data); }
    const Object& members() const { return std::get<Object>(m_data); }
    Array& elements() { return std::get<Array>(m_data); }
    Object& members() { return std::get<Object>(m_data); }

    /// An object's member, or nullptr (also when this is not an object).
    const Value* find(std::string_view key) const noexcept;
    bool contains(std::string_view key) const noexcept { return find(key) != nullptr; }
    /// The member `key`, added as null when missing; a null value becomes an object first.
    /// std::bad_variant_access when this is neither null nor an object.
    Value& operator[](std::string_view key);
    /// Appends to an array; a null value becomes an array first.
    void push_back(Value element);
    /// Members of an object, elements of an array, 0 otherwise.
    std::size_t size() const noexcept;

    /// The member `key` when it has the type asked for, otherwise `fallback`.
    std::string text_or(std::string_view key, std::string fallback) const;
    std::int64_t integer_or(std::string_view key, std::int64_t fallback) const noexcept;
    double number_or(std::string_view key, double fallback) const noexcept;

    friend bool operator==(const Value&, const Value&) = default;

private:
    std::variant<std::monostate, bool, std::int64_t, double, std::string, Array, Object> m_data;
};

} // namespace switchyard
