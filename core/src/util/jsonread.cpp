// SPDX-License-Identifier: MIT
#include "util/jsonread.h"

#include <algorithm>
#include <cmath>

namespace switchyard::jsonread {

namespace {
thread_local const std::string* t_root_path = nullptr;
} // namespace

std::string type_name(const json& value) {
    switch (value.type()) {
    case json::value_t::null:
        return "null";
    case json::value_t::boolean:
        return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
        return "integer";
    case json::value_t::number_float:
        return "number";
    case json::value_t::string:
        return "string";
    case json::value_t::array:
        return "array";
    case json::value_t::object:
        return "object";
    default:
        return "value";
    }
}

std::string position_of(std::string_view text, std::size_t byte) {
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string index(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

Error::Error(std::string path, std::string message)
    : std::runtime_error(path.empty() ? message : path + ": " + message), m_path(std::move(path)),
      m_message(std::move(message)) {}

bool is(const json& value, Kind kind) {
    switch (kind) {
    case Kind::String:
        return value.is_string();
    case Kind::Number:
        return value.is_number();
    case Kind::Integer:
        return value.is_number_integer();
    case Kind::Boolean:
        return value.is_boolean();
    case Kind::Array:
    case Kind::ArrayOfStrings:
    case Kind::ArrayOfObjects:
        return value.is_array();
    case Kind::Object:
        return value.is_object();
    }
    return false;
}

const char* expected(Kind kind) {
    switch (kind) {
    case Kind::String:
        return "a string";
    case Kind::Number:
        return "a number";
    case Kind::Integer:
        return "an integer";
    case Kind::Boolean:
        return "true or false";
    case Kind::Array:
        return "an array";
    case Kind::Object:
        return "an object";
    case Kind::ArrayOfStrings:
        return "an array of strings";
    case Kind::ArrayOfObjects:
        return "an array of objects";
    }
    return "a value";
}

// --- Value ---

Value::Value(const json& j, std::string_view root_name)
    : m_j(&j), m_path(t_root_path ? *t_root_path : std::string(root_name)) {}

Value Value::at_path(const json& j, std::string path) {
    Value v(j);
    v.m_path = std::move(path);
    return v;
}

Value::PathScope::PathScope(const std::string& path) : m_saved(t_root_path) {
    t_root_path = &path;
}
Value::PathScope::~PathScope() {
    t_root_path = m_saved;
}

void Value::fail(const std::string& message) const {
    throw Error(m_path, message);
}

const Value& Value::expect(Kind kind) const {
    if (!is(*m_j, kind))
        fail(std::string("expected ") + expected(kind) + ", got " + type_name(*m_j));
    return *this;
}

std::optional<Value> Value::find(std::string_view key) const {
    if (!m_j->is_object())
        return std::nullopt;
    auto it = m_j->find(key);
    if (it == m_j->end())
        return std::nullopt;
    return at_path(*it, join(m_path, key));
}

bool Value::contains(std::string_view key) const {
    return m_j->is_object() && m_j->contains(key);
}

Value Value::at(std::string_view key) const {
    expect(Kind::Object);
    auto v = find(key);
    if (!v)
        throw Error(join(m_path, key), "missing");
    return *v;
}

Value Value::operator[](std::size_t i) const {
    expect(Kind::Array);
    if (i >= m_j->size())
        throw Error(index(m_path, i), "missing");
    return at_path((*m_j)[i], index(m_path, i));
}

std::size_t Value::size() const {
    return m_j->size();
}

std::string Value::str() const {
    return expect(Kind::String).m_j->get<std::string>();
}

double Value::num() const {
    const double d = expect(Kind::Number).m_j->get<double>();
    if (!std::isfinite(d))
        fail("expected a finite number");
    return d;
}

std::int64_t Value::integer(std::int64_t lo, std::int64_t hi) const {
    if (!m_j->is_number())
        fail("expected an integer, got " + type_name(*m_j));
    const double d = m_j->get<double>();
    if (!(d >= double(lo) && d <= double(hi)) || d != std::floor(d))
        fail("expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return m_j->is_number_float() ? std::int64_t(d) : m_j->get<std::int64_t>();
}

bool Value::boolean() const {
    return expect(Kind::Boolean).m_j->get<bool>();
}

std::vector<std::string> Value::strings() const {
    if (!m_j->is_array())
        fail("expected an array of strings, got " + type_name(*m_j));
    std::vector<std::string> out;
    out.reserve(m_j->size());
    for (std::size_t i = 0; i < m_j->size(); ++i)
        out.push_back((*this)[i].str());
    return out;
}

std::string Value::str(std::string_view key, std::optional<std::string> def) const {
    if (def && !contains(key))
        return *def;
    return at(key).str();
}

double Value::num(std::string_view key, std::optional<double> def) const {
    if (def && !contains(key))
        return *def;
    return at(key).num();
}

std::int64_t Value::integer(std::string_view key, std::optional<std::int64_t> def, std::int64_t lo,
                            std::int64_t hi) const {
    if (def && !contains(key))
        return *def;
    return at(key).integer(lo, hi);
}

bool Value::boolean(std::string_view key, std::optional<bool> def) const {
    if (def && !contains(key))
        return *def;
    return at(key).boolean();
}

std::vector<std::string> Value::strings(std::string_view key) const {
    if (!contains(key))
        return {};
    return at(key).strings();
}

// --- Collector ---

void Collector::wrong_type(const std::string& path, Kind kind, const json& got) {
    add(path, std::string("expected ") + expected(kind) + ", got " + type_name(got));
}

const json* Collector::member(const json& object, std::string_view key, const std::string& path,
                              Kind kind, bool required) {
    auto it = object.find(key);
    if (it == object.end()) {
        if (required)
            m_problems.push_back({path, "missing", true});
        return nullptr;
    }
    if (!is(*it, kind)) {
        wrong_type(path, kind, *it);
        return nullptr;
    }
    return &*it;
}

bool Collector::string(const json& object, std::string_view key, const std::string& path,
                       std::string& out, bool required) {
    const json* v = member(object, key, path, Kind::String, required);
    if (v)
        out = v->get<std::string>();
    return v != nullptr;
}

bool Collector::integer(const json& object, std::string_view key, const std::string& path,
                        long long& out, bool required) {
    const json* v = member(object, key, path, Kind::Integer, required);
    if (v)
        out = v->get<long long>();
    return v != nullptr;
}

bool Collector::strings(const json& object, std::string_view key, const std::string& path,
                        std::vector<std::string>& out) {
    const json* v = member(object, key, path, Kind::ArrayOfStrings, false);
    if (!v)
        return false;
    for (std::size_t i = 0; i < v->size(); ++i) {
        const auto& item = (*v)[i];
        if (!item.is_string()) {
            wrong_type(index(path, i), Kind::String, item);
            continue;
        }
        out.push_back(item.get<std::string>());
    }
    return true;
}

std::optional<std::string> Collector::optional_string(const json& object, std::string_view key,
                                                      const std::string& path,
                                                      const char* expected_text) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null())
        return std::nullopt;
    if (!it->is_string()) {
        add(path, std::string("expected ") + expected_text + ", got " + type_name(*it));
        return std::nullopt;
    }
    return it->get<std::string>();
}

std::vector<std::pair<std::string, const json*>>
unknown_members(const json& object, const std::string& path,
                std::initializer_list<std::string_view> known) {
    std::vector<std::pair<std::string, const json*>> out;
    for (auto it = object.begin(); it != object.end(); ++it)
        if (std::find(known.begin(), known.end(), std::string_view(it.key())) == known.end())
            out.emplace_back(join(path, it.key()), &it.value());
    return out;
}

} // namespace switchyard::jsonread
