// SPDX-License-Identifier: MIT
#pragma once

// The one JSON reader of the core. Every problem names the key path where it was found
// ("rows[3].samples[2]: expected a number, got string").
//
// Two ways to use it:
// - Value: checked accessors that throw jsonread::Error on the first problem (reports,
//   worker messages, settings, device info). Nested types are read with get<T>(), which
//   calls the type's ADL from_json(const json&, T&) with the key path carried along, so a
//   nested reader names the full path without anyone editing messages afterwards.
// - Collector: the same checks, but problems are collected and reading goes on (plugin
//   manifests, where every error is listed at once and unknown keys are kept).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::jsonread {

using json = nlohmann::json;

/// What a document may hold before parse() refuses it (files written by other people).
struct ParseLimits {
    std::size_t max_depth = 64;               // nested arrays/objects
    std::size_t max_values = std::size_t(-1); // scalars, arrays and objects together
    bool reject_duplicate_keys = true;        // {"a": 1, "a": 2} is an error, not last-wins
    /// Numbers kept per array (a report's samples): the ones after are read, counted in
    /// ParseStats and dropped, so memory follows what is kept, not what the file holds.
    std::size_t max_numbers_per_array = std::size_t(-1);
};

/// What parse() dropped under ParseLimits::max_numbers_per_array.
struct ParseStats {
    std::size_t arrays_capped = 0;   // arrays that held more numbers than the cap
    std::size_t numbers_dropped = 0; // numbers read and not kept
    std::size_t longest_array = 0;   // numbers in the longest capped array
};

/// A document that cannot be parsed. what() is "line L, column C: message"; message()
/// alone is e.g. "number overflow parsing '1e400'" or "duplicate key 'rows'".
class ParseError : public std::runtime_error {
public:
    ParseError(std::size_t byte, std::string position, std::string message, bool truncated);
    std::size_t byte() const noexcept { return m_byte; }
    const std::string& position() const noexcept { return m_position; }
    const std::string& message() const noexcept { return m_message; }
    /// The text ended before the document did.
    bool truncated() const noexcept { return m_truncated; }

private:
    std::size_t m_byte;
    std::string m_position;
    std::string m_message;
    bool m_truncated;
};

/// The one way the core parses JSON that others wrote: never recurses deeper than
/// `limits.max_depth`, refuses duplicate keys, and turns everything the parser throws
/// (syntax, number overflow, invalid UTF-8) into ParseError with a line and column.
/// `stats`, when given, says what max_numbers_per_array dropped.
json parse(std::string_view text, const ParseLimits& limits = {}, ParseStats* stats = nullptr);

/// A member of an object others wrote, read leniently where a reader keeps going past a bad
/// part: its text, or `fallback` where `object` is not an object, the member is absent or is
/// not a string. (json::value() throws for a member of another type, and converts a number
/// out of an integer's range with undefined behaviour.)
inline std::string text_or(const json& object, std::string_view key, std::string fallback = {}) {
    if (!object.is_object())
        return fallback;
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}
/// The same for an integer member within [lo, hi]; a float, a string or a number outside the
/// range gives `fallback`.
inline std::int64_t integer_or(const json& object, std::string_view key, std::int64_t lo,
                               std::int64_t hi, std::int64_t fallback = 0) {
    if (!object.is_object())
        return fallback;
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number_integer())
        return fallback;
    if (it->is_number_unsigned()) {
        const auto u = it->get<std::uint64_t>();
        return hi >= 0 && u <= std::uint64_t(hi) && std::int64_t(u) >= lo ? std::int64_t(u)
                                                                          : fallback;
    }
    const auto v = it->get<std::int64_t>();
    return v >= lo && v <= hi ? v : fallback;
}

namespace detail {
/// parse() without its fast path: the strict SAX parser alone, which every document the
/// fast path does not accept goes through (tests compare the two).
json parse_strict(std::string_view text, const ParseLimits& limits = {},
                  ParseStats* stats = nullptr);
} // namespace detail

/// The reading of parse()'s fast path, for a reader that builds its own structures straight
/// from the text (plugin manifests) instead of a DOM. It reads only what the fast path
/// accepts: every function returns false where the fast path gives up (a syntax error, a
/// limit reached, a \u escape, an integer that does not fit 64 bits, ...), and the caller
/// then reads the text through parse(), whose strict parser finds and positions the error.
/// So it keeps no positions and no key sets: duplicate keys are the caller's to refuse.
class FastScanner {
public:
    FastScanner(std::string_view text, const ParseLimits& limits) noexcept
        : m_p(text.data()), m_end(text.data() + text.size()), m_limits(limits) {}

