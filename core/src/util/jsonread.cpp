// SPDX-License-Identifier: MIT
#include "util/jsonread.h"
#include "util/textutil.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iterator>
#include <unordered_set>

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

// --- dump ---

namespace {

// Every string and key of `value` that is not UTF-8, escaped in place.
void escape_invalid_utf8(json& value) {
    if (value.is_string()) {
        auto& s = value.get_ref<std::string&>();
        if (!text::valid_utf8(s))
            s = text::utf8_escaped(s);
    } else if (value.is_array()) {
        for (auto& item : value)
            escape_invalid_utf8(item);
    } else if (value.is_object()) {
        json out = json::object();
        for (auto& [key, item] : value.items()) {
            escape_invalid_utf8(item);
            out[text::valid_utf8(key) ? key : text::utf8_escaped(key)] = std::move(item);
        }
        value = std::move(out);
    }
}

} // namespace

namespace {

std::string dump_utf8(const json& value, int indent) {
    try {
        return value.dump(indent);
    } catch (const json::type_error& e) {
        if (e.id != 316) // 316: invalid UTF-8
            throw;
    }
    json copy = value;
    escape_invalid_utf8(copy);
    return copy.dump(indent);
}

} // namespace

std::string dump(const json& value, int indent) {
    // A document's "format" and "format_version" come first, so a reader (or a person) knows
    // what it is from its first line; the other keys follow in nlohmann's (sorted) order.
    if (!value.is_object() || !value.contains("format") || !value.contains("format_version"))
        return dump_utf8(value, indent);
    json rest = value;
    rest.erase("format");
    rest.erase("format_version");
    const std::string nl = indent >= 0 ? "\n" : "";
    const std::string pad = indent >= 0 ? std::string(std::size_t(indent), ' ') : "";
    const std::string colon = indent >= 0 ? ": " : ":";
    std::string out = "{" + nl + pad + "\"format\"" + colon + dump_utf8(value["format"], -1) + "," +
                      nl + pad + "\"format_version\"" + colon +
                      dump_utf8(value["format_version"], -1);
    if (rest.empty())
        return out + nl + "}";
    // The rest's own text without its opening brace (and, indented, its newline).
    const std::string tail = dump_utf8(rest, indent);
    return out + "," + tail.substr(indent >= 0 ? 2 : 1);
}

// --- parse ---

ParseError::ParseError(std::size_t byte, std::string position, std::string message, bool truncated)
    : std::runtime_error(position + ": " + message), m_byte(byte), m_position(std::move(position)),
      m_message(std::move(message)), m_truncated(truncated) {}

namespace {

// A character iterator that publishes how far the parser has read, so errors found by the
// SAX handler (depth, duplicates) have a position too.
struct TrackingIterator {
    using iterator_category = std::forward_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    const char* p = nullptr;
    const char** read_up_to = nullptr;

    reference operator*() const { return *p; }
    TrackingIterator& operator++() {
        ++p;
        if (read_up_to)
            *read_up_to = p;
        return *this;
    }
    TrackingIterator operator++(int) {
        auto old = *this;
        ++*this;
        return old;
    }
    bool operator==(const TrackingIterator& o) const { return p == o.p; }
    bool operator!=(const TrackingIterator& o) const { return p != o.p; }
};

// "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..." ->
// "syntax error ...". nlohmann's message echoes the bytes it last read ("last read:
// '\\' then a raw byte 0xf0"), which may be anything the document held: this is where the
// document's text enters the message, so it is escaped here (text::untrusted: control characters
// and bytes that are not UTF-8 written as visible escapes).
std::string bare_message(const std::string& what) {
    std::string out = what;
    if (out.rfind("[json.exception.", 0) == 0)
        if (auto close = out.find("] "); close != std::string::npos)
            out = out.substr(close + 2);
    if (out.rfind("parse error", 0) == 0)
        if (auto colon = out.find(": "); colon != std::string::npos)
            out = out.substr(colon + 2);
    return text::untrusted(out);
}

// Builds the DOM like nlohmann's own parser, refusing what the limits refuse.
class StrictSax {
public:
    StrictSax(json& root, const ParseLimits& limits, std::string_view text, const char** read_up_to,
              ParseStats* stats)
        : m_dom(root, false), m_limits(limits), m_text(text), m_read_up_to(read_up_to),
          m_stats(stats) {}

    bool null() { return value() && m_dom.null(); }
    bool boolean(bool v) { return value() && m_dom.boolean(v); }
    bool number_integer(json::number_integer_t v) {
        return value() && (!kept_number() || m_dom.number_integer(v));
    }
    bool number_unsigned(json::number_unsigned_t v) {
        return value() && (!kept_number() || m_dom.number_unsigned(v));
    }
    bool number_float(json::number_float_t v, const std::string& s) {
        return value() && (!kept_number() || m_dom.number_float(v, s));
    }
    bool string(std::string& v) { return value() && m_dom.string(v); }
    bool binary(json::binary_t& v) { return value() && m_dom.binary(v); }
    bool start_object(std::size_t n) {
        if (!value() || !deeper())
            return false;
        m_keys.emplace_back();
        m_numbers.push_back(kNotAnArray);
        return m_dom.start_object(n);
    }
    bool key(std::string& k) {
        if (m_limits.reject_duplicate_keys && !m_keys.back().insert(k).second)
            return fail("duplicate key '" + text::untrusted(k) + "'");
        return m_dom.key(k);
    }
    bool end_object() {
        --m_depth;
        m_keys.pop_back();
        m_numbers.pop_back();
        return m_dom.end_object();
    }
    bool start_array(std::size_t n) {
        if (!value() || !deeper())
            return false;
        m_numbers.push_back(0);
        return m_dom.start_array(n);
    }
    bool end_array() {
        --m_depth;
        const auto numbers = m_numbers.back();
        m_numbers.pop_back();
        if (numbers > m_limits.max_numbers_per_array && m_stats) {
            ++m_stats->arrays_capped;
            m_stats->numbers_dropped += numbers - m_limits.max_numbers_per_array;
            m_stats->longest_array = std::max(m_stats->longest_array, numbers);
        }
        return m_dom.end_array();
    }
    bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) {
        // `byte` is 1-based and points just past the offending character.
        const std::size_t at = byte > 0 ? byte - 1 : 0;
        m_error.emplace(at, position_of(m_text, at), bare_message(e.what()),
                        byte >= m_text.size() && e.id == 101);
        return false;
    }

    std::optional<ParseError>& error() { return m_error; }

private:
    static constexpr std::size_t kNotAnArray = std::size_t(-1);

    // Whether a number is kept: always outside arrays; in an array, the first
    // max_numbers_per_array of them.
    bool kept_number() {
        if (m_numbers.empty() || m_numbers.back() == kNotAnArray)
            return true;
        return ++m_numbers.back() <= m_limits.max_numbers_per_array;
    }
    bool value() {
        if (++m_values > m_limits.max_values)
            return fail("more than " + std::to_string(m_limits.max_values) + " values");
        return true;
    }
    bool deeper() {
        if (++m_depth > m_limits.max_depth)
            return fail("nested deeper than " + std::to_string(m_limits.max_depth) + " levels");
        return true;
    }
    bool fail(const std::string& message) {
        const std::size_t read = std::size_t(*m_read_up_to - m_text.data());
        const std::size_t at = read > 0 ? read - 1 : 0;
        m_error.emplace(at, position_of(m_text, at), message, false);
        return false;
    }

    nlohmann::detail::json_sax_dom_parser<json> m_dom;
    const ParseLimits& m_limits;
    std::string_view m_text;
    const char** m_read_up_to;
    std::size_t m_depth = 0;
    std::size_t m_values = 0;
    std::vector<std::unordered_set<std::string>> m_keys;
    std::vector<std::size_t> m_numbers; // per open container: numbers met (arrays)
    ParseStats* m_stats;
    std::optional<ParseError> m_error;
};

} // namespace

// The fast path of parse(): a recursive-descent reader of well-formed documents within
// the limits that builds the same DOM as nlohmann's parser. It gives up (returns false) on
// anything it does not read the common way (an error, a limit reached, a \u escape, an
// integer that does not fit 64 bits, a byte order mark, capped number arrays); parse() then
// runs the strict SAX parser, which finds and positions the error. So the fast path keeps no
// positions and no per-object key sets: a duplicate key is a failed map insertion.
bool FastScanner::document(json& out) {
    if (!no_bom())
        return false; // a byte order mark: nlohmann skips it, the slow path decides
    skip_space();
    if (!value(out, 0))
        return false;
    return at_end();
}