    /// The whole text as one value, as parse() builds it.
    bool document(json& out);
    /// False at a byte order mark (nlohmann skips it; the strict parser decides).
    bool no_bom() const noexcept {
        return m_p == m_end || static_cast<unsigned char>(*m_p) != 0xEF;
    }
    void skip_space() noexcept {
        while (m_p != m_end && (*m_p == ' ' || *m_p == '\n' || *m_p == '\r' || *m_p == '\t'))
            ++m_p;
    }
    /// After spaces: the next character is `c` (consumed).
    bool consume(char c) noexcept {
        skip_space();
        if (m_p == m_end || *m_p != c)
            return false;
        ++m_p;
        return true;
    }
    /// After spaces: the next character is `c` (not consumed).
    bool peek(char c) noexcept {
        skip_space();
        return m_p != m_end && *m_p == c;
    }
    /// Only spaces are left.
    bool at_end() noexcept {
        skip_space();
        return m_p == m_end;
    }
    /// One more value met: false past ParseLimits::max_values.
    bool count_value() noexcept { return ++m_values <= m_limits.max_values; }
    /// A string at the next character (no spaces skipped), appended to `out`; not counted.
    bool string(std::string& out);
    /// After spaces, a string (counted as a value), replacing `out`.
    bool string_value(std::string& out) {
        skip_space();
        if (m_p == m_end || *m_p != '"' || !count_value())
            return false;
        out.clear();
        return string(out);
    }
    /// An object's key and its colon: after spaces, a string, then ':'.
    bool key(std::string& out) {
        skip_space();
        if (m_p == m_end || *m_p != '"')
            return false;
        out.clear();
        return string(out) && consume(':');
    }
    /// After spaces, a number written as an integer (no fraction, no exponent) that fits
    /// 64 bits; counted as a value.
    bool integer(std::int64_t& out);
    /// After spaces, `null` (counted as a value; true and consumed) or not (false, nothing
    /// consumed).
    bool null() noexcept {
        skip_space();
        if (std::size_t(m_end - m_p) < 4 || std::string_view(m_p, 4) != "null")
            return false;
        m_p += 4;
        return count_value();
    }

private:
    // Deep enough for every limit in use; deeper documents take the slow path.
    static constexpr std::size_t kMaxFastDepth = 256;

    bool literal(std::string_view word) noexcept {
        if (std::size_t(m_end - m_p) < word.size() || std::string_view(m_p, word.size()) != word)
            return false;
        m_p += word.size();
        return true;
    }
    // A value into a DOM, at nesting `depth` (the enclosing containers).
    bool value(json& out, std::size_t depth);
    bool object(json& out, std::size_t depth);
    bool array(json& out, std::size_t depth);
    bool utf8_sequence(std::string& out);
    bool number(json& out);

    const char* m_p;
    const char* m_end;
    const ParseLimits& m_limits;
    std::size_t m_values = 0;
};

/// `value` as JSON text (nlohmann's dump(indent)) that is valid UTF-8 whatever its strings
/// and keys hold: a byte that is not part of well-formed UTF-8 is written as the visible text
/// "\xNN" (text::utf8_escaped), never dropped and never passed raw (nlohmann's own dump
/// throws on it). A document with "format" and "format_version" has those two first, the
/// other keys sorted (docs/json.md). The one writer of JSON the tool emits.
std::string dump(const json& value, int indent = -1);

/// "string", "integer", "object", ...: how a JSON value's type reads in a message.
std::string type_name(const json& value);
/// "line 3, column 7": 1-based position of `byte` in `text`.
std::string position_of(std::string_view text, std::size_t byte);
/// `path` + "." + `key` (just `key` at the root).
std::string join(const std::string& path, std::string_view key);
/// `path` + "[i]".
std::string index(const std::string& path, std::size_t i);

/// A value that cannot be read: what() is "path: message".
class Error : public std::runtime_error {
public:
    Error(std::string path, std::string message);
    const std::string& path() const noexcept { return m_path; }
    const std::string& message() const noexcept { return m_message; }

private:
    std::string m_path;
    std::string m_message;
};

/// The expected kinds of value, and how they read in a message.
enum class Kind { String, Number, Integer, Boolean, Array, Object, ArrayOfStrings, ArrayOfObjects };
bool is(const json& value, Kind kind);
const char* expected(Kind kind);