bool FastScanner::value(json& out, std::size_t depth) {
    if (m_p == m_end || !count_value())
        return false;
    switch (*m_p) {
    case '{':
        return object(out, depth + 1);
    case '[':
        return array(out, depth + 1);
    case '"': {
        std::string s;
        if (!string(s))
            return false;
        out = std::move(s);
        return true;
    }
    case 't':
        out = true;
        return literal("true");
    case 'f':
        out = false;
        return literal("false");
    case 'n':
        out = nullptr;
        return literal("null");
    default:
        return number(out);
    }
}

bool FastScanner::object(json& out, std::size_t depth) {
    if (depth > m_limits.max_depth || depth > kMaxFastDepth)
        return false;
    ++m_p; // '{'
    out = json::object();
    auto& members = out.get_ref<json::object_t&>();
    skip_space();
    if (m_p != m_end && *m_p == '}') {
        ++m_p;
        return true;
    }
    for (;;) {
        skip_space();
        if (m_p == m_end || *m_p != '"')
            return false;
        std::string key;
        if (!string(key))
            return false;
        skip_space();
        if (m_p == m_end || *m_p != ':')
            return false;
        ++m_p;
        skip_space();
        json item;
        if (!value(item, depth))
            return false;
        if (m_limits.reject_duplicate_keys) {
            if (!members.emplace(std::move(key), std::move(item)).second)
                return false;
        } else {
            members[std::move(key)] = std::move(item);
        }
        skip_space();
        if (m_p == m_end)
            return false;
        if (*m_p == ',') {
            ++m_p;
            continue;
        }
        if (*m_p != '}')
            return false;
        ++m_p;
        return true;
    }
}

bool FastScanner::array(json& out, std::size_t depth) {
    if (depth > m_limits.max_depth || depth > kMaxFastDepth)
        return false;
    ++m_p; // '['
    out = json::array();
    auto& items = out.get_ref<json::array_t&>();
    skip_space();
    if (m_p != m_end && *m_p == ']') {
        ++m_p;
        return true;
    }
    for (;;) {
        skip_space();
        items.emplace_back();
        if (!value(items.back(), depth))
            return false;
        skip_space();
        if (m_p == m_end)
            return false;
        if (*m_p == ',') {
            ++m_p;
            continue;
        }
        if (*m_p != ']')
            return false;
        ++m_p;
        return true;
    }
}

// A string without \u escapes, valid UTF-8 (as nlohmann checks it: RFC 3629).
bool FastScanner::string(std::string& out) {
    ++m_p; // '"'
    for (;;) {
        const char* run = m_p;
        while (m_p != m_end) {
            const auto c = static_cast<unsigned char>(*m_p);
            if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
                break;
            ++m_p;
        }
        out.append(run, m_p);
        if (m_p == m_end)
            return false;
        const auto c = static_cast<unsigned char>(*m_p);
        if (c == '"') {
            ++m_p;
            return true;
        }
        if (c < 0x20)
            return false;
        if (c == '\\') {
            if (++m_p == m_end)
                return false;
            char unescaped = 0;
            switch (*m_p) {
            case '"':
                unescaped = '"';
                break;
            case '\\':
                unescaped = '\\';
                break;
            case '/':
                unescaped = '/';
                break;
            case 'b':
                unescaped = '\b';
                break;
            case 'f':
                unescaped = '\f';
                break;
            case 'n':
                unescaped = '\n';
                break;
            case 'r':
                unescaped = '\r';
                break;
            case 't':
                unescaped = '\t';
                break;
            default:
                return false; // \u and invalid escapes: the slow path
            }
            out += unescaped;
            ++m_p;
            continue;
        }
        if (!utf8_sequence(out))
            return false;
    }
}

// One multi-byte UTF-8 sequence, checked and appended.
bool FastScanner::utf8_sequence(std::string& out) {
    const auto n =
        text::utf8_length(reinterpret_cast<const unsigned char*>(m_p), std::size_t(m_end - m_p));
    if (n < 2)
        return false;
    out.append(m_p, n);
    m_p += n;
    return true;
}

// JSON's number grammar; integers as nlohmann keeps them (unsigned when not negative,
// else signed), others as double.
bool FastScanner::number(json& out) {
    const char* start = m_p;
    bool negative = false;
    if (*m_p == '-') {
        negative = true;
        ++m_p;
    }
    if (m_p == m_end)
        return false;
    if (*m_p == '0') {
        ++m_p;
    } else if (*m_p >= '1' && *m_p <= '9') {
        while (m_p != m_end && *m_p >= '0' && *m_p <= '9')
            ++m_p;
    } else {
        return false;
    }
    bool integral = true;
    if (m_p != m_end && *m_p == '.') {
        integral = false;
        ++m_p;
        if (m_p == m_end || *m_p < '0' || *m_p > '9')
            return false;
        while (m_p != m_end && *m_p >= '0' && *m_p <= '9')
            ++m_p;
    }
    if (m_p != m_end && (*m_p == 'e' || *m_p == 'E')) {
        integral = false;
        ++m_p;
        if (m_p != m_end && (*m_p == '+' || *m_p == '-'))
            ++m_p;
        if (m_p == m_end || *m_p < '0' || *m_p > '9')
            return false;
        while (m_p != m_end && *m_p >= '0' && *m_p <= '9')
            ++m_p;
    }
    if (integral) {
        if (negative) {
            std::int64_t v = 0;
            const auto r = std::from_chars(start, m_p, v);
            if (r.ec != std::errc() || r.ptr != m_p)
                return false;
            out = json::number_integer_t(v);
        } else {
            std::uint64_t v = 0;
            const auto r = std::from_chars(start, m_p, v);
            if (r.ec != std::errc() || r.ptr != m_p)
                return false;
            out = json::number_unsigned_t(v);
        }
        return true;
    }
    double v = 0;
    const auto r = std::from_chars(start, m_p, v);
    if (r.ec != std::errc() || r.ptr != m_p || !std::isfinite(v))
        return false;
    out = json::number_float_t(v);
    return true;
}

bool FastScanner::integer(std::int64_t& out) {
    skip_space();
    const char* start = m_p;
    if (m_p != m_end && *m_p == '-')
        ++m_p;
    if (m_p == m_end || *m_p < '0' || *m_p > '9' || !count_value())
        return false;
    if (*m_p == '0')
        ++m_p;
    else
        while (m_p != m_end && *m_p >= '0' && *m_p <= '9')
            ++m_p;
    if (m_p != m_end && (*m_p == '.' || *m_p == 'e' || *m_p == 'E'))
        return false;
    const auto r = std::from_chars(start, m_p, out);
    return r.ec == std::errc() && r.ptr == m_p;
}

namespace {} // namespace

json parse(std::string_view text, const ParseLimits& limits, ParseStats* stats) {
    if (limits.max_numbers_per_array == std::size_t(-1)) {
        json fast;
        if (FastScanner(text, limits).document(fast))
            return fast;
    }
    return detail::parse_strict(text, limits, stats);
}

json detail::parse_strict(std::string_view text, const ParseLimits& limits, ParseStats* stats) {
    json root;
    const char* read_up_to = text.data();
    StrictSax sax(root, limits, text, &read_up_to, stats);
    const TrackingIterator first{text.data(), &read_up_to};
    const TrackingIterator last{text.data() + text.size(), nullptr};
    bool ok = false;
    try {
        ok = json::sax_parse(first, last, &sax);
    } catch (const std::bad_alloc&) {
        throw;
    } catch (const std::exception& e) {
        const std::size_t read = std::size_t(read_up_to - text.data());
        throw ParseError(read, position_of(text, read), bare_message(e.what()), false);
    }
    // nlohmann's lexer reads a NUL byte as the end of the input, so "123\0junk" would parse
    // as 123. JSON text holds no NUL outside a string (where it must be escaped), so the
    // first one is where the document goes wrong, whatever the parser made of it.
    const auto nul = text.find('\0');
    if (nul != std::string_view::npos && (ok || read_up_to - text.data() >= std::ptrdiff_t(nul)))
        throw ParseError(
            nul, position_of(text, nul),
            ok ? "a NUL byte after the top-level value (only whitespace may follow "
                 "it)"
               : "a NUL byte (JSON text holds none, and a string writes it as \\u0000)",
            false);
    if (auto& e = sax.error())
        throw *e;
    if (!ok)
        throw ParseError(0, position_of(text, 0), "not a JSON document", false);
    return root;
}

} // namespace switchyard::jsonread