/// A JSON value and the key path it was read at. Every accessor throws Error naming the
/// path of the first problem.
class Value {
public:
    /// A document root. Inside a get<T>() the path continues the caller's; otherwise it
    /// starts at `root_name` (may be empty).
    explicit Value(const json& j, std::string_view root_name = {});
    /// A value at exactly `path`.
    static Value at_path(const json& j, std::string path);

    const json& raw() const noexcept { return *m_j; }
    const std::string& path() const noexcept { return m_path; }

    [[noreturn]] void fail(const std::string& message) const;
    /// Throws unless the value is of `kind` ("expected an object, got array").
    const Value& expect(Kind kind) const;

    /// The member `key` (throws "key: missing" when absent); nullopt from find().
    Value at(std::string_view key) const;
    std::optional<Value> find(std::string_view key) const;
    bool contains(std::string_view key) const;
    /// Element `i` of an array.
    Value operator[](std::size_t i) const;
    std::size_t size() const;

    std::string str() const;
    /// A stable string id read as an enum through `parse` (std::optional<E>(std::string_view));
    /// an unknown id fails with "unknown <what> '<id>'" plus `expected` when given.
    template <class Parse>
    auto id_as(std::string_view what, Parse parse, std::string_view expected = {}) const {
        const auto id = str();
        const auto parsed = parse(id);
        if (!parsed)
            fail("unknown " + std::string(what) + " '" + id + "'" +
                 (expected.empty() ? std::string() : " (" + std::string(expected) + ")"));
        return *parsed;
    }
    double num() const; // finite
    std::int64_t integer(std::int64_t lo = 0, std::int64_t hi = std::int64_t(1) << 53) const;
    bool boolean() const;
    std::vector<std::string> strings() const;

    // Members with a default when absent (nullopt: required).
    std::string str(std::string_view key, std::optional<std::string> def = std::nullopt) const;
    double num(std::string_view key, std::optional<double> def = std::nullopt) const;
    std::int64_t integer(std::string_view key, std::optional<std::int64_t> def = std::nullopt,
                         std::int64_t lo = 0, std::int64_t hi = std::int64_t(1) << 53) const;
    bool boolean(std::string_view key, std::optional<bool> def = std::nullopt) const;
    /// Absent: empty.
    std::vector<std::string> strings(std::string_view key) const;

    /// The value as T through T's ADL from_json(const json&, T&), with this path carried
    /// into the nested reader.
    template <class T> T get() const {
        T out{};
        PathScope scope(m_path);
        from_json(*m_j, out);
        return out;
    }
    template <class T> T get(std::string_view key) const { return at(key).get<T>(); }

private:
    // Makes `path` the root path of Values built inside the scope (thread-local).
    class PathScope {
    public:
        explicit PathScope(const std::string& path);
        ~PathScope();
        PathScope(const PathScope&) = delete;
        PathScope& operator=(const PathScope&) = delete;

    private:
        const std::string* m_saved;
    };

    const json* m_j;
    std::string m_path;
};

/// One problem found by a Collector.
struct Problem {
    std::string path;
    std::string message; // "expected a string, got integer"; "missing"
    bool missing = false;
};

/// Reads on after a problem: each check records it and returns nullptr/false, leaving
/// the caller's default in place.
class Collector {
public:
    const std::vector<Problem>& problems() const noexcept { return m_problems; }

    void add(const std::string& path, const std::string& message) {
        m_problems.push_back({path, message});
    }
    void wrong_type(const std::string& path, Kind kind, const json& got);

    /// The member `key` of `object` when present and of `kind`; records "missing" (when
    /// required) or the wrong type otherwise.
    const json* member(const json& object, std::string_view key, const std::string& path, Kind kind,
                       bool required);
    bool string(const json& object, std::string_view key, const std::string& path, std::string& out,
                bool required);
    bool integer(const json& object, std::string_view key, const std::string& path, long long& out,
                 bool required);
    /// Present: true, and every string element (a wrong element is recorded and skipped).
    bool strings(const json& object, std::string_view key, const std::string& path,
                 std::vector<std::string>& out);
    /// A string, or absent/null (nullopt).
    std::optional<std::string> optional_string(const json& object, std::string_view key,
                                               const std::string& path, const char* expected_text);

private:
    std::vector<Problem> m_problems;
};

/// The members of `object` whose names are not in `known`, with their dotted paths
/// ("capabilities.vendor"), in document order.
std::vector<std::pair<std::string, const json*>>
unknown_members(const json& object, const std::string& path,
                std::initializer_list<std::string_view> known);

} // namespace switchyard::jsonread
